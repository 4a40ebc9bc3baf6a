"""An explore campaign as a Kubernetes Indexed Job, on a kind cluster here: the shipped
deploy/explore-indexed-job.yaml, its two Jobs applied as they are but for the knobs it names
(the shards, the budget, more explore options), the run dirs taken out and merged.

1. The container engine: the one that answers, else the managed one started (and stopped at the
   end: only if this script started it).
2. A kind cluster of one worker (clusters/one-node-fast-scheduler.yaml), opened through the
   harness's own door (`providers.clusters.open_cluster`), so it is recorded and `aftershock
   cluster gc` removes it if this script is killed.
3. The image that runs aftershock (`containers/images/harness.py`), built unless cached, loaded
   into the nodes.
4. runs/ made in the worker's node-data folder (the kind config's extraMount of
   /var/lib/aftershock/node-data), owned by the pods' user; the planning Job applied and waited
   for (`--plan-only`), then the Indexed Job of --shards shards (`--from` the planning); each
   waited for on the Job's own conditions (a watch).
5. The run dirs copied out with every pod's log, `aftershock merge` of the planning and the
   shards into one report; the figures printed: wall time of each part, plans per shard,
   findings, whether the shards together ran what one whole run of the planning runs (its
   first --max-plans plans, each once), the merged report's path.

Everything it started is removed on exit, on Ctrl-C and on SIGTERM: the cluster (its pods with
it), the engine if it started it.

    nice -n 10 .venv/bin/python benchmarks/explore_indexed_job.py [--shards 2] [--max-plans 12]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import sys
import time
from pathlib import Path

import yaml
from kubernetes import client, watch
from urllib3.exceptions import ProtocolError

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # run as a file: the checkout's aftershock, not an installed one
    sys.path.insert(0, str(REPO))

import aftershock.providers  # noqa: E402, F401  (every provider and the managed engine's hook)
from aftershock.containers import engine, managed  # noqa: E402
from aftershock.containers.images import harness  # noqa: E402
from aftershock.kube import api as kube  # noqa: E402
from aftershock.kube.manifests import apply_manifest  # noqa: E402
from aftershock.providers.base import ClusterRequest  # noqa: E402
from aftershock.providers.clusters import open_cluster  # noqa: E402
from aftershock.runs.merge import merge  # noqa: E402

MANIFEST = REPO / "deploy" / "explore-indexed-job.yaml"
SHAPE = REPO / "clusters" / "one-node-fast-scheduler.yaml"
NAMESPACE = "default"
STEP = "aftershock.io/step"
USER = harness.USER


def say(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def documents() -> dict[str, dict]:
    """The manifest's Jobs by their step label (plan, shards)."""
    docs = [doc for doc in yaml.safe_load_all(MANIFEST.read_text()) if doc]
    return {doc["metadata"]["labels"][STEP]: doc for doc in docs}


def with_knobs(job: dict, shards: int, budget: str, extra: str) -> dict:
    """The Job with the knobs the manifest names set: SHARDS, completions and parallelism;
    BUDGET; EXTRA. Nothing else changes."""
    spec = job["spec"]
    container = spec["template"]["spec"]["containers"][0]
    values = {"SHARDS": str(shards), "BUDGET": budget, "EXTRA": extra}
    for variable in container.get("env", []):
        if variable["name"] in values:
            variable["value"] = values[variable["name"]]
    if spec.get("completionMode") == "Indexed":
        spec["completions"] = spec["parallelism"] = shards
    return job


def wait_job(api: client.ApiClient, name: str, limit: float) -> str:
    """Until job/<name> has its Complete or Failed condition (read, then watched from there);
    returns which. A watch the API server ends (a timeout, a restart, a broken connection) is
    started again from a fresh read."""
    batch = client.BatchV1Api(api)
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        try:
            job = batch.read_namespaced_job(name, NAMESPACE)
            if finished(job):
                return finished(job)
            stream = watch.Watch()
            left = max(1, int(min(300, deadline - time.monotonic())))
            for event in stream.stream(batch.list_namespaced_job, NAMESPACE,
                                       field_selector=f"metadata.name={name}",
                                       resource_version=job.metadata.resource_version,
                                       timeout_seconds=left):
                if finished(event["object"]):
                    stream.stop()
                    return finished(event["object"])
        except (ProtocolError, client.exceptions.ApiException, OSError) as exc:
            if isinstance(exc, client.exceptions.ApiException) and exc.status not in (
                    410, 500, 503, 504):
                raise
            say(f"job/{name}: the watch ended ({type(exc).__name__}); reading it again")
    raise TimeoutError(f"job/{name} neither completed nor failed within {limit:.0f}s")


def finished(job) -> str:
    """'Complete' or 'Failed' when the Job has that condition, else ''."""
    for condition in job.status.conditions or []:
        if condition.type in ("Complete", "Failed") and condition.status == "True":
            return condition.type
    return ""


def save_logs(api: client.ApiClient, job: str, into: Path) -> None:
    core = client.CoreV1Api(api)
    into.mkdir(parents=True, exist_ok=True)
    for pod in core.list_namespaced_pod(NAMESPACE, label_selector=f"job-name={job}").items:
        with contextlib.suppress(client.exceptions.ApiException):
            text = core.read_namespaced_pod_log(pod.metadata.name, NAMESPACE)
            (into / f"{pod.metadata.name}.log").write_text(text)


