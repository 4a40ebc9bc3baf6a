"""The smoke feature's Then steps fail when their property does not hold (a check that cannot
fail is a defect): here the node is NOT drained, so 'none on the drained node' must fail."""

from __future__ import annotations

import pytest

from aftershock import kube, workloads
from aftershock.scenario import StepFailed
from steps.workloads import a_spread_deployment, pods_running_elsewhere, pods_running_spread

pytestmark = pytest.mark.cluster


def test_none_on_the_drained_node_fails_when_the_node_still_runs_a_pod(aftershock_scenario):
    scenario = aftershock_scenario
    a_spread_deployment(scenario, "web", 3)
    pods_running_spread(scenario, 60, 3, "web", 3)
    pods = kube.core(scenario.api).list_namespaced_pod(
        scenario.namespace, label_selector=workloads.label_selector("web")).items
    node = pods[0].spec.node_name
    scenario.remember("drained node", node)  # but never drained
    with pytest.raises(StepFailed) as caught:
        pods_running_elsewhere(scenario, 2, 3, "web")
    assert f"none on node/{node}" in str(caught.value)
    assert f"on node/{node}" in str(caught.value).split("saw:")[1]


def test_running_on_more_nodes_than_exist_fails(aftershock_scenario):
    a_spread_deployment(aftershock_scenario, "web", 3)
    with pytest.raises(StepFailed, match="on 4 different nodes"):
        pods_running_spread(aftershock_scenario, 3, 3, "web", 4)
