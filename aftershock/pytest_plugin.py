"""The pytest11 plugin: options, collecting .feature files, and cleanup of dead runs."""

# Imports inside functions: start-up time. pytest loads this plugin in every session of a
# repository that installs aftershock, features or not; the engine (about a second) is
# imported by the hooks that need it.

from __future__ import annotations

import importlib
import re
import signal
import sys
import types
from pathlib import Path

import pytest

from aftershock.errors import UserError

FIXTURE_MODULES = ("aftershock.bdd.reporting", "aftershock.bdd.fixtures", "aftershock.bdd.runner")
# The project (pytest's rootdir), for the hooks pytest gives no config: its clusters/ holds
# the shapes a `@shape:` tag names. The engine takes it as an argument.
PROJECT: list[Path] = []
SHARD_KEY = pytest.StashKey[tuple]()  # (the shard, scenarios kept, scenarios collected)


def pytest_addoption(parser: pytest.Parser) -> None:
    from aftershock.runs.options import add_to_pytest

    add_to_pytest(parser.getgroup("aftershock"))


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "expect_violation(property): the scenario must violate this property")
    config.addinivalue_line(
        "markers", "aftershock_shape(name): the scenario runs on a cluster of clusters/<name>.yaml")
    config.addinivalue_line(
        "markers", "aftershock_concept(name): the scenario needs a profile with this concept")
    config.addinivalue_line(
        "markers", "aftershock_records(*kinds): more kinds ((group, plural)) to record")
    config.addinivalue_line(
        "markers", "aftershock_api(*group_versions): APIs the scenario needs; skipped where "
        "the cluster's Kubernetes does not serve one")
    config.addinivalue_line(
        "markers", "cluster: needs a running cluster (every feature's scenarios do)")
    config.addinivalue_line(
        "markers", "explore: a scenario `aftershock explore` found (select with -m explore)")
    config.addinivalue_line(
        "markers", "demo: a scenario that represents its family in `make demo` (-m demo)")
    PROJECT[:] = [Path(config.rootpath)]
    for module in FIXTURE_MODULES:
        if not config.pluginmanager.has_plugin(module):
            # registered, not import_plugin'd: that would mark the module for assertion
            # rewriting, and warn that `aftershock run` (or a conftest) had imported it first
            config.pluginmanager.register(importlib.import_module(module), module)
    from aftershock.bdd.reporting import configure

    configure(config)
    _validate_inputs(config)
    # SIGTERM ends the session like Ctrl-C does: fixtures tear down, clusters are removed.
    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _interrupt)


def _validate_inputs(config: pytest.Config) -> None:
    """Bad shape, profile or provider (kind with no container engine, an existing cluster's
    kubeconfig): one line before anything is collected or started."""
    try:
        profiles = check_inputs(config.option)
        for profile in profiles:  # --collect-only runs nothing, and so builds nothing
            if profile.build is not None and not hasattr(config, "workerinput") \
                    and not config.option.collectonly:
                from aftershock.go.builds import ensure

                ensure(profile.build)  # built once, before any scenario, with progress
    except UserError as exc:  # one line and exit 2, as `aftershock run` says it
        pytest.exit(f"aftershock: error: {exc}", returncode=exc.exit_code)


