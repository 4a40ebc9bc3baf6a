"""Manifest builders for the workloads scenarios create (pure: no cluster needed)."""

from __future__ import annotations

from typing import Any

PAUSE_IMAGE = "registry.k8s.io/pause:3.10"  # never pulled: kwok simulates the containers
# answers TCP on a port; preloaded in the kind node image built here (containers.images.preloaded)
LISTENER_IMAGE = "aftershock.local/listener:1"
# A Running pod so annotated (a duration) Succeeds that long after on the embedded cluster (kwok)
SUCCEED_AFTER = "aftershock.io/succeed-after"


def selector_labels(name: str) -> dict[str, str]:
    return {"app.kubernetes.io/name": name}


def label_selector(name: str) -> str:
    return ",".join(f"{key}={value}" for key, value in selector_labels(name).items())


def listening(port: int) -> dict[str, Any]:
    """A container that answers on ``port`` and is Ready only while it answers the kubelet's
    probe (every second, one miss is enough): readiness that a cut network takes away."""
    return {"name": "main", "image": LISTENER_IMAGE, "imagePullPolicy": "Never",
            "args": [str(port)], "ports": [{"containerPort": port}],
            "readinessProbe": {"tcpSocket": {"port": port}, "periodSeconds": 1,
                               "timeoutSeconds": 1, "failureThreshold": 1}}


def pod_template(name: str, memory: str | None = None, spread_across_nodes: bool = False,
                 finalizers: list[str] | None = None,
                 port: int | None = None) -> dict[str, Any]:
    container: dict[str, Any] = listening(port) if port else {"name": "main",
                                                              "image": PAUSE_IMAGE}
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
               spread_across_nodes: bool = False, finalizers: list[str] | None = None,
               port: int | None = None) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "labels": selector_labels(name)},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": selector_labels(name)},
            "template": pod_template(name, memory, spread_across_nodes, finalizers, port),
        },
    }


def one_per_node(name: str) -> dict[str, Any]:
    """Required pod anti-affinity on the hostname: never two pods of ``name`` on one node."""
    return {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{
        "topologyKey": "kubernetes.io/hostname",
        "labelSelector": {"matchLabels": selector_labels(name)}}]}}


def statefulset(name: str, replicas: int, *, when_scaled: str = "Retain",
                when_deleted: str = "Retain", storage: str = "1Gi",
                storage_class: str | None = None, claims: bool = True,
                spread: bool = False) -> dict[str, Any]:
    """A StatefulSet whose pods each claim a volume (unless ``claims`` is false), with the PVC
    retention policy given; ``spread`` keeps its pods one per node."""
    template = pod_template(name)
    if spread:
        template["spec"]["affinity"] = one_per_node(name)
    spec: dict[str, Any] = {
        "replicas": replicas,
        "serviceName": name,
        "podManagementPolicy": "Parallel",
        "selector": {"matchLabels": selector_labels(name)},
        "template": template,
    }
    if claims:
        template["spec"]["containers"][0]["volumeMounts"] = [{"name": "data",
                                                              "mountPath": "/data"}]
        claim: dict[str, Any] = {"accessModes": ["ReadWriteOnce"],
                                 "resources": {"requests": {"storage": storage}}}
        if storage_class:
            claim["storageClassName"] = storage_class
        spec["persistentVolumeClaimRetentionPolicy"] = {"whenScaled": when_scaled,
                                                        "whenDeleted": when_deleted}
        spec["volumeClaimTemplates"] = [{"metadata": {"name": "data"}, "spec": claim}]
    return {"apiVersion": "apps/v1", "kind": "StatefulSet",
            "metadata": {"name": name, "labels": selector_labels(name)}, "spec": spec}


def persistent_volume(name: str, storage_class: str, storage: str = "1Gi") -> dict[str, Any]:
    """A pre-provisioned volume (nothing provisions volumes on the embedded cluster): the real
    PV controller binds claims of ``storage_class`` to it."""
    return {"apiVersion": "v1", "kind": "PersistentVolume",
            "metadata": {"name": name, "labels": {"aftershock.io/storage-class": storage_class}},
            "spec": {"capacity": {"storage": storage}, "accessModes": ["ReadWriteOnce"],
                     "persistentVolumeReclaimPolicy": "Retain",
                     "storageClassName": storage_class,
                     "hostPath": {"path": f"/var/lib/aftershock/{name}"}}}


def resource_slice(node: dict[str, Any], driver: str, devices: int = 1,
                   api_version: str = "resource.k8s.io/v1") -> dict[str, Any]:
    """What a DRA driver publishes for its node: one pool, owned by the Node."""
    name = node["metadata"]["name"]
    return {"apiVersion": api_version, "kind": "ResourceSlice",
            "metadata": {"name": f"{name}-{driver}",
                         "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": name,
                                              "uid": node["metadata"]["uid"]}]},
            "spec": {"driver": driver, "nodeName": name,
                     "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
                     "devices": [{"name": f"dev-{i}"} for i in range(devices)]}}


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
