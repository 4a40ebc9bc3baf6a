"""Steps about the implementation under test, through the concepts its profile maps."""

from __future__ import annotations

from string import Template

import yaml

from aftershock import checks
from aftershock.faults.watchdelay import Rule, Upstream, WatchDelay
from aftershock.scenario import Scenario, StepFailed, given, then, when
from aftershock.sut.concepts import NoConcept, concept, replica_group_selector, set_path
from steps.history import judge_created, judge_deleted_none


def _implementation(scenario: Scenario):
    if "implementation" not in scenario.facts:
        raise StepFailed("no earlier step started the implementation under test")
    return scenario.facts["implementation"]


@given("the implementation under test is running")
def implementation_running(scenario: Scenario) -> None:
    from aftershock.sut.runner import Implementation, ca_data

    profile = scenario.facts.get("profile")
    if profile is None:
        raise NoConcept("no implementation profile given (--profile)")
    if profile.start is None:  # a built-in controller: it is already running
        for manifest in profile.manifests:
            scenario.timeline.mark(f"install {manifest}")
        scenario.remember("implementation", None)
        return
    server, ca = ca_data(scenario.cluster.info.kubeconfig)
    workdir = (scenario.report_dir or scenario.cluster.info.kubeconfig.parent) / "implementation"
    implementation = Implementation(profile, scenario.api, scenario.namespace, workdir,
                                    server, ca)
    implementation.install()
    scenario.on_cleanup(f"stop {profile.name}", implementation.stop)
    implementation.start()
    scenario.timeline.mark(f"{profile.name} started")
    scenario.remember("implementation", implementation)


def _api_version(resource: dict) -> str:
    return f"{resource['group']}/{resource['version']}" if resource["group"] else \
        resource["version"]


def _dynamic(scenario: Scenario, resource: dict):
    from kubernetes import dynamic

    client = scenario.facts.get("dynamic client")
    if client is None:
        client = scenario.remember("dynamic client", dynamic.DynamicClient(scenario.api))
    return client.resources.get(api_version=_api_version(resource), kind=resource["kind"])


@given("a replica group {name:Name} with {replicas:d} replicas")
def a_replica_group(scenario: Scenario, name: str, replicas: int) -> None:
    group = concept(scenario, "replica_group")
    resource = group["resource"]
    if group.get("manifest"):
        template = Template(scenario.facts["profile"].resolve(group["manifest"]).read_text())
        body = yaml.safe_load(template.substitute(name=name, replicas=replicas))
    else:
        body = {"apiVersion": _api_version(resource), "kind": resource["kind"],
                "metadata": {"name": name}}
    set_path(body, group["replicas_path"], replicas)
    scenario.timeline.mark(f"create {resource['kind'].lower()}/{scenario.namespace}/{name}")
    _dynamic(scenario, resource).create(body=body, namespace=scenario.namespace)


@when("I scale the replica group {name:Name} to {replicas:d}")
def scale_group(scenario: Scenario, name: str, replicas: int) -> None:
    group = concept(scenario, "replica_group")
    resource = group["resource"]
    scenario.timeline.mark(f"scale {resource['kind'].lower()}/{scenario.namespace}/{name} "
                           f"to {replicas}")
    _dynamic(scenario, resource).patch(
        name=name, namespace=scenario.namespace, body=set_path({}, group["replicas_path"],
                                                                replicas),
        content_type="application/merge-patch+json")


@then("at no point did the replica group {name:Name} have more than {count:d} live pods")
def group_never_more_than(scenario: Scenario, name: str, count: int) -> None:
    scenario.judge(checks.never_more_than(
        scenario.history(), count, namespace=scenario.namespace,
        selector=replica_group_selector(scenario, name), what=f"live pods of replica group {name}"))


class SutWatchDelay:
    """Fault: the implementation restarts with a kubeconfig through a WatchDelay proxy."""

    def __init__(self, implementation, rules: list[Rule]):
        self.implementation, self.rules, self.proxy = implementation, rules, None

    @property
    def description(self) -> str:
        what = ", ".join(f"{r.resource} +{r.delay:g}s" for r in self.rules)
        return f"watches of {self.implementation.profile.name} delayed ({what})"

    def apply(self) -> None:
        workdir = self.implementation.workdir / "proxy"
        upstream = Upstream.from_kubeconfig(self.implementation.kubeconfig, workdir)
        self.proxy = WatchDelay(upstream, workdir / "implementation-proxy.jsonl",
                                self.implementation.profile.name).start()
        self.proxy.set_rules(self.rules)
        self.implementation.stop()
        self.implementation.start(self.proxy.write_kubeconfig(workdir / "kubeconfig"))

    def revert(self) -> None:
        self.implementation.stop()
        if self.proxy is not None:
            self.proxy.stop()


def delay_implementation(scenario: Scenario, rule: Rule) -> None:
    """'the pod watch of the implementation is delayed by N seconds' (see steps.nodes): its
    process restarts behind a proxy, or, for a built-in controller, its component does."""
    if rule.delay <= 0:
        return
    implementation = _implementation(scenario)
    if implementation is not None:
        scenario.inject(SutWatchDelay(implementation, [rule]))
        return
    from aftershock.faults.watchdelay import DelayedWatch

    target = scenario.facts["profile"].watch_delay_target
    if target is None:
        raise StepFailed(f"profile {scenario.facts['profile'].name} has no process and no "
                         "watch_delay_target: nothing to delay")
    workdir = (scenario.report_dir or scenario.cluster.paths.workdir) / "proxy"
    scenario.inject(DelayedWatch(scenario.cluster, target, [rule], workdir))


def _actor(scenario: Scenario) -> str:
    implementation = _implementation(scenario)
    if implementation is not None:
        return implementation.actor
    actor = scenario.facts["profile"].actor
    if actor is None:
        raise StepFailed(f"profile {scenario.facts['profile'].name} names no actor")
    return actor


@then("the implementation created exactly {count:d} pods of the replica group {name:Name}")
def implementation_created(scenario: Scenario, count: int, name: str) -> None:
    actor = _actor(scenario)
    judge_created(scenario, replica_group_selector(scenario, name), count,
                  lambda user: user == actor, actor, f"replica group {name}")


@then("the implementation deleted no pod of the replica group {name:Name}")
def implementation_deleted_none(scenario: Scenario, name: str) -> None:
    actor = _actor(scenario)
    judge_deleted_none(scenario, replica_group_selector(scenario, name),
                       lambda user: user == actor, actor, f"replica group {name}")
