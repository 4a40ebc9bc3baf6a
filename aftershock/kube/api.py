"""Talking to a cluster with the official client: one explicit ApiClient per kubeconfig (never
the global default configuration), and waiting for a state by watching, never by polling."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

from kubernetes import client, config, dynamic, watch
from kubernetes.client.exceptions import ApiException

from aftershock.kube import door, writes
from aftershock.machine.cache import scratch_for_this_process


def client_scratch() -> str:
    """Where the Kubernetes client writes a kubeconfig's certificates and keys (it needs them
    as files, and removes them only at a clean exit): a directory of this process's own, mode
    0700, under aftershock's cache, which `cluster gc` removes once the process is gone (it
    wrote them to /tmp, for ever, when a run was killed)."""
    return str(scratch_for_this_process("clients"))


def dynamic_client(api: client.ApiClient):
    """The dynamic client, its discovery cache in this process's scratch dir (by default a
    file in /tmp per API server, never removed)."""
    return dynamic.DynamicClient(api, cache_file=f"{client_scratch()}/discovery-{id(api)}.json")


def load_config(kubeconfig: Path | str, context: str | None = None) -> client.Configuration:
    configuration = client.Configuration()
    config.load_kube_config(config_file=str(kubeconfig), context=context,
                            client_configuration=configuration, persist_config=False,
                            temp_file_path=client_scratch())
    return configuration


def api_client(kubeconfig: Path | str, context: str | None = None) -> client.ApiClient:
    configuration = load_config(kubeconfig, context)
    configuration.retries = 3
    return client.ApiClient(configuration)


def server_version(api: client.ApiClient) -> str:
    """The version the API server reports (its gitVersion, e.g. 'v1.37.2')."""
    return client.VersionApi(api).get_code().git_version


def core(api: client.ApiClient) -> client.CoreV1Api:
    return client.CoreV1Api(api)


def apps(api: client.ApiClient) -> client.AppsV1Api:
    return client.AppsV1Api(api)


DRA_GROUP = "resource.k8s.io"
DRA_VERSIONS = ("v1", "v1beta2")  # the same object shapes; 1.33 serves only the beta


def served_version(api: client.ApiClient, group: str, versions: tuple[str, ...]) -> str | None:
    """The first of ``versions`` the cluster serves for ``group``, as "group/version"."""
    for found in client.ApisApi(api).get_api_versions().groups or ():
        if found.name == group:
            served = {v.version for v in found.versions}
            return next((f"{group}/{v}" for v in versions if v in served), None)
    return None


def unserved(kubeconfig: Path | str, context: str | None,
             wanted: list[str]) -> tuple[list[str], str]:
    """Which of ``wanted`` ("group/version", "v1" for the core group) the cluster does not
    serve, and the version it reports."""
    with api_client(kubeconfig, context) as api:
        served = {f"{group.name}/{v.version}"
                  for group in client.ApisApi(api).get_api_versions().groups or ()
                  for v in group.versions}
        served |= set(client.CoreApi(api).get_api_versions().versions or ())
        return [gv for gv in wanted if gv not in served], server_version(api)


def dra_api_version(api: client.ApiClient) -> str:
    version = served_version(api, DRA_GROUP, DRA_VERSIONS)
    if version is None:
        raise RuntimeError(f"the cluster serves none of {DRA_GROUP} "
                           f"{', '.join(DRA_VERSIONS)}: dynamic resource allocation is off")
    return version


def wait_for_service_account(api: client.ApiClient, namespace: str, name: str = "default",
                             timeout: float = 30) -> None:
    """Pods cannot be created in a namespace until its ServiceAccount exists."""
    if not wait_named(core(api).list_namespaced_service_account, namespace, name, gone=False,
                      timeout=timeout):
        raise TimeoutError(f"serviceaccount/{namespace}/{name} did not appear within "
                           f"{timeout:.0f}s")


def wait_named(lister: Any, namespace: str, name: str, *, gone: bool, timeout: float) -> bool:
    """Until the object ``name`` exists (or, ``gone``, no longer does), watched from a list of
    it: whether it did within ``timeout``."""
    only = f"metadata.name={name}"
    listing = lister(namespace, field_selector=only)
    if bool(listing.items) != gone:
        return True
    stream = watch.Watch()
    for event in stream.stream(lister, namespace, field_selector=only,
                               resource_version=listing.metadata.resource_version,
                               timeout_seconds=int(timeout)):
        if (event["type"] == "DELETED") == gone:
            stream.stop()
            return True
    return False


def _kubernetes_own(finalizer: str) -> bool:
    """A finalizer Kubernetes' own controllers keep and remove (batch.kubernetes.io/
    job-tracking, the garbage collector's foregroundDeletion): they still run."""
    domain, slash, _ = finalizer.partition("/")
    return not slash or domain == "kubernetes.io" or domain.endswith(".kubernetes.io")


def release_finalizers(api: client.ApiClient, namespace: str) -> None:
    """Remove the finalizers scenarios and implementations put on pods (``aftershock.io/hold``,
    Kueue's ``kueue.x-k8s.io/managed``). Called once the namespace is terminating, so no
    controller can create another held pod meanwhile, and after the implementation under test
    has stopped: no one is left to remove its own. Kubernetes' own are left to it."""
    corev1 = core(api)
    for pod in corev1.list_namespaced_pod(namespace).items:
        held = pod.metadata.finalizers or []
        remaining = [f for f in held if _kubernetes_own(f)]
        if remaining == held:
            continue
        try:
            door.call(corev1.patch_namespaced_pod, pod.metadata.name, namespace,
                      {"metadata": {"finalizers": remaining or None}})
        except ApiException as exc:
            if exc.status != 404:
                raise


