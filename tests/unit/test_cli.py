"""Bad input at the command line: one line naming file:line and the field, exit code 2."""

import os
import subprocess
import sys
from pathlib import Path

from aftershock import cli
from aftershock.cli import kind as kind_command


def _aftershock(*args, **kwargs):
    return subprocess.run([sys.executable, "-m", "aftershock.cli", *args], capture_output=True,
                          text=True, timeout=60, **kwargs)


def test_malformed_shape_is_one_line_and_exit_2(tmp_path):
    shape = tmp_path / "bad.yaml"
    shape.write_text("nodes:\n  count: 3\n  tempalte: {}\n")
    result = _aftershock("cluster", "up", "--shape", str(shape), "--name", "never-started")
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert lines == [f"aftershock: error: {shape}:3: unknown field 'nodes.tempalte' "
                     "(did you mean 'template'?); expected one of: count, namePrefix, template"]
    assert result.stdout == ""


def test_unknown_cluster_name_for_down_is_clear(tmp_path):
    result = _aftershock("cluster", "down", "no-such-cluster",
                         env={"AFTERSHOCK_CACHE": str(tmp_path), "PATH": "/usr/bin:/bin"})
    assert result.returncode == 1
    assert "no cluster named 'no-such-cluster'" in result.stderr


def test_a_shape_this_machine_cannot_hold_and_a_huge_repeat_start_nothing(tmp_path):
    shape = tmp_path / "huge.yaml"
    shape.write_text("name: huge\nnodes:\n  count: 100000\n")
    env = {"AFTERSHOCK_CACHE": str(tmp_path / "cache"), "PATH": "/usr/bin:/bin"}
    up = _aftershock("cluster", "up", "--shape", str(shape), env=env)
    assert up.returncode == 2 and up.stderr.count("\n") == 1, up.stderr
    assert f"{shape}:3: 100000 nodes need about" in up.stderr
    run = _aftershock("run", "features/harness/smoke.feature", "--shape", str(shape),
                      "-p", "no:cacheprovider", env=env)
    assert run.returncode == 2 and run.stderr.startswith("aftershock: error: "), run.stderr
    assert "100000 nodes need about" in run.stderr
    repeat = _aftershock("run", "features/harness/smoke.feature", "--repeat", "100000",
                         "-p", "no:cacheprovider", env=env)
    assert "--repeat 100000: between 1 and 1000" in repeat.stdout + repeat.stderr
    assert not (tmp_path / "cache" / "clusters").exists()  # nothing was started


def test_chaos_mesh_can_be_built_before_a_run_needs_it():
    """`make demo` builds Chaos Mesh before its scenarios: built cold inside one, it outlasted
    the scenario's 10-minute limit."""
    args = cli.parser().parse_args(["kind", "build-chaos-mesh"])
    assert args.func is kind_command.cmd_build_chaos_mesh and not args.force
    makefile = (Path(__file__).parents[2] / "Makefile").read_text()
    demo = makefile[makefile.index("\ndemo-all:"):]
    assert demo.index("kind build-chaos-mesh") < demo.index("chaos_mesh.feature")


def test_the_image_the_indexed_job_runs_is_built_by_a_command():
    """deploy/explore-indexed-job.yaml names the command that builds its image."""
    args = cli.parser().parse_args(["kind", "build-aftershock-image"])
    assert args.func is kind_command.cmd_build_aftershock_image
    assert args.kubernetes_version is None
    manifest = (Path(__file__).parents[2] / "deploy" / "explore-indexed-job.yaml").read_text()
    assert "aftershock kind build-aftershock-image" in manifest


def test_make_test_runs_four_tests_at_a_time_unless_told_otherwise():
    """The README says so: pytest-xdist with TEST_WORKERS workers, 4 by default."""
    makefile = (Path(__file__).parents[2] / "Makefile").read_text()
    test = makefile[makefile.index("\ntest:"):].split("\n\n")[0]
    assert "pytest -n $(TEST_WORKERS) --dist worksteal " in test
    assert "\nTEST_WORKERS ?= 4\n" in makefile
    readme = " ".join((Path(__file__).parents[2] / "README.md").read_text().split())
    assert "runs four tests at a time (pytest-xdist" in readme