def check_inputs(option: object, before_pytest: bool = False) -> list:
    """The run's inputs (repeat, shard, the provider's own checks: an existing cluster's
    kubeconfig, kind's engine; the shape, the profiles), read and checked: a `UserError` for
    the first that is wrong. `aftershock run` asks this too, ``before_pytest`` starts, so that
    its error reads as every other one; a provider no module has registered yet is left to
    pytest then, which imports the project's conftest.py and ``-p`` plugins first."""
    from aftershock.machine.capabilities import Capability
    from aftershock.machine.limits import MAX_REPEAT
    from aftershock.machine.shape import load_shape
    from aftershock.profile.load import load_profile
    from aftershock.providers.base import PROVIDERS, ClusterRequest
    from aftershock.providers.base import get as provider_named

    repeat = option.aftershock_repeat
    if not 1 <= repeat <= MAX_REPEAT:
        raise UserError(f"--repeat {repeat}: between 1 and {MAX_REPEAT}")
    if option.aftershock_shard:
        from aftershock.runs import shards

        shards.parse(option.aftershock_shard)
    provider = None
    if not before_pytest or option.aftershock_cluster in PROVIDERS:
        provider = provider_named(option.aftershock_cluster)
        provider.check(ClusterRequest.from_options(option))  # now, not at the first scenario
    if option.aftershock_shape:
        load_shape(option.aftershock_shape)
    profiles = [load_profile(path) for path in option.aftershock_profile]
    for profile in profiles:
        _known_properties(profile)
    if provider and Capability.LOAD_IMAGE in provider.capabilities:  # nodes keep driver state
        from aftershock.profile.load import node_agents_apart

        node_agents_apart(profiles)
    return profiles


def _known_properties(profile) -> None:
    """A profile's ``not_applicable`` names properties of the catalogue."""
    from aftershock.properties import PROPERTIES
    from aftershock.properties.base import sorted_ids

    unknown = [id for id in profile.not_applicable if id not in PROPERTIES]
    if unknown:
        raise UserError(f"{profile.path}: field 'not_applicable' names {', '.join(unknown)}, "
                        "no property of the catalogue; known: "
                        f"{', '.join(i for i in sorted_ids(PROPERTIES) if i[-1].isdigit())}")


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


@pytest.hookimpl(tryfirst=True)
def pytest_bdd_apply_tag(tag: str, function):
    """`@expect-violation:<property>` becomes the expect_violation marker."""
    if tag.startswith("expect-violation:"):
        pytest.mark.expect_violation(tag.split(":", 1)[1])(function)
        return True
    if tag.startswith("concept:"):
        from aftershock.profile.load import CONCEPTS, known_concept

        name = tag.split(":", 1)[1]
        if not known_concept(name):
            raise UserError(f"unknown concept '@{tag}'; known: {', '.join(sorted(CONCEPTS))}")
        pytest.mark.aftershock_concept(name)(function)
        return True
    if tag.startswith("records:"):
        from aftershock.timeline.resources import named

        kinds = [named(kind) for kind in tag.split(":", 1)[1].split(",") if kind]
        if not kinds:
            raise UserError(f"'@{tag}': expected kinds as kubectl names them, separated by "
                            "commas (@records:roles.rbac.authorization.k8s.io,services)")
        pytest.mark.aftershock_records(*kinds)(function)
        return True
    if tag.startswith("api:"):
        wanted = [part for part in tag.split(":", 1)[1].split(",") if part]
        if not wanted or not all(re.fullmatch(r"[a-z0-9.-]+/v[0-9]+[a-z0-9]*", part)
                                 for part in wanted):
            raise UserError(f"'@{tag}': expected API group/versions separated by commas "
                            "(@api:scheduling.k8s.io/v1alpha2,resource.k8s.io/v1)")
        pytest.mark.aftershock_api(*wanted)(function)
        return True
    if tag.startswith("shape:"):  # checked with the feature's path, once items are known
        pytest.mark.aftershock_shape(tag.split(":", 1)[1])(function)
        return True
    return None


