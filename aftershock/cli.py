"""The ``aftershock`` command: run | explore | judge | properties | steps | init | notebook |
cluster up/down/list/gc | engine up/down/status | kind build-image | toolchain build/status |
modules serve | report | doctor."""

# Imports inside functions: start-up time. `aftershock --help` imports in a tenth of a
# second; the engine a subcommand needs (the step library about a second, the notebook layer
# two) is imported by that subcommand alone.

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from aftershock.errors import ClusterError, UserError


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def cmd_toolchain_build(args: argparse.Namespace) -> int:
    from aftershock.providers import toolchain

    began = time.monotonic()
    binaries = toolchain.build(args.kubernetes_version, force=args.force)
    _say(f"toolchain ready in {time.monotonic() - began:.0f}s: {binaries.directory}")
    return 0


def cmd_toolchain_status(args: argparse.Namespace) -> int:
    from aftershock.providers import toolchain

    wanted = toolchain.Versions.resolve(args.kubernetes_version)
    built = toolchain.status()
    if args.json:
        print(json.dumps({"wanted": wanted.key, "built": built}, indent=2))
        return 0
    print(f"wanted: {wanted.key}")
    if not built:
        print("built:  nothing yet (run 'aftershock toolchain build')")
    for entry in built:
        mark = "*" if Path(str(entry["directory"])).name == wanted.key else " "
        print(f"{mark} {entry['directory']}\n    {', '.join(entry['binaries'])}")
    return 0 if any(Path(str(e["directory"])).name == wanted.key for e in built) else 1


def cmd_cluster_up(args: argparse.Namespace) -> int:
    from aftershock.session_cluster import ClusterRequest, open_cluster

    began = time.monotonic()
    cluster = open_cluster(ClusterRequest(shape=args.shape, name=args.name, detached=True,
                                          kubernetes_version=args.kubernetes_version), Path.cwd())
    _say(f"cluster/{cluster.name} up in {time.monotonic() - began:.1f}s: "
         f"{len(cluster.shape.nodes)} nodes Ready, "
         f"Kubernetes v{cluster.binaries.versions.kubernetes}, server {cluster.server}")
    print(cluster.paths.kubeconfig)
    return 0


def cmd_cluster_down(args: argparse.Namespace) -> int:
    from aftershock.providers import processes
    from aftershock.providers.local import attach

    state = attach(args.name)
    processes.remove_cluster(state)
    _say(f"cluster/{args.name} removed")
    return 0


def cmd_cluster_list(args: argparse.Namespace) -> int:
    from aftershock.providers import processes

    states = processes.list_states()
    if not states:
        _say("no clusters")
        return 0
    print(f"{'NAME':<28} {'PROVIDER':<9} {'VERSION':<9} {'OWNER':<14} {'ALIVE':<6} KUBECONFIG")
    for state in states:
        alive = sum(record.alive() for record in state.processes.values())
        owner = "detached" if state.owner_pid is None else (
            f"pid {state.owner_pid}" if state.owner_alive() else "dead")
        print(f"{state.name:<28} {state.provider:<9} {state.kubernetes_version:<9} {owner:<14} "
              f"{alive}/{len(state.processes):<4} {state.kubeconfig}")
    return 0


def cmd_cluster_gc(args: argparse.Namespace) -> int:
    from aftershock.providers import processes

    result = processes.gc()
    for name in result.clusters:
        _say(f"removed cluster/{name} of a dead run")
    if result.processes:
        _say(f"ended {len(result.processes)} processes: {', '.join(result.processes)}")
    for path in result.leftovers:
        _say(f"removed leftover {path}")
    for what in result.undone:
        _say(f"undid what a dead run left on a reused cluster: {what}")
    for what in result.not_undone:
        _say(f"could not undo: {what}")
    if not (result.clusters or result.leftovers):
        _say("nothing to clean")
    return 1 if result.not_undone else 0


def cmd_doctor(args: argparse.Namespace) -> int:
    from aftershock.doctor import report

    checks = report()
    width = max(len(check.name) for check in checks)
    for check in checks:
        mark = "ok  " if check.ok else ("FAIL" if check.required else "warn")
        print(f"{mark} {check.name:<{width}}  {check.detail}")
    return 0 if all(check.ok or not check.required for check in checks) else 1


