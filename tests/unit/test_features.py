"""Feature files are checked before anything runs: unknown steps and bad Gherkin are one
message naming file:line; every registered pattern matches only its own wording."""

import re
from pathlib import Path

import pytest

import aftershock.bdd.steps  # noqa: F401  (fills the registry)
from aftershock.bdd.runner import Labelled
from aftershock.errors import UserError
from aftershock.features import check_steps
from aftershock.grammar import REGISTRY, ambiguity, given, match_step


def _write(tmp_path, body: str):
    path = tmp_path / "x.feature"
    path.write_text(body)
    return path


def test_known_steps_pass(tmp_path):
    path = _write(tmp_path, "Feature: f\n  Scenario: s\n    Given a cluster with 3 nodes\n")
    check_steps(path)


def test_typo_names_file_line_and_closest_step(tmp_path):
    path = _write(tmp_path, "Feature: f\n  Scenario: s\n    Given a cluster with 3 nodes\n"
                            "    When I cordon and drian the node running a pod of web\n")
    with pytest.raises(UserError) as caught:
        check_steps(path)
    message = str(caught.value)
    assert re.match(r".*x\.feature:4: unknown step 'When I cordon and drian", message)
    assert "'I cordon and drain the node running a pod of <name>'" in message


def test_outline_examples_are_checked_per_row(tmp_path):
    path = _write(tmp_path, "Feature: f\n  Scenario Outline: s\n"
                            "    Given a cluster with <n> nodes\n"
                            "\n    Examples:\n      | n |\n      | 3 |\n      | many |\n")
    with pytest.raises(UserError, match=r"x\.feature:3: unknown step 'Given a cluster with many"):
        check_steps(path)


def test_malformed_gherkin_names_the_line(tmp_path):
    path = _write(tmp_path, "Feature: f\n  Scenario: s\n    Given a cluster with 3 nodes\n"
                            "    this line has no keyword\n")
    with pytest.raises(UserError, match=r"x\.feature:4: malformed feature"):
        check_steps(path)


@pytest.mark.parametrize("definition", REGISTRY, ids=lambda d: d.pattern)
def test_each_pattern_matches_only_itself(definition):
    sample = re.sub(r"{(\w+):d}", "7", definition.pattern)
    sample = re.sub(r"{(\w+):Ordinal}", "3rd", sample)
    sample = re.sub(r"{(\w+):Ref}", "raycluster/web", sample)
    sample = re.sub(r"{(\w+):Comparison}", "status.readyReplicas >= 1", sample)
    sample = re.sub(r"{(\w+)(:Name|:w)?}", "web", sample)
    found = match_step(sample)
    assert found is not None and found[0] is definition
    assert ambiguity(sample) is None  # no other definition matches it either


def test_a_step_two_definitions_match_is_refused_naming_both(tmp_path):
    path = _write(tmp_path, "Feature: f\n  Scenario: s\n    Given a cluster with 3 nodes\n")

    @given("a cluster with {count:d} {what}")
    def a_cluster_of_things(scenario, count, what):
        """A definition that also matches 'a cluster with 3 nodes'."""

    try:
        with pytest.raises(UserError) as caught:
            check_steps(path)
    finally:
        REGISTRY.pop()
    message = str(caught.value)
    assert re.match(r".*x\.feature:3: ambiguous step .a cluster with 3 nodes.: it matches 2",
                    message)
    assert "Given a cluster with <count> <what> (tests.unit.test_features:" in message
    assert "Given a cluster with <count> nodes (aftershock.bdd.steps.cluster:" in message
    check_steps(path)  # the registry as it was: one match


@pytest.mark.parametrize(("text", "function"), [
    ("at no point did the replica group web have more than 5 live pods",
     "group_never_more_than"),
    ("at no point did web have more than 5 live pods", "never_more_than"),
    ("I scale the replica group web to 5", "scale_group"),
    ("I scale the Deployment web to 5", "scale"),
    ("the pod watch of the implementation is delayed by 2 seconds", "delay_watch"),
    ("a pod solo labelled a=b", "a_labelled_pod"),
])
def test_wordings_that_look_alike_reach_the_right_step(text, function):
    found = match_step(text)
    assert found is not None and found[0].func.__name__ == function


@pytest.fixture
def block_step():
    @given("I store the manifest:")
    def store_manifest(scenario, docstring):
        """A step that takes a YAML block under it."""
    yield
    REGISTRY.pop()


BLOCKED = ('Feature: f\n  Scenario: s\n    Given a cluster with 3 nodes\n'
           '    Given I store the manifest:\n      """\n{}      """\n')


def test_a_yaml_block_under_a_step_that_takes_one_is_checked_at_collection(tmp_path,
                                                                           block_step):
    check_steps(_write(tmp_path, BLOCKED.format("      kind: ConfigMap\n"
                                                "      metadata: {name: c}\n")))
    check_steps(_write(tmp_path, BLOCKED.format("      kind: A\n      ---\n      kind: B\n")))
    bad = _write(tmp_path, BLOCKED.format("      kind: ConfigMap\n      metadata: {name: c\n"))
    with pytest.raises(UserError, match=r"x\.feature:7: the YAML block does not parse"):
        check_steps(bad)
    scalar = _write(tmp_path, BLOCKED.format("      just words\n"))
    with pytest.raises(UserError, match=r"x\.feature:6: the YAML block must hold a map"):
        check_steps(scalar)


