"""A scenario's world on a running cluster, the same for pytest and for a notebook Session: nodes
reset to the shape, a fresh namespace, the whole history recorded from before the first step;
and its end, which always undoes everything the scenario did."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from aftershock.kube import api as kube
from aftershock.kube import door
from aftershock.providers.base import Cluster
from aftershock.scenario import Scenario, namespace_for
from aftershock.timeline.entry import KUBERNETES, SCHEDULERS
from aftershock.timeline.recorder import Recorder


def begin(cluster: Cluster, name: str, report_dir: Path | None = None, profile: Any = None,
          expected: Iterable[str] = (), records: Iterable[tuple[str, str]] = ()) -> Scenario:
    """``records``: more kinds to record ((API group, plural), a feature's `@records:` tag),
    recorded from the start, and once more when the implementation has installed its own."""
    info = cluster.info
    api = kube.api_client(info.kubeconfig, info.context)
    version = kube.server_version(api)  # the Kubernetes its verdicts are reached on
    reset = getattr(cluster, "reset_nodes", None)
    if reset is not None:
        reset()
    namespace = namespace_for(name)
    scenario = Scenario(cluster, api, namespace, name=name, report_dir=report_dir,
                        expected_violations=set(expected))
    scenario.remember(KUBERNETES, version)
    if profile is not None:
        scenario.remember("profile", profile)
    scenario.recorder = Recorder(scenario.timeline, info.kubeconfig, info.context,
                                 audit_log=getattr(cluster, "audit_log", None)).start()
    scenario.timeline.mark(f"kubernetes: {version}", **{KUBERNETES: version})
    schedulers = getattr(cluster, "schedulers", None)
    if schedulers:  # what the provider started: a fact for judges that excuse a recycle
        scenario.timeline.mark("schedulers: " + ", ".join(
            f"{s['name']} ({s['by']})" for s in schedulers), **{SCHEDULERS: schedulers})
    records = scenario.remember("records", list(records))
    if records:
        scenario.recorder.record(records)
    scenario.remember_undo(f"namespace/{namespace}",
                           {"do": "retire_namespace", "namespace": namespace})
    try:
        door.call(kube.core(api).create_namespace, {"metadata": {
            "name": namespace, "labels": {"aftershock.io/scenario": "true"}}})
        kube.wait_for_service_account(api, namespace)
    except BaseException:
        end(scenario)
        raise
    return scenario


def end(scenario: Scenario,
        before_namespace_goes: Callable[[Scenario], None] | None = None) -> list[str]:
    """Undo everything (every cleanup runs), remove the namespace and what the scenario made
    outside it, stop recording and save the history. Returns what could not be undone."""
    failures = scenario.close()
    try:
        if before_namespace_goes is not None:
            before_namespace_goes(scenario)
        try:
            kube.retire_namespace(scenario.api, scenario.namespace)
            scenario.forget_undo(f"namespace/{scenario.namespace}")
        except Exception as exc:
            failures.append(f"namespace/{scenario.namespace}: {exc}")
    finally:
        if scenario.recorder is not None:
            scenario.recorder.stop()
    save(scenario)
    scenario.api.close()
    return failures


JUDGEMENTS = "judgements.jsonl"


NAME_LIMIT = 120


def report_dir_name(nodeid: str) -> str:
    """A scenario's report dir under its run dir, from its pytest node id. A long one is cut
    and ends in a hash of the whole: two profiles' runs of one long-named scenario differ only
    in their last characters, and once shared a dir."""
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", nodeid.split("::")[-1])
    if len(name) <= NAME_LIMIT:
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:8]
    return f"{name[:NAME_LIMIT - 40]}-{digest}-{name[-30:]}"  # the end names the profile


def save(scenario: Scenario) -> None:
    """timeline.jsonl (loadable with aftershock.timeline.load), every verdict's evidence, and
    every judgement as plain data (what `aftershock judge` judges again)."""
    if scenario.report_dir is None:
        return
    scenario.timeline.save(scenario.report_dir)
    if scenario.verdicts:
        text = "\n\n".join(verdict.explain() for verdict in scenario.verdicts)
        (scenario.report_dir / "verdicts.txt").write_text(text + "\n")
    if scenario.judgements:
        with (scenario.report_dir / JUDGEMENTS).open("w") as out:
            for record in scenario.judgements:
                out.write(json.dumps(record, separators=(",", ":")) + "\n")
