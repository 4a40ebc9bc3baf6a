"""Steps about the implementation under test, through the concepts its profile maps."""

from __future__ import annotations

from aftershock import checks
from aftershock.faults.watchdelay import Rule, Upstream, WatchDelay
from aftershock.scenario import Scenario, StepFailed, given, then, when
from aftershock.sut.concepts import NoConcept, concept, replica_group_selector, set_path


def _implementation(scenario: Scenario):
    implementation = scenario.facts.get("implementation")
    if implementation is None:
        raise StepFailed("no earlier step started the implementation under test")
    return implementation


@given("the implementation under test is running")
def implementation_running(scenario: Scenario) -> None:
    from aftershock.sut.runner import Implementation, ca_data

    profile = scenario.facts.get("profile")
    if profile is None:
        raise NoConcept("no implementation profile given (--profile)")
    server, ca = ca_data(scenario.cluster.info.kubeconfig)
    workdir = (scenario.report_dir or scenario.cluster.info.kubeconfig.parent) / "implementation"
    implementation = Implementation(profile, scenario.api, scenario.namespace, workdir,
                                    server, ca)
    implementation.install()
    scenario.on_cleanup(f"stop {profile.name}", implementation.stop)
    implementation.start()
    scenario.timeline.mark(f"{profile.name} started")
    scenario.remember("implementation", implementation)


@given("a replica group {name:Name} with {replicas:d} replicas")
def a_replica_group(scenario: Scenario, name: str, replicas: int) -> None:
    group = concept(scenario, "replica_group")
    resource = group["resource"]
    body = set_path({"apiVersion": f"{resource['group']}/{resource['version']}",
                 "kind": resource["kind"], "metadata": {"name": name}},
                group["replicas_path"], replicas)
    scenario.timeline.mark(f"create {resource['kind'].lower()}/{scenario.namespace}/{name}")
    _objects(scenario).create_namespaced_custom_object(
        resource["group"], resource["version"], scenario.namespace, resource["plural"], body)


@when("I scale the replica group {name:Name} to {replicas:d}")
def scale_group(scenario: Scenario, name: str, replicas: int) -> None:
    group = concept(scenario, "replica_group")
    resource = group["resource"]
    scenario.timeline.mark(f"scale {resource['kind'].lower()}/{scenario.namespace}/{name} "
                           f"to {replicas}")
    _objects(scenario).patch_namespaced_custom_object(
        resource["group"], resource["version"], scenario.namespace, resource["plural"], name,
        set_path({}, group["replicas_path"], replicas))


def _objects(scenario: Scenario):
    from kubernetes import client

    return client.CustomObjectsApi(scenario.api)


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
    """'the pod watch of the implementation is delayed by N seconds' (see steps.nodes)."""
    if rule.delay > 0:
        scenario.inject(SutWatchDelay(_implementation(scenario), [rule]))
