"""`aftershock explore --profile P --workload W [--budget 30m] [--seed N]`: the command's
inputs checked and bounded before anything starts, the cluster owned for the run, a progress
line per plan and a summary table at the end."""

# Imports inside functions: start-up time, as in the rest of the command line: `explore`
# imports the explorer (the step library, the notebook Session) only when it runs.

from __future__ import annotations

import argparse
import json
import re
import signal
import sys
import time
from pathlib import Path

from aftershock.errors import UserError

UNITS = {"s": 1, "m": 60, "h": 3600}
MAX_BUDGET = 24 * 3600
MAX_DURATIONS = 5
# replays: at least explorer.MIN_REPLAYS (a finding replayed once or twice tells no bug from a
# flake); the explorer is imported only when a run starts
BOUNDS = {"references": (2, 10), "replays": (3, 50), "max_plans": (1, 10_000),
          "stall": (1, 120), "miss": (1, 120)}


def budget_seconds(text: str) -> float:
    """'30m', '90s', '1h', '45' (seconds) → seconds, at most a day."""
    found = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smh]?)\s*", text)
    if found is None:
        raise UserError(f"--budget {text}: expected a duration such as 30m, 90s or 1h")
    seconds = float(found[1]) * UNITS[found[2] or "s"]
    if not 0 < seconds <= MAX_BUDGET:
        raise UserError(f"--budget {text}: between 1s and 24h")
    return seconds


def durations(text: str) -> tuple[float, ...]:
    """'4' or '1,4,10' (seconds) → (4.0,) or (1.0, 4.0, 10.0)."""
    try:
        found = tuple(dict.fromkeys(float(part) for part in text.split(",")))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text}: expected seconds, or several separated by commas (1,4,10)") from None
    if not 1 <= len(found) <= MAX_DURATIONS:
        raise argparse.ArgumentTypeError(f"{text}: between 1 and {MAX_DURATIONS} durations")
    return found


def plan_kinds(text: str) -> tuple[str, ...]:
    """'stale,node' → ('stale', 'node'): the kinds of plan to run, in explore's order."""
    from aftershock.explore.plans import KINDS  # imported when given: see the module's note

    asked = {part.strip() for part in text.split(",") if part.strip()}
    unknown = sorted(asked - set(KINDS))
    if unknown or not asked:
        raise argparse.ArgumentTypeError(
            f"{text}: expected one or more of {', '.join(KINDS)}, separated by commas")
    return tuple(kind for kind in KINDS if kind in asked)


def check_bounds(args) -> None:
    for name, (low, high) in BOUNDS.items():
        value = getattr(args, name)
        for one in value if isinstance(value, tuple) else (value,):
            if one is not None and not low <= one <= high:
                raise UserError(f"--{name.replace('_', '-')} {one:g}: between {low} and {high}")


def parse_shard(text: str):
    from aftershock.runs.shards import parse

    return parse(text)


