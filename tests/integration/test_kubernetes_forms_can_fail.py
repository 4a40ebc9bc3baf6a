"""The Kubernetes-level S and N steps fail when their property does not hold: claims deleted on
scale-down are not 'still there'; a node that was never deleted still has its pods and lease."""

from __future__ import annotations

from pathlib import Path

import pytest

from aftershock.bdd.steps.history import within
from aftershock.bdd.steps.nodes import bound_to_node
from aftershock.bdd.steps.statefulsets import (
    a_stateful_set,
    a_stateful_set_with_claims,
    removed_claims_kept,
)
from aftershock.bdd.steps.workloads import scale
from aftershock.profile.load import load_profile
from aftershock.scenario import PropertyViolated

pytestmark = pytest.mark.cluster
PROFILE = Path(__file__).resolve().parents[2] / "profiles" / "kube-statefulset.yaml"


def test_claims_deleted_on_scale_down_are_caught(aftershock_scenario):
    scenario = aftershock_scenario
    scenario.remember("profile", load_profile(PROFILE))
    a_stateful_set_with_claims(scenario, "db", 2, "deleted")
    within(scenario, 60, "2 pods of db are Running")
    within(scenario, 30, "pvc/data-db-1 exists")
    scale(scenario, "StatefulSet", "db", 1)
    within(scenario, 30, "pvc/data-db-1 is gone")
    with pytest.raises(PropertyViolated, match="claims data-db-1 and their volumes exist"):
        removed_claims_kept(scenario, "db")


def test_a_node_that_keeps_its_pods_is_caught(aftershock_scenario):
    scenario = aftershock_scenario
    scenario.remember("profile", load_profile(PROFILE))
    a_stateful_set(scenario, "web", 1)
    within(scenario, 60, "1 pods of web are Running")
    node = scenario.timeline.state().get("pods", scenario.namespace, "web-0")["spec"]["nodeName"]
    scenario.remember("deleted node", node)  # but never deleted
    scenario.remember("bound to the deleted node", bound_to_node(scenario.timeline.state(), node))
    with pytest.raises(PropertyViolated, match=f"leases, pods bound to node/{node} is left"):
        within(scenario, 2, "nothing bound to the deleted node is left")
