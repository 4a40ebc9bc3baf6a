"""Cordon and uncordon: the node's spec.unschedulable, exactly as kubectl sets it."""

from __future__ import annotations

from kubernetes import client


def set_unschedulable(api: client.ApiClient, node: str, unschedulable: bool) -> None:
    client.CoreV1Api(api).patch_node(node, {"spec": {"unschedulable": unschedulable or None}})


def cordon(api: client.ApiClient, node: str) -> None:
    set_unschedulable(api, node, True)


def uncordon(api: client.ApiClient, node: str) -> None:
    set_unschedulable(api, node, False)
