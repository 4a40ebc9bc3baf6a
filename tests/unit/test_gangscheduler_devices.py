"""The reference gang scheduler's devices: a pod's claims take free devices of the node it is
placed on, a device another claim has allocated is not free, and a node with none takes no
claiming pod (a pod without claims is placed as before)."""

from __future__ import annotations

from implementations.gangscheduler import decisions


def _node(name: str) -> dict:
    return {"metadata": {"name": name}, "spec": {},
            "status": {"allocatable": {"cpu": "1", "memory": "150Mi", "pods": "10"},
                       "conditions": [{"type": "Ready", "status": "True"}]}}


def _pod(name: str, claims: int = 1) -> dict:
    return {"metadata": {"name": name}, "spec": {
        "resourceClaims": [{"name": f"c{i}"} for i in range(claims)],
        "containers": [{"resources": {"requests": {"memory": "80Mi"}}}]}}


def _slice(node: str, devices: int = 1) -> dict:
    return {"spec": {"driver": "d", "nodeName": node, "pool": {"name": node},
                     "devices": [{"name": f"dev-{i}"} for i in range(devices)]}}


def _claim(pool: str, device: str) -> dict:
    return {"status": {"allocation": {"devices": {"results": [
        {"driver": "d", "pool": pool, "device": device}]}}}}


def test_an_allocated_device_is_not_free():
    free = decisions.free_devices([_slice("a"), _slice("b", 2)], [_claim("b", "dev-0")])
    assert free == {"a": [("d", "a", "dev-0")], "b": [("d", "b", "dev-1")]}


def test_a_claiming_pod_goes_only_where_a_device_is_free():
    nodes = [_node("a"), _node("b")]
    free = decisions.free_devices([_slice("b")], [])
    left = decisions.room(nodes, [], free)
    placed = decisions.place([_pod("p0"), _pod("p1")], nodes, left, "correct")
    assert [(decisions.name(p), n) for p, n in placed] == [("p0", "b")]  # p1: no device left
    plain = decisions.place([_pod("q", claims=0)], nodes, decisions.room(nodes, [], free),
                            "correct")
    assert [n for _, n in plain] == ["a"]