def test_a_block_missing_or_not_taken_names_the_step_line(tmp_path, block_step):
    missing = _write(tmp_path, "Feature: f\n  Scenario: s\n    Given I store the manifest:\n")
    with pytest.raises(UserError, match=r"x\.feature:3: this step takes a YAML block under it"):
        check_steps(missing)
    extra = _write(tmp_path, 'Feature: f\n  Scenario: s\n    Given a cluster with 3 nodes\n'
                             '      """\n      kind: X\n      """\n')
    with pytest.raises(UserError, match=r"x\.feature:3: this step takes no text block"):
        check_steps(extra)


def test_a_condition_step_yields_to_another_whose_words_fit_when_its_own_are_no_phrase():
    """"within 30 seconds <condition>" also matches "within 30 seconds raycluster/web
    matches:"; with no such condition, the matching step is the other one. A condition with a
    typo, which no other step takes, still gets the condition's own message."""
    assert match_step("within 30 seconds raycluster/web matches:")[0].check == "matches_within"
    assert match_step("within 30 seconds configmap/c is gone")[0].check == "eventually"
    assert match_step("within 30 seconds 3 pods of web are Runing")[0].check == "eventually"


def test_pytest_bdd_runs_the_step_collection_matched():
    """pytest-bdd asks each step parser whether it matches; the one whose words are no known
    condition says no where another definition takes them, as collection decided. Before, the
    generic "within N seconds <condition>" ran "within 120 seconds every pod that was on the
    rebooted node runs again" and failed on an unknown condition."""
    text = "within 120 seconds every pod that was on the rebooted node runs again (D8)"
    takers = [d for d in REGISTRY if Labelled(d.pattern, d).is_matching(text)]
    assert [d.check for d in takers] == ["ran_again"]
    typo = "within 30 seconds 3 pods of web are Runing"
    assert [d.check for d in REGISTRY if Labelled(d.pattern, d).is_matching(typo)] == [
        "eventually"]


def test_a_field_comparison_that_cannot_be_read_names_file_line_and_what_was_expected(tmp_path):
    path = _write(tmp_path, "Feature: f\n  Scenario: s\n    Given a cluster with 3 nodes\n"
                            "    Then at no point did deployment/web have status.x[a] > 2\n")
    with pytest.raises(UserError, match=r"x\.feature:4: 'status\.x\[a\]': cannot read '\[a\]' "
                                        r"\(expected \[0\] or \[field=value\]\)"):
        check_steps(path)


@pytest.mark.parametrize("actor", ["the implementation", "implementation", "the scheduler",
                                   "the replicaset controller", "the garbage collector",
                                   "system:serviceaccount:{namespace}:implementation"])
def test_an_actor_the_run_knows_is_accepted(tmp_path, actor):
    path = _write(tmp_path, "Feature: f\n  Scenario: s\n    Given a cluster with 3 nodes\n"
                            f"    Then no pod of web was deleted by {actor}\n")
    check_steps(path)


def test_an_actor_that_names_nobody_is_refused_naming_the_actors_known(tmp_path):
    """Issue 64, item 12: 'by the deschedular' passed, matching no request of anyone."""
    path = _write(tmp_path, "Feature: f\n  Scenario: s\n    Given a cluster with 3 nodes\n"
                            "    Then no pod of web was deleted by the deschedular\n")
    with pytest.raises(UserError, match=r"x\.feature:4: unknown actor 'the deschedular': the "
                                        r"implementation, .*the scheduler.*replicaset"):
        check_steps(path)
    path = _write(tmp_path, "Feature: f\n  Scenario: s\n    Given a cluster with 3 nodes\n"
                            "    Then no pod of web was deleted by the replicaset controler\n")
    with pytest.raises(UserError, match="did you mean 'the replicaset controller'"):
        check_steps(path)


REPO = Path(__file__).resolve().parents[2]
FINDINGS = sorted((REPO / "docs" / "findings").glob("*.feature"))


@pytest.mark.parametrize("path", FINDINGS, ids=lambda p: p.name)
def test_every_finding_replays_as_its_page_says(path):
    """Each finding's feature is one the review replays at its commit: its steps all known,
    and every profile its Replay lines name shipped with aftershock."""
    check_steps(path)
    named = re.findall(r"--profile (\S+\.yaml)", path.read_text())
    assert named, f"{path.name} names no profile to replay it with"
    for profile in named:
        assert (path.parents[2] / profile).is_file(), profile


SHIPPED = sorted((REPO / "features").rglob("*.feature"))


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_shipped_feature_is_checked_as_its_collection_would_check_it(path):
    """Some shipped features run only when asked (a scale run, kind): their steps, phrases and
    property labels are still checked here, as collecting them would."""
    check_steps(path)


def test_an_actor_resolves_to_the_username_the_audit_log_records():
    from aftershock.checks.attribution import username

    def mine() -> str:
        return "system:serviceaccount:ns-1:implementation"

    assert username("the implementation", mine, "ns-1") == mine()
    assert username("implementation", mine, "ns-1") == mine()
    assert username("the scheduler", mine, "ns-1") == "system:kube-scheduler"
    assert username("the replicaset controller", mine, "ns-1") == \
        "system:serviceaccount:kube-system:replicaset-controller"
    assert username("system:serviceaccount:{namespace}:x", mine, "ns-1") == \
        "system:serviceaccount:ns-1:x"