def cmd_report(args: argparse.Namespace) -> int:
    from aftershock.report import html, matrix

    run = Path(args.run_dir)
    index = html.generate(run)
    for line in matrix.text(matrix.load(run)):
        print(line)
    if (run / "matrix.html").is_file():
        print(f"conformance matrix: {run / 'matrix.html'} (markdown: {run / 'matrix.md'})")
    else:
        print("no conformance matrix: no scenario of this run named a property, e.g. (R1)")
    print(f"HTML report: {index}")
    return 0


def cmd_properties(args: argparse.Namespace) -> int:
    from aftershock import catalogue

    features = Path(args.features) if args.features else None
    if features is not None and not features.is_dir():
        raise UserError("no such directory", path=args.features)
    if args.markdown:
        print(catalogue.markdown(features), end="")
    else:
        for line in catalogue.text(features):
            print(line)
    return 0


def cmd_judge(args: argparse.Namespace) -> int:
    from aftershock import rejudge
    from aftershock.report import matrix

    run = Path(args.run_dir)
    if not (run / matrix.FILE).exists():
        raise UserError(f"not a run dir with a conformance matrix (no {matrix.FILE})",
                        path=args.run_dir)
    roots = [Path(p) for p in args.profiles] or [Path("profiles")]
    result = rejudge.rejudge(run, roots)
    for line in matrix.text(result.rows):
        print(line)
    changed = rejudge.differences(matrix.load(run), result.rows)
    rebuilt = f" ({result.legacy} scenarios saved before judgements were recorded: rebuilt " \
              "from their steps)" if result.legacy else ""
    print(f"judged again with today's properties: {len(result.rows)} scenarios{rebuilt}")
    if changed:
        print(f"{len(changed)} cells differ from the matrix recorded in the run:")
        for line in changed:
            print(f"  {line}")
    else:
        print("the same matrix as recorded in the run")
    if args.verbose:
        for scenario, verdicts in result.verdicts.items():
            print(f"\n{scenario}")
            for verdict in verdicts:
                print(f"  {verdict.property}: {verdict.status.upper()}: {verdict.summary}")
    return 1 if changed and args.check else 0


def cmd_init(args: argparse.Namespace) -> int:
    from aftershock.project import init

    target = Path(args.directory)
    written = init(target)
    _say(f"made {len(written)} files in {target}: features/, steps/, fixtures/, clusters/, "
         "profiles/, reports/, conftest.py, pyproject.toml")
    _say(f"next: cd {target} && aftershock run features")
    return 0


def cmd_modules_serve(args: argparse.Namespace) -> int:
    from aftershock.sut import modproxy

    module, at, version = args.module.partition("@")
    if not at or not module or not version:
        raise UserError(f"'{args.module}': expected <module>@<version>, as go.sum names it "
                        "(github.com/kai-scheduler/KAI-scheduler@v0.14.0)")
    served = modproxy.serve(module, version, Path(args.source), Path(args.go_sum), args.rev,
                            args.subdir, Path(args.into) if args.into else None)
    _say(f"served {module}@{version} ({served.files} files) from {args.source}: {served.zip_hash}"
         f" and go.mod {served.mod_hash}, the lines of {args.go_sum}")
    print(served.goproxy)
    return 0


def cmd_steps(args: argparse.Namespace) -> int:
    from aftershock.project import catalogue

    lines = catalogue(Path(args.project), args.words)
    if not lines:
        raise UserError(f"no step mentions {' and '.join(repr(w) for w in args.words)} (aftershock "
                        "steps with no word lists every step)")
    for line in lines:
        print(line)
    return 0


def cmd_notebook(args: argparse.Namespace, extra: list[str]) -> int:
    """JupyterLab on the project (the nearest folder up whose pyproject.toml names
    aftershock), from the pinned dependency; any other option goes to `jupyter lab`."""
    import importlib.util

    from aftershock.shape import find_root

    if importlib.util.find_spec("jupyterlab") is None:
        raise UserError("JupyterLab is not installed here: pip install -c constraints.txt "
                        "'aftershock[notebook]' (make notebook does)")
    root = find_root(Path.cwd().resolve()) or Path.cwd().resolve()
    command = [sys.executable, "-m", "jupyterlab", f"--ServerApp.root_dir={root}",
               f"--port={args.port}", f"--ip={args.ip}", *extra]
    if args.no_browser:
        command.append("--no-browser")
    if os.geteuid() == 0:  # a container's root, as here: jupyter refuses it unless told
        command.append("--allow-root")
    _say(f"aftershock: JupyterLab on {root} (notebooks/ holds the examples); Ctrl-C twice ends "
         "it, and every cluster a notebook started goes with its kernel")
    sys.stdout.flush()
    os.execv(sys.executable, command)  # jupyter's own Ctrl-C and shutdown from here on
    return 0  # not reached


