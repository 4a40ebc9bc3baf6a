"""A set-up failure is an error, never a verdict (issue 43, item 13). On 86c0d82 a profile whose
CRD could not become Established (a short name an earlier profile's CRD still held) ended as
"RuntimeError: customresourcedefinition/... not Established within 30s", the cause unnamed, and
its matrix row read UNKNOWN everywhere, as if the history had a gap."""

from __future__ import annotations

import itertools

import pytest
from kubernetes import client

from aftershock.kube import manifests
from aftershock.report import matrix, page


def _crd(name: str, short: list[str], accepted: bool = True) -> client.V1CustomResourceDefinition:
    plural, group = name.split(".", 1)
    names = client.V1CustomResourceDefinitionNames(kind=plural.capitalize(), plural=plural,
                                                   short_names=short)
    conditions = [client.V1CustomResourceDefinitionCondition(
        type="NamesAccepted", status="True" if accepted else "False",
        reason="NoConflicts" if accepted else "ShortNamesConflict",
        message="no conflicts found" if accepted else f'"{short[0]}" is already in use')]
    if not accepted:
        conditions.append(client.V1CustomResourceDefinitionCondition(
            type="Established", status="False", reason="NotAccepted",
            message="not all names are accepted"))
    return client.V1CustomResourceDefinition(
        metadata=client.V1ObjectMeta(name=name),
        spec=client.V1CustomResourceDefinitionSpec(group=group, names=names, scope="Namespaced",
                                                   versions=[]),
        status=client.V1CustomResourceDefinitionStatus(
            accepted_names=names if accepted else client.V1CustomResourceDefinitionNames(
                kind=plural.capitalize(), plural=plural), stored_versions=[],
            conditions=conditions))


class _Extensions:
    """What the API server answers about two CRDs of one group that ask for one short name."""

    def __init__(self):
        self.held = _crd("widgets.conflict.aftershock.io", ["wd"])
        self.blocked = _crd("gadgets.conflict.aftershock.io", ["wd"], accepted=False)

    def read_custom_resource_definition(self, name):
        return self.blocked

    def list_custom_resource_definition(self, **_):
        return client.V1CustomResourceDefinitionList(items=[self.held, self.blocked])


def test_a_kind_never_established_names_the_kind_that_holds_its_name(monkeypatch):
    clock = itertools.count(0, 10.0)
    monkeypatch.setattr(manifests.time, "monotonic", lambda: next(clock))
    monkeypatch.setattr(manifests.time, "sleep", lambda _: None)
    with pytest.raises(Exception) as failed:
        manifests._wait_established(_Extensions(), "gadgets.conflict.aftershock.io")
    message = str(failed.value)
    assert "its names were not accepted (ShortNamesConflict" in message, message
    assert '"wd" held by customresourcedefinition/widgets.conflict.aftershock.io' in message


def test_labels_a_set_up_failure_kept_from_being_judged_are_errors_not_unknown():
    outcomes = matrix.scenario_outcomes([], set(), ["R5", "R1"], error="SetupFailed: ...")
    assert outcomes == {"R5": matrix.ERROR, "R1": matrix.ERROR}
    judged_first = matrix.scenario_outcomes([("R1", "pass")], set(), ["R1", "R5"],
                                            error="StepFailed: ...")
    assert judged_first == {"R1": matrix.PASS, "R5": matrix.ERROR}
    assert matrix.scenario_outcomes([], {"R1"}, ["R1"], error="x") == {"R1": matrix.ERROR}
    assert matrix.scenario_outcomes([], {"R1"}, ["R1"]) == {"R1": matrix.MISSED}


def test_the_matrix_shows_an_error_row_with_its_cause(tmp_path):
    row = matrix.Row("conflict-b", "features/x.feature::test_up", {"R5": matrix.ERROR},
                     error="SetupFailed: customresourcedefinition/gadgets... not Established")
    matrix.append(tmp_path, row)
    rows = matrix.load(tmp_path)
    assert rows[0].error == row.error
    text = "\n".join(matrix.text(rows))
    assert "error" in text and "errors (no verdict):" in text and "gadgets" in text
    assert "Errors (no verdict)" in matrix.markdown(rows)
    assert "gadgets" in page.render(tmp_path, rows)
    worst = matrix.cells([row, matrix.Row("conflict-b", "y", {"R5": matrix.UNKNOWN})])[2]
    assert worst[(("conflict-b", "-"), "R5")] == matrix.ERROR


def test_a_run_that_stopped_on_a_set_up_failure_is_judged_again_as_an_error():
    """The saved run of a profile whose CRD was never Established: no verdict, an error in the
    matrix with its cause, also when `aftershock judge` judges it again (it used to be UNKNOWN
    everywhere)."""
    from aftershock.timeline.entry import MARK, Entry
    from tests.verdict_corpus import keep

    history = [Entry(0, 0.0, 1e9, MARK, detail="recording", extra={"recording": {"pods": "v1"}})]
    keep("a-set-up-failure", history, None, ["R5"], {}, "unknown",
         "the review of issue 43, item 13",
         error="SetupFailed: customresourcedefinition/gadgets.conflict.aftershock.io not "
               "Established within 30s: its names were not accepted (ShortNamesConflict: "
               '"wd" is already in use): "wd" held by '
               "customresourcedefinition/widgets.conflict.aftershock.io")
