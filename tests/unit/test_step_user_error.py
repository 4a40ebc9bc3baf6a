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


def test_a_user_error_in_a_step_is_its_message_without_a_traceback():
    definition = StepDefinition("given", "a step that refuses", _refusing)
    scenario = SimpleNamespace(property_label=None, violations=[], judged=[],
                               redactor=SimpleNamespace(text=lambda text: text))
    with pytest.raises(pytest.fail.Exception) as failed:
        _adapter(definition)(scenario, None)
    assert str(failed.value) == "rbac_from chart/: helm template could not render it: a name"
    assert failed.value.pytrace is False