def cluster_option(argv: list[str]) -> str | None:
    """The --cluster value among the arguments passed on to pytest."""
    for index, arg in enumerate(argv):
        if arg.startswith("--cluster="):
            return arg.split("=", 1)[1]
        if arg == "--cluster" and index + 1 < len(argv):
            return argv[index + 1]
    return None


def cmd_run(args: argparse.Namespace, unknown: list[str]) -> int:
    import pytest

    from aftershock import run_options, versions
    from aftershock.pytest_plugin import check_inputs

    extra = [*run_options.passed_on(args), *unknown]
    extra += _kept_with_the_caller(extra)
    if versions.listed(option_value(extra, versions.OPTION)) is not None:
        versions.refuse_existing(cluster_option([*extra, *args.paths]) or "local")
    check_inputs(run_options.with_defaults(args))
    if cluster_option([*extra, *args.paths]) == "kind":
        from aftershock.providers import engine

        engine.require()  # at once: no engine, no kind
    if versions.listed(option_value(extra, versions.OPTION)) is not None:
        return run_versions(args, extra)
    if args.workers != 1:
        return run_workers(args, extra)
    progress = [] if "--progress" in extra or "-q" in extra else ["--progress"]
    return int(pytest.main([*progress, *extra, *args.paths]))


def _kept_with_the_caller(given: list[str]) -> list[str]:
    """Where a run writes, when not told: its run dir and pytest's cache in the project this
    command runs in (the nearest folder up whose pyproject.toml names aftershock), else the
    working directory; never the folder of a feature named from elsewhere, which pytest makes
    its rootdir."""
    from aftershock.run_options import fresh_run_dir
    from aftershock.shape import find_root

    home = find_root(Path.cwd().resolve()) or Path.cwd().resolve()
    out = []
    if option_value(given, "--run-dir") is None:
        out += ["--run-dir", str(fresh_run_dir(home))]
    if not any("cache_dir" in arg or arg == "no:cacheprovider" for arg in given):
        out += ["-o", f"cache_dir={home / '.pytest_cache'}"]
    return out


def option_value(argv: list[str], name: str) -> str | None:
    """The value of ``name`` among arguments passed on (`--name V` or `--name=V`)."""
    for index, arg in enumerate(argv):
        if arg.startswith(f"{name}="):
            return arg.split("=", 1)[1]
        if arg == name and index + 1 < len(argv):
            return argv[index + 1]
    return None


def run_workers(args: argparse.Namespace, extra: list[str]) -> int:
    """`aftershock run --workers N`: N shards at once, each its own pytest, cluster and run dir
    under the run dir, merged into it; refused in one line when the machine cannot hold N."""
    from aftershock import shards, workers
    from aftershock.merge import merge

    if option_value(extra, "--shard"):
        raise UserError("--workers splits the scenarios into shards itself: not with --shard")
    shards.require_workers(args.workers, option_value(extra, "--shape"), Path.cwd())
    run = Path(option_value(extra, "--run-dir") or "")  # cmd_run gave one when not told
    passed = workers.without(extra, "--run-dir")
    _say(f"aftershock: {args.workers} workers, each its own cluster; reports in {run}")
    codes = workers.run_shards(args.workers, lambda shard: workers.aftershock_command(
        "run", *args.paths, *passed, "--shard", str(shard),
        "--run-dir", str(workers.shard_dir(run, shard))), _say)
    dirs = [workers.shard_dir(run, shards.Shard(k, args.workers))
            for k in range(1, args.workers + 1)]
    merge([d for d in dirs if d.is_dir()], run)
    from aftershock.report import matrix

    for line in matrix.text(matrix.load(run)):
        print(line)
    print(f"aftershock: reports in {run} (HTML: aftershock report {run})")
    ran = [code for code in codes if code != 5]  # a shard no scenario fell in ran nothing
    return max(ran, default=5)


