"""When a scenario's namespace goes, the implementation under test has stopped: a finalizer of
its own on a pod (Kueue's on every pod it manages) would hold the pod for ever, so it is removed
with the scenario's own; Kubernetes' own controllers still run and keep theirs."""

from aftershock.kube.api import _kubernetes_own


def test_kubernetes_own_finalizers_are_left_to_its_controllers():
    assert _kubernetes_own("batch.kubernetes.io/job-tracking")
    assert _kubernetes_own("kubernetes.io/pvc-protection")
    assert _kubernetes_own("foregroundDeletion")


def test_an_implementations_or_a_scenarios_finalizer_is_released():
    assert not _kubernetes_own("kueue.x-k8s.io/managed")
    assert not _kubernetes_own("aftershock.io/hold")
    assert not _kubernetes_own("example.com/kubernetes.io")
