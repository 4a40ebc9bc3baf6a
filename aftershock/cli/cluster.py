"""``aftershock cluster up|down|list|gc``: embedded clusters that outlive a command, and what dead
runs left."""

# Imports inside functions: start-up time, as in the rest of the command line.

from __future__ import annotations

import argparse
import time
from pathlib import Path

from aftershock.cli.say import say


def cmd_cluster_up(args: argparse.Namespace) -> int:
    from aftershock.providers.base import ClusterRequest
    from aftershock.providers.clusters import open_cluster

    began = time.monotonic()
    cluster = open_cluster(ClusterRequest(shape=args.shape, name=args.name, detached=True,
                                          kubernetes_version=args.kubernetes_version), Path.cwd())
    say(f"cluster/{cluster.name} up in {time.monotonic() - began:.1f}s: "
         f"{len(cluster.shape.nodes)} nodes Ready, "
         f"Kubernetes v{cluster.binaries.versions.kubernetes}, server {cluster.server}")
    print(cluster.paths.kubeconfig)
    return 0


def cmd_cluster_down(args: argparse.Namespace) -> int:
    from aftershock.providers import clusters
    from aftershock.providers.local import attach

    state = attach(args.name)
    clusters.remove(state)
    say(f"cluster/{args.name} removed")
    return 0


def cmd_cluster_list(args: argparse.Namespace) -> int:
    from aftershock.machine import processes

    states = processes.list_states()
    if not states:
        say("no clusters")
        return 0
    print(f"{'NAME':<28} {'PROVIDER':<9} {'VERSION':<9} {'OWNER':<14} {'ALIVE':<6} KUBECONFIG")
    for state in states:
        alive = sum(record.alive() for record in state.processes.values())
        owner = "detached" if state.owner_pid is None else (
            f"pid {state.owner_pid}" if state.owner_alive() else "dead")
        print(f"{state.name:<28} {state.provider:<9} {state.kubernetes_version:<9} {owner:<14} "
              f"{alive}/{len(state.processes):<4} {state.kubeconfig}")
    return 0


def cmd_cluster_gc(args: argparse.Namespace) -> int:
    from aftershock.providers import clusters

    result = clusters.gc()
    for name in result.clusters:
        say(f"removed cluster/{name} of a dead run")
    if result.processes:
        say(f"ended {len(result.processes)} processes: {', '.join(result.processes)}")
    for path in result.leftovers:
        say(f"removed leftover {path}")
    for what in result.undone:
        say(f"undid what a dead run left on a reused cluster: {what}")
    for what in result.not_undone:
        say(f"could not undo: {what}")
    if not (result.clusters or result.leftovers):
        say("nothing to clean")
    return 1 if result.not_undone else 0


def add_parser(sub) -> None:
    cluster = sub.add_parser("cluster", help="embedded clusters")
    cluster_sub = cluster.add_subparsers(dest="action", required=True)
    up = cluster_sub.add_parser("up", help="start a cluster; prints its kubeconfig path")
    up.add_argument("--shape", help="cluster shape file (default: three nodes)")
    up.add_argument("--name")
    up.add_argument("--kubernetes-version")
    up.set_defaults(func=cmd_cluster_up)
    down = cluster_sub.add_parser("down", help="stop a cluster and remove its work dir")
    down.add_argument("name")
    down.set_defaults(func=cmd_cluster_down)
    cluster_sub.add_parser("list").set_defaults(func=cmd_cluster_list)
    cluster_sub.add_parser("gc", help="clean what dead runs left").set_defaults(func=cmd_cluster_gc)