def test_explore_inputs_that_cannot_run_here_start_nothing(tmp_path):
    env = {"AFTERSHOCK_CACHE": str(tmp_path / "cache"), "PATH": "/usr/bin:/bin"}
    base = ["explore", "--workload", "workloads/replica_group.steps", "--out",
            str(tmp_path / "out")]
    in_cluster = _aftershock(*base, "--profile", "profiles/incluster/replicagroup-correct.yaml",
                             env=env)
    assert in_cluster.returncode == 2 and in_cluster.stderr.count("\n") == 1
    assert "installs its implementation in the cluster only" in in_cluster.stderr
    assert "--cluster kind" in in_cluster.stderr
    workers = _aftershock(*base, "--profile", "profiles/replicagroup-correct.yaml",
                          "--workers", "999", env=env)
    assert workers.returncode == 2 and workers.stderr.count("\n") == 1
    assert "--workers 999: each worker runs its own cluster" in workers.stderr
    shard = _aftershock(*base, "--profile", "profiles/replicagroup-correct.yaml",
                        "--shard", "3/2", env=env)
    assert shard.returncode == 2 and "--shard 3/2: K is between 1 and 2" in shard.stderr
    assert not (tmp_path / "cache" / "clusters").exists() and not (tmp_path / "out").exists()


def test_explore_with_fewer_than_three_replays_is_refused_in_one_line(tmp_path):
    """--replays 1 made 1 of 1 a bug: a finding is replayed at least 3 times, and fewer is
    refused before anything starts (here before the profile is even read)."""
    env = {"AFTERSHOCK_CACHE": str(tmp_path / "cache"), "PATH": "/usr/bin:/bin"}
    for replays in ("1", "2"):
        result = _aftershock("explore", "--profile", str(tmp_path / "no-such-profile.yaml"),
                             "--workload", "workloads/replica_group.steps", "--replays",
                             replays, "--out", str(tmp_path / "out"), env=env)
        assert (result.returncode, result.stderr) == (
            2, f"aftershock: error: --replays {replays}: between 3 and 50\n"), result.stderr
    assert not (tmp_path / "out").exists() and not (tmp_path / "cache" / "clusters").exists()
    from aftershock.cli import explore as command
    from aftershock.explore import explorer as exploring

    assert command.BOUNDS["replays"][0] == exploring.MIN_REPLAYS


def test_run_help_lists_every_option_grouped():
    """Every option a run takes is in `aftershock run --help`, under its group: aftershock's
    own (the ones the pytest plugin adds) and pytest's a user reaches for."""
    from aftershock.runs.options import GROUPS, OPTIONS

    shown = _aftershock("run", "--help").stdout
    for key in GROUPS:
        assert f"\n{key}: " in shown, key
    for option in OPTIONS:
        assert option.flags[0] in shown, option.flags
    assert "--workers" in shown and "pytest --help" in shown
    groups = shown.split("\n\n")
    cluster = next(g for g in groups if g.startswith("cluster: "))
    assert "--kubernetes-version" in cluster and "--profile" not in cluster


def test_run_passes_its_options_on_to_pytest_as_given():
    from aftershock.runs import options as run_options

    args, unknown = cli.parser().parse_known_args(
        ["run", "features/x.feature", "--profile", "a.yaml", "--profile", "b.yaml", "-k",
         "drain", "--repeat", "3", "-vv", "--co", "--maxfail=2"])
    assert args.paths == ["features/x.feature"] and unknown == ["--maxfail=2"]
    assert run_options.passed_on(args) == [
        "--profile", "a.yaml", "--profile", "b.yaml", "-k", "drain", "--collect-only",
        "--repeat", "3", "-v", "-v"]
    filled = run_options.with_defaults(args)
    assert filled.aftershock_cluster == "local" and filled.aftershock_repeat == 3


def test_a_bad_profile_reads_as_every_other_error(tmp_path):
    profile = tmp_path / "bad.yaml"
    profile.write_text("name: x\nbogus: 1\n")
    run = _aftershock("run", "features/harness/smoke.feature", "--profile", str(profile),
                      "--collect-only", "-p", "no:cacheprovider")
    assert run.returncode == 2, run.stdout + run.stderr
    assert run.stderr.splitlines()[0].startswith(
        f"aftershock: error: {profile}:2: unknown field 'bogus'"), run.stderr
    assert "ERROR:" not in run.stdout + run.stderr


def test_steps_filters_by_word():
    drain = _aftershock("steps", "drain")
    assert drain.returncode == 0
    steps = [line for line in drain.stdout.splitlines() if not line.startswith(" ")]
    assert steps and all("drain" in line.lower() or "Drain" in line for line in steps), steps
    everything = _aftershock("steps").stdout.splitlines()
    assert len(everything) > 2 * len(drain.stdout.splitlines())
    none = _aftershock("steps", "no-such-word")
    assert none.returncode == 2 and none.stderr.startswith("aftershock: error: no step mentions")


