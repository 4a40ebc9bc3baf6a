"""A step that meets input it cannot use (a profile's chart that does not render, a manifest
not there) fails its scenario with the one-line message alone, as a failed step does: no
traceback of the harness's own code."""

from types import SimpleNamespace

import pytest

from aftershock.bdd.runner import _adapter
from aftershock.errors import UserError
from aftershock.grammar import StepDefinition


def _refusing(scenario):
    raise UserError("rbac_from chart/: helm template could not render it: a name")


def _scenario() -> SimpleNamespace:
    """What a step's adapter reads of its scenario, and no more."""
    return SimpleNamespace(property_label=None, violations=[], judged=[],
                           redactor=SimpleNamespace(text=lambda text: text))


def test_a_user_error_in_a_step_is_its_message_without_a_traceback():
    definition = StepDefinition("given", "a step that refuses", _refusing)
    scenario = _scenario()
    with pytest.raises(pytest.fail.Exception) as failed:
        _adapter(definition)(scenario, None)
    assert str(failed.value) == "rbac_from chart/: helm template could not render it: a name"
    assert failed.value.pytrace is False


def test_a_write_the_api_refused_is_one_line_naming_what_refused_it():
    """An admission webhook's denial (Kueue's pod webhook answered 404 for a namespace its
    cache had not seen) reached pytest as the client's exception and its stack."""
    from kubernetes.client.rest import ApiException

    def refusing(scenario):
        raise ApiException(status=404, reason="Not Found")

    definition = StepDefinition("when", "a step whose write is refused", refusing)
    scenario = _scenario()
    with pytest.raises(pytest.fail.Exception) as failed:
        _adapter(definition)(scenario, None)
    assert str(failed.value) == "harness error: the API refused it (HTTP 404): Not Found"
    assert failed.value.pytrace is False
