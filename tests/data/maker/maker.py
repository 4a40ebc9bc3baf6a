"""A stand-in implementation that makes something outside its namespace, as an operator that
registers its own webhook or an autoscaler that makes nodes does: a PriorityClass named after
its namespace, and one named by the API server from a generateName (as Karpenter's NodeClaims
are), each held by a finalizer of its own that it never removes."""

import sys
import time

from kubernetes import client, config

kubeconfig, namespace = sys.argv[1], sys.argv[2]
config.load_kube_config(kubeconfig)
client.SchedulingV1Api().create_priority_class({
    "apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
    "metadata": {"name": f"made-{namespace}", "finalizers": ["example.com/made"]},
    "value": 7})
client.SchedulingV1Api().create_priority_class({
    "apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
    "metadata": {"generateName": f"made-{namespace}-", "finalizers": ["example.com/made"]},
    "value": 8})
print("maker: made it", flush=True)
while True:
    time.sleep(3600)
