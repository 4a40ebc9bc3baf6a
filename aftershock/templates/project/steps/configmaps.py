"""An example step: a ConfigMap, written through aftershock's one write door (Strict, read
back)."""

from aftershock.kube import api, door
from aftershock.scenario import Scenario, given


@given("a ConfigMap {name:Name} holding {key}={value}")
def a_config_map(scenario: Scenario, name: str, key: str, value: str) -> None:
    scenario.timeline.mark(f"create configmap/{scenario.namespace}/{name}")
    door.call(api.core(scenario.api).create_namespaced_config_map, scenario.namespace, {
        "metadata": {"name": name}, "data": {key: value}})
