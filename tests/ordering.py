"""The order `make test` hands its tests to pytest-xdist's worksteal scheduler, which gives each
of its N workers one Nth of the collection in turn, then lets an idle worker steal the back half
of the longest queue. A long test that starts late leaves the other workers idle while it runs
(the noderecords pair, 144 s, ran alone for the last two minutes of a run). So the parts are
dealt by cost, heaviest first, and each part runs its heaviest first: what is stolen, and what
runs last, is short.

The costs are one worker's seconds as `make test --durations` measured them (2026-11-28, two
cores; again on 2026-12-02, four workers, those that ran here: KAI-scheduler's, Volcano's and
1.37.0's tests skip where their source or version is not at hand); a test not listed is given a
default by where it lives. They order the run and nothing
else: no test asserts a time."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

COSTS = {
    # runs only where KAI-scheduler's source tree is at hand (cached, or a mirror): 2026-11-30
    "tests/integration/test_thirdparty.py::test_kai_scheduler": 240,
    "tests/integration/test_thirdparty.py::test_volcano": 230,
    "tests/integration/test_scheduler_driver_profiles.py::test_each_faulty_gang_scheduler": 228,
    "tests/integration/test_scheduler_driver_profiles.py::test_the_faulty_gang_scheduler": 239,
    "tests/integration/test_setup_errors.py::test_a_profile_starts_without": 120,
    "tests/integration/test_scheduler_driver_profiles.py::test_the_faulty_gang_operator": 130,
    "tests/integration/test_scheduler_driver_profiles.py::test_the_preempts_in_vain": 149,
    "tests/integration/test_explore.py::test_explore_finds": 224,
    "tests/integration/test_operator_profiles.py::test_the_faulty_noderecords": 120,
    "tests/integration/test_operator_profiles.py::test_the_faulty_replicagroup": 161,
    "tests/integration/test_operator_profiles.py::test_the_faulty_storage": 116,
    "tests/integration/test_operator_profiles.py::test_the_statefulset": 83,
    "tests/integration/test_notebooks.py::test_stale_cache": 82,
    "tests/integration/test_status_writer.py::": 66,
    "tests/integration/test_thirdparty.py::test_sample_controller": 62,
    "tests/integration/test_recorder.py::test_after_a_burst": 24,
    "tests/integration/test_leaks.py::": 41,
    "tests/integration/test_generic_steps.py::test_a_kind_the_implementation": 60,
    "tests/integration/test_installed_library.py::": 156,
    "tests/integration/test_dra_device_taints.py::test_d14": 65,
    "tests/integration/test_dra_device_taints.py::test_1_37_0": 78,
    "tests/integration/test_gang_shared_claim.py::test_the_default": 82,
    "tests/integration/test_operator_profiles.py::test_the_replicaset": 34,
    "tests/integration/test_notebooks.py::test_drain_and_watch": 38,
    "tests/integration/test_versions.py::": 40,
    "tests/integration/test_verdict_inversion.py::test_a_capability_missing": 30,
    "tests/integration/test_notebooks.py::test_conformance_matrix": 68,
    "tests/integration/test_scheduler_driver_profiles.py::test_kube_scheduler_preempts": 49,
    "tests/integration/test_readiness.py::test_an_owner_of_a_kind": 44,
}
# What a fixture makes once per worker for the tests that ask for it (those go to one half):
# a finished run, the conflicting profiles' run, the session's embedded cluster.
SHARED = {"finished_run": 57, "conflict_run": 100, "aftershock_clusters": 20}
DEFAULTS = (("tests/integration/", 6.0), ("features/", 3.0), ("tests/unit/test_judges_fuzz", 6.0),
            ("", 0.1))

T = TypeVar("T")


def cost(nodeid: str) -> float:
    for prefix, seconds in COSTS.items():
        if nodeid.startswith(prefix):
            return seconds
    return next(seconds for prefix, seconds in DEFAULTS if nodeid.startswith(prefix))


def deal(items: Sequence[T], nodeid: Callable[[T], str],
         fixtures: Callable[[T], Sequence[str]], parts: int = 2) -> list[T]:
    """``items`` in ``parts`` parts of the counts worksteal hands out and near-equal cost, each
    heaviest first. The items that share a run (``SHARED``) go to one part together: it is
    made once there."""
    def shared(item: T) -> str | None:
        return next((name for name in SHARED if name in fixtures(item)), None)
    units: list[tuple[float, list[T]]] = [(cost(nodeid(item)), [item]) for item in items
                                          if shared(item) is None]
    for name, seconds in SHARED.items():
        together = [item for item in items if shared(item) == name]
        if together:
            units.append((seconds + sum(cost(nodeid(item)) for item in together), together))
    units.sort(key=lambda unit: -unit[0])
    dealt: list[list[tuple[float, T]]] = [[] for _ in range(max(parts, 1))]
    sums = [0.0] * len(dealt)
    for seconds, members in units:  # the heaviest unit to the lightest part
        side = sums.index(min(sums))
        dealt[side] += [(seconds / len(members), item) for item in members]
        sums[side] += seconds
    left = len(items)
    for index, part in enumerate(dealt):  # worksteal gives each worker len(left) // (workers left)
        want = left // (len(dealt) - index)
        later = dealt[index + 1:]
        while later and len(part) != want:  # the lightest items move; they hardly weigh
            if len(part) > want:
                lightest = min(range(len(part)), key=lambda i: part[i][0])
                min(later, key=len).append(part.pop(lightest))
            else:
                source = max(later, key=len)
                lightest = min(range(len(source)), key=lambda i: source[i][0])
                part.append(source.pop(lightest))
        left -= len(part)
    return [item for part in dealt for _, item in sorted(part, key=lambda pair: -pair[0])]
