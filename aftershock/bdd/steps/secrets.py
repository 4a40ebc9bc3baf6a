"""Steps about Secrets: the values they hold never reach a report (aftershock.report.redact)."""

from __future__ import annotations

import base64

from aftershock.kube import api as kube
from aftershock.kube import door
from aftershock.scenario import Scenario, StepFailed, given, then


@given('a Secret {name:Name} with {key:Name} "{value}"')
def a_secret(scenario: Scenario, name: str, key: str, value: str) -> None:
    scenario.redactor.add(value)
    door.call(kube.core(scenario.api).create_namespaced_secret, scenario.namespace, {
        "metadata": {"name": name}, "stringData": {key: value}})


@then('the Secret {name:Name} holds {key:Name} "{value}"')
def secret_holds(scenario: Scenario, name: str, key: str, value: str) -> None:
    secret = kube.core(scenario.api).read_namespaced_secret(name, scenario.namespace)
    encoded = (secret.data or {}).get(key)
    held = base64.b64decode(encoded).decode(errors="replace") if encoded else None
    for item in (secret.data or {}).values():
        scenario.redactor.add(base64.b64decode(item))
    if held != value:
        # The values are shown, as a user debugging would want; reports mask them.
        raise StepFailed(f"secret/{scenario.namespace}/{name} holds {key}={held!r}, "
                         f"not {value!r}")