def test_listing_scenarios_writes_no_report(tmp_path):
    run_dir = tmp_path / "runs" / "one"
    listed = _aftershock("run", "features/harness/smoke.feature", "--collect-only",
                         "--run-dir", str(run_dir), "-p", "no:cacheprovider")
    assert listed.returncode == 0, listed.stdout + listed.stderr
    assert "1 test collected" in listed.stdout and "reports in" not in listed.stdout
    assert not (tmp_path / "runs").exists()


def test_a_feature_that_does_not_collect_writes_no_report(tmp_path):
    (tmp_path / "features").mkdir()
    (tmp_path / "features" / "a.feature").write_text(
        "Feature: f\n  Scenario: s\n    Given a cluster with 3 nodez\n")
    ran = _aftershock("run", "features", "-p", "no:cacheprovider", cwd=tmp_path)
    assert ran.returncode == 2 and "unknown step" in ran.stdout, ran.stdout
    assert "junit" not in ran.stdout and not (tmp_path / "reports").exists(), ran.stdout


def test_a_feature_elsewhere_uses_its_own_projects_shapes_and_writes_nothing_there(tmp_path):
    """`aftershock run /elsewhere/x.feature`: its `@shape:` is looked up in the project that
    owns it; its reports and pytest's cache go to the caller's project or working directory
    (pytest makes the feature's folder its rootdir and would have written both there)."""
    elsewhere, caller = tmp_path / "elsewhere", tmp_path / "caller"
    elsewhere.mkdir()
    caller.mkdir()
    feature = elsewhere / "x.feature"
    feature.write_text("@shape:tiny\nFeature: f\n  Scenario: s\n"
                       "    Given a Deployment web with 1 replicas\n")
    missing = _aftershock("run", str(feature), "--collect-only", cwd=caller)
    assert missing.returncode == 2, missing.stdout + missing.stderr
    assert "tag @shape:tiny: no tiny.yaml in " in missing.stdout  # pytest's rootdir, shipped
    assert "(known shapes: hundred-small-nodes, " in missing.stdout
    assert "ERROR collecting" in missing.stdout and "x.feature" in missing.stdout
    (elsewhere / "pyproject.toml").write_text('[project]\nname = "x"\n'
                                              'dependencies = ["aftershock==0.1.0"]\n')
    (elsewhere / "clusters").mkdir()
    (elsewhere / "clusters" / "tiny.yaml").write_text("name: tiny\nnodes:\n  count: 1\n")
    found = _aftershock("run", str(feature), "--collect-only", cwd=caller)
    assert found.returncode == 0 and "1 test collected" in found.stdout, found.stdout
    assert "<FeatureFile x.feature>" in found.stdout  # named in its own project
    assert sorted(p.name for p in elsewhere.iterdir()) == ["clusters", "pyproject.toml",
                                                            "x.feature"]
    shipped = elsewhere.parent / "bare.feature"  # in no project: the shapes aftershock ships
    shipped.write_text(feature.read_text().replace("@shape:tiny", "@shape:three-small-nodes"))
    found = _aftershock("run", str(shipped), "--collect-only", cwd=caller)
    assert found.returncode == 0 and "1 test collected" in found.stdout, found.stdout
    assert (caller / ".pytest_cache").is_dir()


def test_collect_only_builds_nothing(tmp_path):
    """--collect-only lists the scenarios and runs nothing: an implementation built from a Go
    module is not built (a run builds it first, with progress). The module here does not
    compile, so a build would say so."""
    module = tmp_path / "op"
    module.mkdir()
    (module / "go.mod").write_text("module example.com/op\n\ngo 1.22\n")
    (module / "main.go").write_text("package main\n\nfunc main() { not go }\n")
    profile = tmp_path / "op.yaml"
    profile.write_text("name: op\nbuild: {path: op}\nstart:\n  command: ['{binary}']\n")
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    listed = _aftershock("run", "features/harness/smoke.feature", "--profile", str(profile),
                         "--collect-only", "-p", "no:cacheprovider", env=env)
    assert listed.returncode == 0, listed.stdout + listed.stderr
    assert "1 test collected" in listed.stdout and "building" not in listed.stderr
    ran = _aftershock("run", "features/harness/smoke.feature", "--profile", str(profile),
                      "-p", "no:cacheprovider", env=env)
    assert ran.returncode == 2 and "building op@" in ran.stderr, ran.stdout + ran.stderr