def run_job(api: client.ApiClient, job: dict, out: Path, limit: float) -> tuple[str, float]:
    name = job["metadata"]["name"]
    began = time.monotonic()
    apply_manifest(api, job, NAMESPACE)
    say(f"job/{name} applied; waiting for it")
    outcome = wait_job(api, name, limit)
    seconds = time.monotonic() - began
    save_logs(api, name, out / "logs")
    say(f"job/{name}: {outcome} in {seconds:.0f}s")
    return outcome, seconds


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shards", type=int, default=2)
    parser.add_argument("--max-plans", type=int, default=12,
                        help="the first plans of the planning, split between the shards")
    parser.add_argument("--budget", default="20m", help="each shard's (default: 20m)")
    parser.add_argument("--out", type=Path, help="where the run dirs and the merged report go "
                        "(default: reports/indexed-job-<time>)")
    args = parser.parse_args()
    out = (args.out or REPO / "reports" / time.strftime("indexed-job-%Y%m%d-%H%M%S")).resolve()
    signal.signal(signal.SIGTERM, _interrupt)
    # Ctrl-C ends it as SIGTERM does, even started in the background of a script (where SIGINT
    # comes ignored, and Python would keep ignoring it)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    began = time.monotonic()
    started_engine = False
    cluster = None
    figures: dict[str, float] = {}
    try:
        if not engine.ask().ok:
            say("no container engine answers: starting the managed one")
            managed.up()
            started_engine = True
        part = time.monotonic()
        cluster = open_cluster(ClusterRequest(provider="kind", shape=str(SHAPE)), REPO)
        figures["cluster up"] = time.monotonic() - part
        say(f"kind cluster {cluster.name} up in {figures['cluster up']:.0f}s")
        part = time.monotonic()
        image = harness.load(cluster, say)
        figures["image built or found, and loaded"] = time.monotonic() - part
        node = cluster.shape.node_names[0]
        runs = cluster.paths.host.node_dir(node) / "runs"
        runs.mkdir()
        os.chown(runs, USER, USER)
        jobs = documents()
        for job in jobs.values():
            job["spec"]["template"]["spec"]["containers"][0]["image"] = image
        with kube.api_client(cluster.paths.kubeconfig, cluster.info.context) as api:
            outcome, figures["planning job"] = run_job(
                api, with_knobs(jobs["plan"], args.shards, args.budget, ""), out, 3600)
            if outcome != "Complete":
                raise SystemExit(f"the planning Job failed: see {out / 'logs'}")
            extra = f"--max-plans {args.max_plans}" if args.max_plans else ""
            outcome, figures["indexed job"] = run_job(
                api, with_knobs(jobs["shards"], args.shards, args.budget, extra), out, 6 * 3600)
        shutil.copytree(runs, out, dirs_exist_ok=True)
    finally:
        if cluster is not None:
            part = time.monotonic()
            cluster.down()
            say(f"kind cluster {cluster.name} removed in {time.monotonic() - part:.0f}s")
        if started_engine:
            managed.down()
            say("the managed engine stopped (started by this script)")
    figures["wall, all in"] = time.monotonic() - began
    report(out, args.shards, outcome, figures, args.max_plans)
    return 0 if outcome == "Complete" else 1


def whole(out: Path, max_plans: int | None) -> str:
    """Whether the merged shards ran what one whole exploration of the planning runs: its
    first --max-plans plans (all of them without it), each once."""
    plans = json.loads((out / "planned" / "planned.json").read_text())["plans"][:max_plans]
    rows = [json.loads(line) for line in (out / "merged" / "plans.jsonl").read_text()
            .splitlines() if line.strip()]
    ran = sorted(row["order"] for row in rows if row.get("kind") != "reference")
    same = ran == list(range(len(plans))) and all(
        row["step"] == plans[row["order"]]["step"] for row in rows
        if row.get("kind") != "reference")
    return (f"the merged shards ran the planning's first {len(plans)} plans, each once, as one "
            f"whole run would: {'yes' if same else 'NO'}")


def report(out: Path, shards: int, outcome: str, figures: dict[str, float],
           max_plans: int | None = None) -> None:
    dirs = [out / "planned", *(out / f"shard-{index}" for index in range(shards))]
    present = [d for d in dirs if (d / "summary.json").is_file()]
    merged = out / "merged"
    merge(present, merged)
    summary = json.loads((merged / "summary.json").read_text())
    planned = json.loads((out / "planned" / "summary.json").read_text())
    print(f"Indexed Job of {shards} shards: {outcome}; run dirs in {out}")
    for name, seconds in figures.items():
        print(f"  {name:<34} {seconds:7.0f}s")
    print(f"  planning: {planned['plans_generated']} plans from the reference runs, "
          f"{planned['pruned']} pruned")
    for shard in summary["shards"]:
        if shard["shard"]:
            print(f"  shard {shard['shard']:<5} {shard['plans_run']:>3} plans run in "
                  f"{shard['elapsed']:.0f}s ({shard['run']})")
    missing = [str(d) for d in dirs if d not in present]
    if missing:
        print(f"  no summary (a shard that failed): {', '.join(missing)}")
    per = summary["seconds_per_plan"]
    print(f"  merged: {summary['plans_run']} plans run, {summary['findings']} findings "
          f"({summary['bugs']} bugs, {summary['flaky']} flaky), {summary['errors']} errors; "
          f"time per plan mean {per['mean']}s, p50 {per['p50']}s, max {per['max']}s")
    print(f"  {whole(out, max_plans)}")
    print(f"  merged report: {merged / 'summary.json'}")


if __name__ == "__main__":
    sys.exit(main())
