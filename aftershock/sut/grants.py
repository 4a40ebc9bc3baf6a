"""The implementation's identity in a scenario's namespace: its ServiceAccount, a Role with the
profile's rules, and cluster-wide rules named after the namespace (so the next run's sweep
removes them if this one is killed). Out of the cluster or in it, the audit log names it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kubernetes import client

from aftershock.kube import door
from aftershock.kube.api import OWNER_LABEL


def cluster_role_name(namespace: str, account: str) -> str:
    return f"aftershock:{namespace}:{account}"


def _binding(name: str, kind: str, account: str, namespace: str,
             labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {"metadata": {"name": name, **({"labels": labels} if labels else {})},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": kind, "name": name},
            "subjects": [{"kind": "ServiceAccount", "name": account, "namespace": namespace}]}


def grant(api: client.ApiClient, namespace: str, account: str, rules: Sequence[dict],
          cluster_rules: Sequence[dict] = ()) -> None:
    corev1, rbac = client.CoreV1Api(api), client.RbacAuthorizationV1Api(api)
    door.call(corev1.create_namespaced_service_account, namespace,
              {"metadata": {"name": account}})
    door.call(rbac.create_namespaced_role, namespace,
              {"metadata": {"name": account}, "rules": list(rules)})
    door.call(rbac.create_namespaced_role_binding, namespace,
              _binding(account, "Role", account, namespace))
    if not cluster_rules:
        return
    name = cluster_role_name(namespace, account)
    labels = {OWNER_LABEL: namespace}
    door.call(rbac.create_cluster_role, {"metadata": {"name": name, "labels": labels},
                                         "rules": list(cluster_rules)})
    door.call(rbac.create_cluster_role_binding,
              _binding(name, "ClusterRole", account, namespace, labels))


def revoke_cluster_rules(api: client.ApiClient, namespace: str, account: str) -> None:
    """The cluster-wide part; the namespaced part goes with the namespace."""
    rbac = client.RbacAuthorizationV1Api(api)
    # the uninstall runs even when the install stopped before granting them
    door.delete(rbac.delete_cluster_role_binding, cluster_role_name(namespace, account),
                missing_ok=True)
    door.delete(rbac.delete_cluster_role, cluster_role_name(namespace, account),
                missing_ok=True)