def run_versions(args: argparse.Namespace, extra: list[str]) -> int:
    """`aftershock run --kubernetes-version A,B,C`: the run on each version in turn, each on a
    cluster of its own, merged into one matrix with the version as a column."""
    from aftershock import versions, workers
    from aftershock.report import matrix

    wanted = versions.listed(option_value(extra, versions.OPTION)) or []
    versions.refuse_existing(cluster_option([*extra, *args.paths]) or "local")
    shape = option_value(extra, "--shape")
    if shape:  # once, here, rather than once by each version's run
        from aftershock.shape import load_shape

        load_shape(shape)
    run = Path(option_value(extra, "--run-dir") or "")  # cmd_run gave one when not told
    passed = workers.without(extra, "--run-dir", versions.OPTION)
    more = ["--workers", str(args.workers)] if args.workers != 1 else []
    _say(f"aftershock: {len(wanted)} Kubernetes versions ({', '.join(wanted)}), one after "
         f"another, each on a cluster of its own; reports in {run}")
    codes = versions.run_across(wanted, lambda version, where: workers.aftershock_command(
        "run", *args.paths, *passed, *more, versions.OPTION, version, "--run-dir", str(where)),
        run, _say)
    for line in matrix.text(matrix.load(run)):
        print(line)
    print(f"aftershock: reports in {run} (HTML: aftershock report {run})")
    ran = [code for code in codes if code != 5]
    return max(ran, default=5)


