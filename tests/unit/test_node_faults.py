"""A node taken out of service: the out-of-service taint added beside the node's own taints,
and removed again leaving them as they were."""

from __future__ import annotations

from types import SimpleNamespace

from kubernetes import client

from aftershock.faults import nodes
from aftershock.kube import api as kube


class FakeNodes:
    def __init__(self, taints):
        self.taints = taints
        self.patches = []

    def read_node(self, name):
        return SimpleNamespace(spec=SimpleNamespace(taints=[client.V1Taint(**t)
                                                            for t in self.taints]))

    def patch_node(self, name, body):
        self.patches.append(body)
        self.taints = body["spec"]["taints"] or []


def test_out_of_service_keeps_the_nodes_other_taints(monkeypatch):
    unreachable = {"key": "node.kubernetes.io/unreachable", "effect": "NoExecute"}
    fake = FakeNodes([unreachable])
    monkeypatch.setattr(kube.client, "CoreV1Api", lambda api: fake)
    monkeypatch.setattr(kube.door, "call", lambda method, *args: method(*args))
    fault = nodes.OutOfService(client.ApiClient(), "node-1")
    fault.apply()
    assert fake.taints == [unreachable, nodes.OUT_OF_SERVICE]
    assert fault.description == "node/node-1 out of service"
    fault.revert()
    assert fake.taints == [unreachable]
    fake.taints = []
    fault.revert()  # nothing to remove: the patch clears the list
    assert fake.patches[-1] == {"spec": {"taints": None}}
