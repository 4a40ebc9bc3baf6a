"""Manifest builders for the workloads scenarios create (pure: no cluster needed)."""

from __future__ import annotations

from typing import Any

PAUSE_IMAGE = "registry.k8s.io/pause:3.10"  # never pulled: kwok simulates the containers


def selector_labels(name: str) -> dict[str, str]:
    return {"app.kubernetes.io/name": name}


def label_selector(name: str) -> str:
    return ",".join(f"{key}={value}" for key, value in selector_labels(name).items())


def pod_template(name: str, memory: str | None = None, spread_across_nodes: bool = False,
                 finalizers: list[str] | None = None) -> dict[str, Any]:
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
    metadata: dict[str, Any] = {"labels": selector_labels(name)}
    if finalizers:
        metadata["finalizers"] = list(finalizers)
    return {"metadata": metadata, "spec": spec}


def deployment(name: str, replicas: int, *, memory: str | None = None,
               spread_across_nodes: bool = False,
               finalizers: list[str] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "labels": selector_labels(name)},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": selector_labels(name)},
            "template": pod_template(name, memory, spread_across_nodes, finalizers),
        },
    }


def statefulset(name: str, replicas: int, *, when_scaled: str = "Retain",
                when_deleted: str = "Retain", storage: str = "1Gi") -> dict[str, Any]:
    """A StatefulSet whose pods each claim a volume, with the PVC retention policy given."""
    template = pod_template(name)
    template["spec"]["containers"][0]["volumeMounts"] = [{"name": "data", "mountPath": "/data"}]
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": name, "labels": selector_labels(name)},
        "spec": {
            "replicas": replicas,
            "serviceName": name,
            "selector": {"matchLabels": selector_labels(name)},
            "template": template,
            "persistentVolumeClaimRetentionPolicy": {"whenScaled": when_scaled,
                                                     "whenDeleted": when_deleted},
            "volumeClaimTemplates": [{
                "metadata": {"name": "data"},
                "spec": {"accessModes": ["ReadWriteOnce"],
                         "resources": {"requests": {"storage": storage}}},
            }],
        },
    }


def job(name: str, completions: int, parallelism: int = 1) -> dict[str, Any]:
    template = pod_template(name)
    template["spec"]["restartPolicy"] = "Never"
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "labels": selector_labels(name)},
        "spec": {"completions": completions, "parallelism": parallelism, "template": template},
    }


def pod(name: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
    template = pod_template(name)
    template["metadata"]["labels"].update(labels or {})
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, **template["metadata"]}, "spec": template["spec"]}
