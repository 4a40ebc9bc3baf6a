"""How the long pair tests read `aftershock run --workers 2` (tests/shards.py): each shard's
lines unprefixed and kept together, pytest's counts summed over the shards."""

from tests import shards


def test_each_shards_lines_stay_together_and_the_counts_add_up():
    stderr = "\n".join([
        "aftershock: 2 workers, each its own cluster; reports in r",
        "[1/2] FAILED features/a.feature::test_x[faulty] - B1: VIOLATED: pod/ns/p",
        "[2/2] ===== 4 passed, 9 deselected in 80.1s =====",
        "[1/2]   B1: VIOLATED: kept at most 3 pods",
        "[1/2] ===== 3 failed, 4 passed, 8 deselected in 91.5s =====",
    ])
    read = shards.read(1, "matrix\n", stderr)
    lines = read.stdout.splitlines()
    assert lines[:2] == ["FAILED features/a.feature::test_x[faulty] - B1: VIOLATED: pod/ns/p",
                         "  B1: VIOLATED: kept at most 3 pods"]  # shard 1's block, whole
    assert "aftershock: 2 workers, each its own cluster; reports in r" in lines
    assert lines[-1] == "matrix"
    assert (read.counts["failed"], read.counts["passed"], read.counts["deselected"]) == (3, 8, 17)
    assert read.returncode == 1


def test_a_shard_that_never_summed_up_adds_nothing():
    read = shards.read(2, "", "[1/2] INTERNALERROR> boom\n[2/2] ==== 1 passed in 3.0s ====")
    assert read.counts == {"passed": 1}


def test_a_run_without_shards_is_read_from_its_own_output():
    read = shards.read(1, "FAILED x\n==== 1 failed, 1 passed in 9.0s ====\n", "aftershock: ...")
    assert (read.counts["failed"], read.counts["passed"]) == (1, 1)
    assert "FAILED x" in read.stdout