def batch(api: client.ApiClient) -> client.BatchV1Api:
    return client.BatchV1Api(api)


OWNER_LABEL = "aftershock.io/namespace"  # on cluster-scoped objects a scenario creates


class Discovery:
    """``get(path) -> dict`` over a typed client, for discovery documents."""

    def __init__(self, api: client.ApiClient):
        self.api = api

    def get(self, path: str) -> dict[str, Any]:
        request = self.api.param_serialize("GET", path, header_params={
            "Accept": "application/json"}, auth_settings=["BearerToken"])
        response = self.api.call_api(*request)
        response.read()
        if response.status != 200:
            raise ApiException(status=response.status, reason=f"GET {path}")
        return json.loads(response.data)


def delete_object(api: client.ApiClient, api_version: str, kind: str, name: str, *,
                  missing_ok: bool) -> None:
    """Delete a cluster-scoped object a scenario made, by its apiVersion and kind, through the
    door (``missing_ok``: whether one already gone is no failure, said by the caller)."""
    writes.delete(dynamic_client(api).resources.get(api_version=api_version, kind=kind), name,
                  None, missing_ok=missing_ok)


def retire_namespace(api: client.ApiClient, namespace: str, timeout: float = 60) -> None:
    """End a scenario's namespace without waiting the ~5 s the namespace controller takes:
    delete it (nothing new can be created in it from then on), force-delete its pods so they
    hold no node capacity now, and remove the cluster-scoped objects made for it. The
    namespace object itself goes in the background."""
    corev1 = core(api)
    # gone already: its create failed (the world ends what it began), or a killed run's
    # record was undone first by `cluster gc`
    if door.delete(corev1.delete_namespace, namespace, missing_ok=True) is None:
        return
    release_finalizers(api, namespace)
    door.delete(corev1.delete_collection_namespaced_pod, namespace, grace_period_seconds=0)
    listing = corev1.list_namespaced_pod(namespace)
    if listing.items:  # a pod with someone else's finalizer: wait for it, by watching
        left = {pod.metadata.name for pod in listing.items}
        stream = watch.Watch()
        for event in stream.stream(corev1.list_namespaced_pod, namespace,
                                   resource_version=listing.metadata.resource_version,
                                   timeout_seconds=int(timeout)):
            if event["type"] == "DELETED":
                left.discard(event["object"].metadata.name)
            if not left:
                stream.stop()
                break
        if left:
            raise TimeoutError(f"pods of namespace/{namespace} not gone within {timeout:.0f}s: "
                               + ", ".join(sorted(left)))
    sweep_cluster_scoped(api, retiring=namespace)


def sweep_cluster_scoped(api: client.ApiClient, retiring: str | None = None) -> list[str]:
    """Cluster-scoped objects a scenario made (roles for its implementation, volumes, slices)
    whose namespace is gone, because the run that made them was killed, or is being retired:
    removed. What this identity may not list is left alone. Returns what was removed."""
    resources = dynamic_client(api).resources
    namespaces = {ns.metadata.name for ns in core(api).list_namespace().items}
    removed = []
    slices = served_version(api, DRA_GROUP, DRA_VERSIONS)
    for api_version, kind in (("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"),
                              ("rbac.authorization.k8s.io/v1", "ClusterRole"),
                              ("v1", "PersistentVolume"),
                              *([(slices, "ResourceSlice")] if slices else [])):
        try:
            resource = resources.get(api_version=api_version, kind=kind)
            items = resource.get(label_selector=OWNER_LABEL).items
        except (ApiException, dynamic.exceptions.ResourceNotFoundError):
            continue  # not served here, or not ours to list
        for item in items:
            owner = item.metadata.labels[OWNER_LABEL]
            if owner not in namespaces or owner == retiring:
                # a sweep beside this one (`cluster gc`, another retiring scenario), or the
                # volume's own reclaim, may have removed it since the list
                writes.delete(resource, item.metadata.name, None, missing_ok=True)
                removed.append(f"{kind.lower()}/{item.metadata.name}")
    return removed


@contextlib.contextmanager
def suppress_not_found():
    """Go on when the object is already gone (a 404), as ``kubectl delete --ignore-not-found``."""
    try:
        yield
    except client.exceptions.ApiException as exc:
        if exc.status != 404:
            raise


def set_unschedulable(api: client.ApiClient, node: str, unschedulable: bool) -> None:
    door.call(client.CoreV1Api(api).patch_node, node,
              {"spec": {"unschedulable": unschedulable or None}})


def node_label(api: client.ApiClient, node: str, key: str) -> str | None:
    return (client.CoreV1Api(api).read_node(node).metadata.labels or {}).get(key)


def set_node_label(api: client.ApiClient, node: str, key: str, value: str | None) -> None:
    """``kubectl label node NODE KEY=VALUE --overwrite`` (None: ``KEY-``)."""
    door.call(client.CoreV1Api(api).patch_node, node, {"metadata": {"labels": {key: value}}})


def set_taint(api: client.ApiClient, node: str, taint: dict[str, str], present: bool) -> None:
    """Add or remove one taint (by key), keeping the node's others (the list is replaced whole
    by a patch, so it is read first)."""
    core = client.CoreV1Api(api)
    kept = [api.sanitize_for_serialization(t) for t in core.read_node(node).spec.taints or []
            if t.key != taint["key"]]
    door.call(core.patch_node, node,
              {"spec": {"taints": [*kept, *([taint] if present else [])] or None}})


def cordon(api: client.ApiClient, node: str) -> None:
    set_unschedulable(api, node, True)


def uncordon(api: client.ApiClient, node: str) -> None:
    with suppress_not_found():
        set_unschedulable(api, node, False)
