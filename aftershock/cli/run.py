"""``aftershock run FEATURES``: features run against a cluster and judged, by pytest with
aftershock's plugin; with ``--workers`` or a list of Kubernetes versions, as child runs merged
into one."""

# Imports inside functions: start-up time, as in the rest of the command line.

from __future__ import annotations

import argparse
from pathlib import Path

from aftershock.cli.say import say
from aftershock.errors import UserError


def cmd_run(args: argparse.Namespace, unknown: list[str]) -> int:
    import pytest

    from aftershock.pytest_plugin import check_inputs
    from aftershock.runs import options as run_options
    from aftershock.runs import versions

    extra = [*run_options.passed_on(args), *unknown]
    extra += _kept_with_the_caller(extra)
    if versions.listed(option_value(extra, versions.OPTION)) is not None:
        versions.refuse_existing(option_value([*extra, *args.paths], "--cluster") or "local")
    check_inputs(run_options.with_defaults(args), before_pytest=True)
    if args.submission:
        check_submission(args)
    if versions.listed(option_value(extra, versions.OPTION)) is not None:
        code = run_versions(args, extra)
    elif args.workers != 1:
        code = run_workers(args, extra)
    else:
        progress = [] if "--progress" in extra or "-q" in extra else ["--progress"]
        code = int(pytest.main([*progress, *extra, *args.paths]))
    if args.submission:
        write_submission(Path(option_value(extra, "--run-dir") or ""), Path(args.submission),
                         args.evidence_url)
    return code


def check_submission(args: argparse.Namespace) -> None:
    """Before anything starts: --submission is refused in one line for a run that expects a
    violation, or an evidence URL that is none."""
    from aftershock.features import expected_violations
    from aftershock.report import product

    product.check_urls(args.evidence_url)
    for path in _feature_files(args.paths):
        for line, tag in expected_violations(path):
            raise UserError(f"--submission: this scenario expects a violation (@{tag}); a "
                            "submission is made of runs that expect none: run the features "
                            "without it", path=str(path), line=line)


def _feature_files(paths: list[str]) -> list[Path]:
    found = []
    for given in paths:
        path = Path(given.split("::")[0])
        found += sorted(path.rglob("*.feature")) if path.is_dir() else [path]
    return [path for path in found if path.suffix == ".feature" and path.is_file()]


def write_submission(run: Path, out: Path, urls: list[str]) -> None:
    from aftershock.report import submission

    if not (run / "matrix.jsonl").is_file():
        say(f"aftershock: no submission: the run in {run} judged nothing")
        return
    for line in submission.write(run, out, urls):
        print(line)


def _kept_with_the_caller(given: list[str]) -> list[str]:
    """Where a run writes, when not told: its run dir and pytest's cache in the project this
    command runs in (the nearest folder up whose pyproject.toml names aftershock), else the
    working directory; never the folder of a feature named from elsewhere, which pytest makes
    its rootdir."""
    from aftershock.machine.shape import find_root
    from aftershock.runs.options import fresh_run_dir

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
    from aftershock.runs import shards, workers
    from aftershock.runs.merge import merge

    if option_value(extra, "--shard"):
        raise UserError("--workers splits the scenarios into shards itself: not with --shard")
    shards.require_workers(args.workers, option_value(extra, "--shape"), Path.cwd())
    run = Path(option_value(extra, "--run-dir") or "")  # cmd_run gave one when not told
    passed = workers.without(extra, "--run-dir")
    say(f"aftershock: {args.workers} workers, each its own cluster; reports in {run}")
    # made here, before any shard starts: a shard that ran nothing removes the folders it made
    # (the first missing one up from its own), which must never be the run's
    run.mkdir(parents=True, exist_ok=True)
    codes = workers.run_shards(args.workers, lambda shard: workers.aftershock_command(
        "run", *args.paths, *passed, "--shard", str(shard),
        "--run-dir", str(workers.shard_dir(run, shard))), say)
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
    from aftershock.report import matrix
    from aftershock.runs import versions, workers

    wanted = versions.listed(option_value(extra, versions.OPTION)) or []  # refused in cmd_run
    shape = option_value(extra, "--shape")
    if shape:  # once, here, rather than once by each version's run
        from aftershock.machine.shape import load_shape

        load_shape(shape)
    run = Path(option_value(extra, "--run-dir") or "")  # cmd_run gave one when not told
    passed = workers.without(extra, "--run-dir", versions.OPTION)
    more = ["--workers", str(args.workers)] if args.workers != 1 else []
    say(f"aftershock: {len(wanted)} Kubernetes versions ({', '.join(wanted)}), one after "
         f"another, each on a cluster of its own; reports in {run}")
    codes = versions.run_across(wanted, lambda version, where: workers.aftershock_command(
        "run", *args.paths, *passed, *more, versions.OPTION, version, "--run-dir", str(where)),
        run, say)
    for line in matrix.text(matrix.load(run)):
        print(line)
    print(f"aftershock: reports in {run} (HTML: aftershock report {run})")
    ran = [code for code in codes if code != 5]
    return max(ran, default=5)


def add_parser(sub) -> None:
    from aftershock.runs.options import add_to_argparse

    run = sub.add_parser(
        "run", help="run features (any other option goes to pytest)",
        description="Run features against a cluster and judge them; the matrix, allure results "
        "and JUnit XML go into the run dir.",
        epilog="Any other option is pytest's, passed on as given (pytest --help lists them).")
    run.add_argument("paths", nargs="*", default=["features"],
                     help="features or folders of them (default: features)")
    add_to_argparse(run)
    add_submission_options(run)
    run.set_defaults(func=cmd_run, takes_extra=True)


def add_submission_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("submission: what a conformance submission takes")
    group.add_argument("--submission", metavar="DIR", default=None,
                       help="write the run's Kubernetes AI Conformance items (PRODUCT.yaml "
                       "with evidence/), junit_01.xml and e2e.log as Ginkgo writes them, and "
                       "results.json as `go test -json` does, into DIR")
    group.add_argument("--evidence-url", metavar="URL", action="append", default=[],
                       help="the public URL of the published run, an item's evidence (more "
                       "than once for more)")