def cmd_merge(args: argparse.Namespace) -> int:
    from aftershock.merge import merge

    out = Path(args.out)
    kind = merge([Path(run) for run in args.runs], out)
    if kind == "run":
        from aftershock.report import matrix

        for line in matrix.text(matrix.load(out)):
            print(line)
        print(f"aftershock: merged {len(args.runs)} runs into {out} (HTML: aftershock report "
              f"{out})")
    else:
        from aftershock.explore.command import table

        for line in table(json.loads((out / "summary.json").read_text())):
            print(line)
        print(f"aftershock: merged {len(args.runs)} explorations into {out}")
    return 0


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="aftershock", description=__doc__)
    sub = top.add_subparsers(dest="command", required=True)

    from aftershock.run_options import add_to_argparse

    run = sub.add_parser(
        "run", help="run features (any other option goes to pytest)",
        description="Run features against a cluster and judge them; the matrix, allure results "
        "and JUnit XML go into the run dir.",
        epilog="Any other option is pytest's, passed on as given (pytest --help lists them).")
    run.add_argument("paths", nargs="*", default=["features"],
                     help="features or folders of them (default: features)")
    add_to_argparse(run)

    joined = sub.add_parser("merge", help="join the run dirs of shards (aftershock run or "
                            "explore --shard) into one matrix, allure results and summary")
    joined.add_argument("runs", nargs="+", help="the shards' run dirs")
    joined.add_argument("--out", "--run-dir", dest="out", required=True,
                        help="the merged run dir (may hold the shards)")
    joined.set_defaults(func=cmd_merge)

    tool = sub.add_parser("toolchain", help="build or inspect the control-plane binaries")
    tool_sub = tool.add_subparsers(dest="action", required=True)
    build = tool_sub.add_parser("build")
    build.add_argument("--kubernetes-version", help="e.g. 1.35.4 (default: the pinned one, 1.37.2)")
    build.add_argument("--force", action="store_true", help="rebuild even if cached")
    build.set_defaults(func=cmd_toolchain_build)
    stat = tool_sub.add_parser("status")
    stat.add_argument("--kubernetes-version")
    stat.add_argument("--json", action="store_true")
    stat.set_defaults(func=cmd_toolchain_status)

    cluster = sub.add_parser("cluster", help="embedded clusters")
    cluster_sub = cluster.add_subparsers(dest="action", required=True)
    up = cluster_sub.add_parser("up", help="start a cluster; prints its kubeconfig path")
    up.add_argument("--shape", help="cluster shape file (default: three nodes)")
    up.add_argument("--name")
    up.add_argument("--kubernetes-version")
    up.set_defaults(func=cmd_cluster_up)
    down = cluster_sub.add_parser("down", help="stop a cluster and remove its work dir")
    down.add_argument("name")
    down.set_defaults(func=cmd_cluster_down)
    cluster_sub.add_parser("list").set_defaults(func=cmd_cluster_list)
    cluster_sub.add_parser("gc", help="clean what dead runs left").set_defaults(func=cmd_cluster_gc)

    report = sub.add_parser("report", help="a run's HTML report (allure) and matrix")
    report.add_argument("run_dir", help="reports/<run>, as printed at the end of a run")
    report.set_defaults(func=cmd_report)

    props = sub.add_parser("properties", help="the catalogue of properties a step may name")
    props.add_argument("--features", default="features",
                       help="where to look for the features that use each (default: features)")
    props.add_argument("--markdown", action="store_true", help="as docs/properties.md")
    props.set_defaults(func=cmd_properties)

    again = sub.add_parser("judge", help="judge a saved run again with today's properties")
    again.add_argument("run_dir", help="reports/<run>, as printed at the end of a run")
    again.add_argument("--profiles", action="append", default=[], metavar="DIR",
                       help="where a run saved before judgements were recorded finds its "
                            "profiles (default: profiles)")
    again.add_argument("--check", action="store_true",
                       help="exit 1 when a cell differs from the matrix recorded in the run")
    again.add_argument("-v", "--verbose", action="store_true", help="every verdict")
    again.set_defaults(func=cmd_judge)

    start = sub.add_parser("init", help="a new conformance project with aftershock's layout")
    start.add_argument("directory", help="where (absent or empty)")
    start.set_defaults(func=cmd_init)

    lab = sub.add_parser("notebook", help="JupyterLab on this project, its notebooks' paths "
                         "resolving against it (any other option goes to jupyter lab)")
    lab.add_argument("--port", type=int, default=8888, help="(default: 8888)")
    lab.add_argument("--ip", default="127.0.0.1", help="where it listens (default: 127.0.0.1)")
    lab.add_argument("--no-browser", action="store_true", help="print its address only")

    vocabulary = sub.add_parser("steps", help="every step a feature may use (or those that "
                                "mention every WORD)")
    vocabulary.add_argument("words", nargs="*", metavar="WORD",
                            help="show only the steps whose text, description or module "
                            "mention this (case ignored), e.g. drain")
    vocabulary.add_argument("--project", default=".",
                            help="the project whose own steps/ join the built-in ones")
    vocabulary.set_defaults(func=cmd_steps)

    modules = sub.add_parser("modules", help="Go modules the module proxy refuses")
    modules_sub = modules.add_subparsers(dest="modules_command", required=True)
    serve = modules_sub.add_parser(
        "serve", help="lay out MODULE@VERSION in a folder GOPROXY=file://... reads, made from a "
        "git repository by the Go module zip rules and checked against a go.sum; prints the "
        "GOPROXY to use")
    serve.add_argument("module", metavar="MODULE@VERSION",
                       help="as go.sum names it, e.g. "
                       "github.com/kai-scheduler/KAI-scheduler@v0.14.0")
    serve.add_argument("--from", dest="source", required=True, metavar="GIT_DIR",
                       help="a clone or mirror of the module's repository (bare or not)")
    serve.add_argument("--go-sum", required=True, metavar="FILE_OR_DIR",
                       help="the go.sum of the module that needs it (or that module's folder): "
                       "its two lines for MODULE@VERSION must be what the zip hashes to")
    serve.add_argument("--rev", help="the revision to take (default: the tag VERSION, or "
                       "SUBDIR/VERSION)")
    serve.add_argument("--subdir", default="", help="the module's folder in the repository")
    serve.add_argument("--into", help="the proxy folder (default: ~/.cache/aftershock/goproxy)")
    serve.set_defaults(func=cmd_modules_serve)

    from aftershock import engine_command, kind_command
    from aftershock.explore.command import add_parser

    add_parser(sub)
    engine_command.add_parser(sub)
    kind_command.add_parser(sub)
    sub.add_parser("doctor", help="check this machine").set_defaults(func=cmd_doctor)
    return top


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    top = parser()
    if argv[:1] in (["run"], ["notebook"]):
        args, extra = top.parse_known_args(argv)
    else:
        args, extra = top.parse_args(argv), []
    args.argv = list(argv)
    try:
        if args.command == "run":
            return cmd_run(args, extra)
        if args.command == "notebook":
            return cmd_notebook(args, extra)
        return args.func(args)
    except UserError as exc:
        _say(f"aftershock: error: {exc}")
        return exc.exit_code
    except ClusterError as exc:
        _say(f"aftershock: cluster error: {exc}")
        return 1
    except KeyboardInterrupt:
        _say("aftershock: interrupted; everything started was removed")
        return 130
    except BrokenPipeError:  # e.g. `| head`: the reader has what it wanted, as with kubectl
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


if __name__ == "__main__":
    sys.exit(main())
