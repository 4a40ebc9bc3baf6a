"""This project's own steps. Declare them as aftershock's are, with a pattern in `parse`
format; the first argument is the scenario every step acts on. `aftershock steps` lists these
beside the built-in ones, and a typo in a feature names the closest of them all."""

from aftershock import door, kube
from aftershock.scenario import Scenario, given


@given("a ConfigMap {name:Name} holding {key}={value}")
def a_config_map(scenario: Scenario, name: str, key: str, value: str) -> None:
    scenario.timeline.mark(f"create configmap/{scenario.namespace}/{name}")
    door.call(kube.core(scenario.api).create_namespaced_config_map, scenario.namespace, {
        "metadata": {"name": name}, "data": {key: value}})
