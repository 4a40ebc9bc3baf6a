"""Manifest builders for the workloads scenarios create (pure: no cluster needed)."""

from __future__ import annotations

from typing import Any

PAUSE_IMAGE = "registry.k8s.io/pause:3.10"  # never pulled: kwok simulates the containers


def selector_labels(name: str) -> dict[str, str]:
    return {"app.kubernetes.io/name": name}


def label_selector(name: str) -> str:
    return ",".join(f"{key}={value}" for key, value in selector_labels(name).items())


def pod_template(name: str, memory: str | None = None,
                 spread_across_nodes: bool = False) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "main", "image": PAUSE_IMAGE}
    if memory:
        container["resources"] = {"requests": {"memory": memory}}
    spec: dict[str, Any] = {"containers": [container], "terminationGracePeriodSeconds": 0}
    if spread_across_nodes:
        spec["topologySpreadConstraints"] = [{
            "maxSkew": 1,
            "topologyKey": "kubernetes.io/hostname",
            "whenUnsatisfiable": "DoNotSchedule",
            "nodeTaintsPolicy": "Honor",  # a cordoned node does not count against the skew
            "labelSelector": {"matchLabels": selector_labels(name)},
        }]
    return {"metadata": {"labels": selector_labels(name)}, "spec": spec}


def deployment(name: str, replicas: int, *, memory: str | None = None,
               spread_across_nodes: bool = False) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "labels": selector_labels(name)},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": selector_labels(name)},
            "template": pod_template(name, memory, spread_across_nodes),
        },
    }