def say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def run(args) -> int:
    from aftershock.explore.explorer import ExploreError, Explorer, Settings
    from aftershock.explore.plans import KINDS
    from aftershock.explore.workload import load
    from aftershock.machine.capabilities import Capability
    from aftershock.profile.load import load_profile
    from aftershock.providers.base import ClusterRequest
    from aftershock.providers.base import get as provider_named

    budget = budget_seconds(args.budget)
    check_bounds(args)
    shard = parse_shard(args.shard) if args.shard else None
    if args.plan_only and (args.plans_from or args.shard or args.workers > 1):
        raise UserError("--plan-only runs the reference runs and plans, alone: not with "
                        "--from, --shard or --workers")
    profile = load_profile(args.profile)
    if profile.start is None and not profile.watch_delay_target and profile.in_cluster is None:
        raise UserError("explore restarts the implementation behind its observing proxy: the "
                        "profile needs a start: command (a process), install_in_cluster (on "
                        "kind) or a watch_delay_target (a built-in controller's component)",
                        path=args.profile)
    provider = provider_named(args.cluster)
    if provider.as_found:
        raise UserError(f"--cluster {args.cluster}: explore starts a cluster of its own, on a "
                        "provider that starts one (local, kind)")
    if profile.in_cluster_only and Capability.LOAD_IMAGE not in provider.capabilities:
        raise UserError(f"profile {profile.name} installs its implementation in the cluster "
                        "only (install_in_cluster): explore it with --cluster kind",
                        path=args.profile)
    provider.check(ClusterRequest(args.cluster))  # kind's: a container engine answers
    workload = load(Path(args.workload), args.scenario)
    shape = _shape(args.shape, workload.shape)
    out = Path(args.out) if args.out else Path("reports") / time.strftime(
        "explore-%Y%m%d-%H%M%S")
    if args.workers > 1:
        return _workers(args, shape, out)
    out.mkdir(parents=True, exist_ok=True)
    settings = Settings(budget, args.seed, args.references, args.replays, args.max_plans,
                        args.stall, args.miss, args.exitfirst, shard, args.kinds or KINDS)
    kinds = f", {'/'.join(args.kinds)} plans only" if args.kinds else ""
    say(f"explore: {profile.name} on {workload.path} ({len(workload.steps)} steps), budget "
        f"{budget:.0f}s, seed {args.seed}{f', shard {shard}' if shard else ''}{kinds}; "
        f"results in {out}")
    from aftershock.notebook.session import Session

    # SIGTERM ends a run as Ctrl-C does: the finally below removes the cluster.
    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _interrupt)
    session = Session(shape=shape, profile=args.profile, report_dir=out / "runs",
                      kubernetes_version=args.kubernetes_version, name="explore-start",
                      provider=args.cluster)
    explorer = Explorer(session, workload, settings, out, say)
    try:
        if args.plans_from:
            explorer.adopt(Path(args.plans_from))
        else:
            explorer.learn()
        generated = explorer.generated
        say(f"{len(generated.plans)} plans from the reference runs"
            f"{f' of {args.plans_from}' if args.plans_from else ''}; pruned "
            f"{sum(generated.pruned.values())}: " + ", ".join(
                f"{n} {why}" for why, n in sorted(generated.pruned.items())))
        if args.plan_only:
            say(f"planned only: explore them with --from {out} [--shard K/N]")
        else:
            explorer.explore()
    except ExploreError as exc:
        say(f"aftershock: explore: {exc}")
        return 1
    finally:
        summary = explorer.save()
        session.close()
    for line in table(summary):
        print(line)
    return 1 if summary["bugs"] else 0


def _workers(args, shape: str | None, out: Path) -> int:
    """--workers N: N shards at once, each its own cluster and run dir under ``out``, then
    merged into ``out``; refused in one line when this machine cannot hold N clusters."""
    from aftershock.runs import shards, workers
    from aftershock.runs.merge import merge

    if args.shard:
        raise UserError("--workers splits the plans into shards itself: not with --shard")
    shards.require_workers(args.workers, shape, Path.cwd())
    out.mkdir(parents=True, exist_ok=True)
    argv = workers.without(args.argv, "--workers", "--out", "--run-dir")
    planned = out / "planned"
    if not args.plans_from:  # one set of reference runs and plans, shared by every shard
        say(f"explore: the reference runs and the plans first, in {planned}")
        code = workers.run_shards(1, lambda _shard: workers.aftershock_command(
            *argv, "--plan-only", "--out", str(planned)), say)[0]
        if code not in (0, 1) or not (planned / "planned.json").is_file():
            say(f"aftershock: explore: planning failed (exit {code}); see {planned}")
            return code or 1
        argv = [*argv, "--from", str(planned)]
    say(f"explore: {args.workers} workers, each its own cluster; results in {out}")
    codes = workers.run_shards(args.workers, lambda shard: workers.aftershock_command(
        *argv, "--shard", str(shard), "--out", str(workers.shard_dir(out, shard))), say)
    dirs = [planned, *(workers.shard_dir(out, shards.Shard(k, args.workers))
                       for k in range(1, args.workers + 1))]
    merge([d for d in dirs if (d / "summary.json").is_file()], out)
    summary = json.loads((out / "summary.json").read_text())
    for line in table(summary):
        print(line)
    failed = [str(code) for code in codes if code not in (0, 1)]
    if failed:
        say(f"aftershock: explore: a worker failed (exit {', '.join(failed)}); merged what "
            "the others found")
        return max(codes)
    return 1 if summary["bugs"] else 0


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def _shape(option: str | None, tagged: str | None) -> str | None:
    if option:
        return option
    if tagged:
        from aftershock.providers.clusters import shape_file

        return str(shape_file(tagged, Path.cwd()))
    return None