def pytest_sessionstart(session: pytest.Session) -> None:
    from aftershock.providers import clusters

    if not hasattr(session.config, "workerinput"):
        clusters.gc()


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    profiles = metafunc.config.option.aftershock_profile
    if len(profiles) > 1 and "aftershock_profile" in metafunc.fixturenames:
        metafunc.parametrize("aftershock_profile", profiles, indirect=True,
                             ids=[Path(p).stem for p in profiles])
    count = metafunc.config.option.aftershock_repeat
    if count > 1:
        metafunc.fixturenames.append("aftershock_repeat")
        metafunc.parametrize("aftershock_repeat", range(1, count + 1),
                             ids=[f"run{i}" for i in range(1, count + 1)])


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A scenario tagged @concept:<name> is skipped before any set-up when its profile lacks
    the concept (or no profile is given), or installs only in the cluster and the provider
    cannot load its image: no namespace, recorder or cluster for nothing."""
    from aftershock.profile.load import load_profile

    _keep_shard(config, items)
    given = config.option.aftershock_profile
    for item in items:
        needs = [mark.args[0] for mark in item.iter_markers("aftershock_concept")]
        if not needs:
            continue
        callspec = getattr(item, "callspec", None)
        path = (callspec.params.get("aftershock_profile") if callspec else None) or (
            given[0] if given else None)
        if path is None:
            why = "no implementation profile given (--profile)"
        else:
            profile = load_profile(path)
            missing = [name for name in needs if profile.concept(name) is None]
            why = (f"profile {profile.name} does not provide the concept '{missing[0]}'"
                   if missing else _cannot_install(profile, config.option.aftershock_cluster))
            if why is None:
                continue
        item.add_marker(pytest.mark.skip(reason=why))


def pytest_collection_finish(session: pytest.Session) -> None:
    """The control-plane binaries of every version the session's embedded clusters run, built
    now if this machine has not built them (once, cached), with progress shown, after the
    inputs were checked and the scenarios collected, before any cluster starts."""
    config = session.config
    if config.option.collectonly or hasattr(config, "workerinput"):
        return
    from aftershock.profile.load import load_profile

    try:  # the source trees the run's implementations build from, fetched now, not at loading
        for path in config.option.aftershock_profile or ():
            load_profile(path).fetch()
    except UserError as exc:
        pytest.exit(f"aftershock: error: {exc}", returncode=2)
    from aftershock.providers.base import get as provider_named

    if not provider_named(config.option.aftershock_cluster).builds_toolchain:
        return
    from aftershock.go import toolchain

    wanted = _versions(config, [item for item in session.items
                                if "aftershock_scenario" in getattr(item, "fixturenames", ())
                                and not item.get_closest_marker("skip")])
    capture = config.pluginmanager.getplugin("capturemanager")
    try:
        for version in wanted:
            if toolchain.find(version) is None:
                with capture.global_and_fixture_disabled():
                    toolchain.build(version)
    except UserError as exc:
        pytest.exit(f"aftershock: error: {exc}", returncode=2)


def _versions(config: pytest.Config, items: list[pytest.Item]) -> list[str | None]:
    """The Kubernetes versions these scenarios' clusters run (None: the default): a shape's
    kubernetesVersion, else --kubernetes-version."""
    from aftershock.machine.shape import default_shape, load_shape
    from aftershock.providers.clusters import shape_file

    given = config.option.aftershock_kubernetes_version
    shapes: dict[Path | None, object] = {}
    found: list[str | None] = []
    for item in items:
        tagged = item.get_closest_marker("aftershock_shape")
        name = shape_file(tagged.args[0], PROJECT[0], Path(item.path)) if tagged else None
        if name not in shapes:
            shapes[name] = load_shape(name) if name else \
                load_shape(config.option.aftershock_shape) if config.option.aftershock_shape \
                else default_shape(PROJECT[0])
        version = getattr(shapes[name], "kubernetes_version", None) or given
        if version not in found:
            found.append(version)
    return found


def _keep_shard(config: pytest.Config, items: list[pytest.Item]) -> None:
    """--shard K/N: the scenarios of the other shards are deselected, as -k deselects."""
    if not config.option.aftershock_shard:
        return
    from aftershock.runs import shards

    shard = shards.parse(config.option.aftershock_shard)
    mine = shard.deal([item.nodeid for item in items])
    kept = [item for item in items if item.nodeid in mine]
    dropped = [item for item in items if item.nodeid not in mine]
    config.stash[SHARD_KEY] = (shard, len(kept), len(items))
    if dropped:
        config.hook.pytest_deselected(items=dropped)
    items[:] = kept


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """A shard that no scenario fell in has nothing to run, which is no failure of the run
    (pytest would exit 5, 'no tests collected'); a run that collected nothing still is."""
    found = session.config.stash.get(SHARD_KEY, None)
    if found is not None and found[1] == 0 and found[2] > 0 and exitstatus == 5:
        print(f"aftershock: shard {found[0]}: none of the {found[2]} scenarios falls in it",
              file=sys.stderr)
        session.exitstatus = 0


def _cannot_install(profile, cluster: str) -> str | None:
    """A profile that installs only in the cluster, on a provider that cannot load its image:
    the same words the step would raise, before any set-up."""
    from aftershock.machine.capabilities import Capability, MissingCapability
    from aftershock.providers.base import get as provider_named

    if not profile.in_cluster_only or Capability.LOAD_IMAGE in provider_named(cluster).capabilities:
        return None

    return str(MissingCapability(cluster, Capability.LOAD_IMAGE,
                                 f"profile {profile.name} installs its implementation in the "
                                 "cluster only (install_in_cluster); run it with --cluster=kind"))


@pytest.fixture
def aftershock_repeat(request: pytest.FixtureRequest) -> int:
    return getattr(request, "param", 1)


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    """The clusters the run used (version per run); with --repeat, how often each scenario
    passed, so a flaky one stands out."""
    from aftershock.bdd.fixtures import POOL_KEY

    pool = config.stash.get(POOL_KEY, None)
    if pool is not None:
        for line in pool.used:
            terminalreporter.write_line(f"aftershock: {line}")
    if config.option.aftershock_repeat <= 1:
        return
    from aftershock.runs.flakes import flake_table

    reports = [r for key in ("passed", "failed", "error", "skipped")
               for r in terminalreporter.stats.get(key, []) if hasattr(r, "nodeid")]
    terminalreporter.write_sep("=", "aftershock flake table")
    for line in flake_table(reports):
        terminalreporter.write_line(line)


def pytest_collect_file(file_path: Path, parent: pytest.Collector):
    if file_path.suffix == ".feature":
        return FeatureFile.from_parent(parent, path=file_path)
    return None


def _known_shape(test, feature: Path) -> None:
    """A `@shape:` tag names a shape of the project that owns the feature (or of pytest's
    rootdir): one that names none is the feature's collection error, naming the known ones."""
    from aftershock.providers.clusters import shape_file

    for mark in getattr(test, "pytestmark", []):
        if mark.name == "aftershock_shape":
            shape_file(mark.args[0], PROJECT[0], feature)


class FeatureFile(pytest.Module):
    """A .feature file collected directly: its scenarios become tests via pytest-bdd."""

    def _getobj(self):
        from pytest_bdd import scenarios

        from aftershock.bdd.runner import register_steps
        from aftershock.features import check_steps

        check_steps(self.path)
        module = types.ModuleType(f"features.{self.path.stem}")
        module.__file__ = str(self.path)
        namespace = module.__dict__
        register_steps(namespace)
        namespace["__scenarios__"] = scenarios
        exec(compile(f"__scenarios__({str(self.path)!r})", str(self.path), "exec"), namespace)
        for name, value in list(namespace.items()):
            if name.startswith("test_"):
                value.__module__ = module.__name__
                pytest.mark.cluster(value)
                # Known at collection (pytest-bdd asks for it only when a step runs), so that
                # several --profile values parametrize every scenario.
                pytest.mark.usefixtures("aftershock_scenario")(value)
                _known_shape(value, self.path)
        return module

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, UserError):
            return str(excinfo.value)
        return super().repr_failure(excinfo)
