"""The steps that judge every recorded state from a step on, against a real controller: the
reference status writer's correct variant writes a ConfigMap's state once, its faulty one in a
loop (ready and busy in turn, 20 times a second). The one-moment check ("within ... matches")
passes both; "for N seconds ... matches", "changed at most N times", "from now on ... never
has" (with and without "until") and "while ..., ... never has" pass the correct one and are
VIOLATED on the faulty one."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import shards

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.cluster


def _verdicts(run: Path, profile: str, scenario: str) -> str:
    """The scenario's verdicts, in whichever shard of the run it ran."""
    (found,) = [f for f in run.glob("*/*/verdicts.txt") if scenario in f.parent.name
                and profile in f.parent.name]
    return found.read_text()


def test_a_state_written_in_a_loop_is_caught_and_one_written_once_passes(tmp_path):
    run = tmp_path / "run"
    result = shards.run(
        ["features/harness/status_writer.feature", "--profile",
         "profiles/statuswriter-correct.yaml", "--profile", "profiles/statuswriter-faulty.yaml",
         "--run-dir", str(run), "-p", "no:cacheprovider"], REPO, timeout=600)
    assert (result.counts["failed"], result.counts["passed"]) == (6, 6), result.stdout[-3000:]
    for profile in ("statuswriter-correct", "statuswriter-faulty"):
        for scenario in ("holds", "stays_quiet", "never_busy_again", "job_is_done",
                         "i_say_so", "on_hold"):
            assert "matches_within: PASS" in _verdicts(run, profile, scenario)
    assert "matches_for: PASS" in _verdicts(run, "statuswriter-correct", "holds")
    assert "changed_at_most: PASS" in _verdicts(run, "statuswriter-correct", "stays_quiet")
    held = _verdicts(run, "statuswriter-faulty", "holds")
    assert "matches_for: VIOLATED" in held and "data.state: 'busy', expected 'ready'" in held
    quiet = _verdicts(run, "statuswriter-faulty", "stays_quiet")
    assert "changed_at_most: VIOLATED" in quiet and "more than 1" in quiet
    for scenario, check in (("never_busy_again", "never_has_from"),
                            ("job_is_done", "never_has_from"), ("i_say_so", "never_has_from"),
                            ("on_hold", "never_while")):
        assert f"{check}: PASS" in _verdicts(run, "statuswriter-correct", scenario)
        faulty = _verdicts(run, "statuswriter-faulty", scenario)
        assert f"{check}: VIOLATED" in faulty and "data.state == busy" in faulty, faulty
    # the busy state patched with phase=done is past the scope's end: not judged
    done = _verdicts(run, "statuswriter-correct", "job_is_done")
    assert "until configmap/job had data.phase == done" in done, done
    said = _verdicts(run, "statuswriter-correct", "i_say_so")
    assert "until the step 'I patch configmap/job' began" in said, said
