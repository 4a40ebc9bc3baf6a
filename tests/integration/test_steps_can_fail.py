"""The smoke feature's Then steps fail when their property does not hold (a check that cannot
fail is a defect): here the node is NOT drained, so 'none on the drained node' must fail."""

from __future__ import annotations

import pytest

from aftershock.bdd.steps.history import within
from aftershock.bdd.steps.workloads import a_spread_deployment
from aftershock.kube import api as kube
from aftershock.kube import workloads
from aftershock.scenario import PropertyViolated

pytestmark = pytest.mark.cluster


def test_none_on_the_drained_node_fails_when_the_node_still_runs_a_pod(aftershock_scenario):
    scenario = aftershock_scenario
    a_spread_deployment(scenario, "web", 3)
    within(scenario, 60, "3 pods of web are Running on 3 different nodes")
    pods = kube.core(scenario.api).list_namespaced_pod(
        scenario.namespace, label_selector=workloads.label_selector("web")).items
    node = pods[0].spec.node_name
    scenario.remember("drained node", node)  # but never drained
    with pytest.raises(PropertyViolated) as caught:
        within(scenario, 2, "3 pods of web are Running, none on the drained node")
    message = str(caught.value)
    assert f"none on node/{node}" in message and "did not happen within 2s" in message


def test_running_on_more_nodes_than_exist_fails(aftershock_scenario):
    a_spread_deployment(aftershock_scenario, "web", 3)
    with pytest.raises(PropertyViolated, match="on 4 different nodes"):
        within(aftershock_scenario, 3, "3 pods of web are Running on 3 different nodes".replace(
            "3 different", "4 different"))