def table(summary: dict) -> list[str]:
    per = summary["seconds_per_plan"]
    lines = [
        f"plans: {summary['plans_run']} run of {summary['plans_generated']}, "
        f"{summary['pruned']} pruned; findings: {summary['findings']} "
        f"({summary['bugs']} bugs, {summary['flaky']} flaky, {summary.get('unperturbed', 0)} "
        f"flaky without a fault, {summary.get('as_with_no_fault', 0)} broken as with no "
        f"fault; {summary.get('no_fault', 0)} broken with no fault); "
        f"{summary.get('unfired_replays', 0)} replays whose fault never fired not counted; "
        f"errors: {summary['errors']}"
        + (f"; first bug after {summary['first_bug_after']}s" if summary["first_bug_after"]
           else ""),
        (f"time per plan: mean {per['mean']}s, p50 {per['p50']}s, max {per['max']}s; "
         f"{summary['plans_per_minute']} plans per minute" if per["mean"] is not None
         else "time per plan: no plan run") + f"; {summary['elapsed']}s in all",
        f"{'KIND':<14}{'RUN':>5}{'FINDINGS':>10}{'BUGS':>6}{'ERRORS':>8}",
    ]
    for kind, row in summary["by_kind"].items():
        lines.append(f"{kind:<14}{row['run']:>5}{row['findings']:>10}{row.get('bugs', 0):>6}"
                     f"{row['errors']:>8}")
    for finding in summary["list"]:
        controlled = (f", {finding['controlled']}/{finding['controls']} with no fault"
                      if finding.get("controls") else "")
        if finding.get("unfired"):
            controlled += f", {finding['unfired']} whose fault never fired not counted"
        where = (" (broken with no fault)" if finding["plan"] is None else
                 f" ({finding['kind']})" if finding.get("kind") == "its fault never fired"
                 else "")
        lines.append(f"finding {finding['number']}{where}: "
                     f"{', '.join(sorted(finding['violated']))} "
                     f"{finding['verdict']} ({finding['reproduced']}/{finding['replayed']} "
                     f"replays{controlled}) {finding['feature'] or ''}")
    return lines


def add_parser(sub) -> None:
    explore = sub.add_parser("explore", help="perturb a workload systematically to find "
                             "stale-view, unobserved-state and crash bugs")
    explore.add_argument("--profile", required=True, help="the implementation under test")
    explore.add_argument("--workload", required=True,
                         help="a feature (its first scenario) or a plain list of steps")
    explore.add_argument("--scenario", help="which scenario of the feature (default: first)")
    explore.add_argument("--budget", default="30m", help="e.g. 30m, 90s, 1h (default: 30m)")
    explore.add_argument("--seed", type=int, default=0)
    explore.add_argument("--references", type=int, default=3,
                         help="unperturbed runs to learn from (default: 3)")
    explore.add_argument("--replays", type=int, default=10,
                         help="replays of each finding, at least 3; a bug reproduces in 80%% "
                         "(default: 10)")
    explore.add_argument("--max-plans", type=int, help="stop after this many plans")
    explore.add_argument("-x", "--exitfirst", action="store_true",
                         help="stop at the first finding that reproduces as a bug")
    explore.add_argument("--kinds", type=plan_kinds, metavar="K[,K]",
                         help="run only plans of these kinds: stale (a watch stalls), "
                         "intermediate (a kill after a write), unobserved (a watch misses "
                         "events, then relists), node (a drain or a node deleted); default: all")
    explore.add_argument("--stall", type=durations, default=(4.0,),
                         help="seconds a stale-view plan holds a watch; several (1,4,10) make "
                         "a plan each (default: 4)")
    explore.add_argument("--miss", type=durations, default=(3.0,),
                         help="seconds an unobserved-state plan hides; several make a plan "
                         "each (default: 3)")
    explore.add_argument("--shape", help="cluster shape (default: the workload's @shape tag, "
                         "else three nodes)")
    explore.add_argument("--kubernetes-version")
    explore.add_argument("--cluster", default="local", metavar="PROVIDER",
                         help="the embedded cluster (local, the default), or kind for an "
                         "implementation installed in the cluster")
    explore.add_argument("--out", "--run-dir", dest="out",
                         help="run dir (default: reports/explore-<time>)")
    explore.add_argument("--shard", metavar="K/N", help="run only the K-th of N parts of the "
                         "plans (a hash of each plan's name decides); join the shards' run "
                         "dirs with aftershock merge")
    explore.add_argument("--plan-only", action="store_true",
                         help="run the reference runs and write the plans (planned.json, "
                         "reference.json), run no plan")
    explore.add_argument("--from", dest="plans_from", metavar="DIR",
                         help="the plans and reference of an earlier exploration (e.g. "
                         "--plan-only) instead of new reference runs: its shards share them")
    explore.add_argument("--workers", type=int, default=1, metavar="N",
                         help="run N shards at once here, each with its own cluster, and "
                         "merge them (default: 1)")
    explore.set_defaults(func=run)
