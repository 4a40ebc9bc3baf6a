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


def _failure(keyword: str, words: str, function) -> pytest.fail.Exception:
    """How the step ``function`` fails its scenario, run through the pytest adapter."""
    with pytest.raises(pytest.fail.Exception) as failed:
        _adapter(StepDefinition(keyword, words, function))(_scenario(), None)
    return failed.value


def test_a_user_error_in_a_step_is_its_message_without_a_traceback():
    failure = _failure("given", "a step that refuses", _refusing)
    assert str(failure) == "rbac_from chart/: helm template could not render it: a name"
    assert failure.pytrace is False


def test_a_write_the_api_refused_is_one_line_naming_what_refused_it():
    """An admission webhook's denial (Kueue's pod webhook answered 404 for a namespace its
    cache had not seen) reached pytest as the client's exception and its stack."""
    from kubernetes.client.rest import ApiException

    def refusing(scenario):
        raise ApiException(status=404, reason="Not Found")

    failure = _failure("when", "a step whose write is refused", refusing)
    assert str(failure) == "harness error: the API refused it (HTTP 404): Not Found"
    assert failure.pytrace is False
