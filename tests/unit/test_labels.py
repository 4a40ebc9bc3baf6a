import pytest

from aftershock.kube import labels

CONTROL_PLANE = {"node-role.kubernetes.io/control-plane": "", "kubernetes.io/os": "linux"}
WORKER = {"kubernetes.io/os": "linux", "tier": "gpu"}


def test_existence_and_equality_forms_select_as_kubectl_does():
    workers = labels.parse("!node-role.kubernetes.io/control-plane")
    assert labels.matches(workers, WORKER)
    assert not labels.matches(workers, CONTROL_PLANE)
    assert labels.matches(labels.parse("tier=gpu,kubernetes.io/os"), WORKER)
    assert not labels.matches(labels.parse("tier==gpu"), CONTROL_PLANE)
    assert labels.matches(labels.parse("tier!=gpu"), CONTROL_PLANE)  # absent: not equal
    assert not labels.matches(labels.parse("tier!=gpu"), WORKER)
    assert labels.matches(labels.parse(""), None)  # the empty selector selects everything


@pytest.mark.parametrize("text", ["tier in (gpu,cpu)", "=gpu", "!", "a b=c"])
def test_forms_it_does_not_read_are_refused_by_name(text):
    with pytest.raises(ValueError, match=r"cannot read .* as a label requirement"):
        labels.parse(text)
