"""The data probe: a client of a StorageCluster that writes, reads back and lists its objects.

python -m implementations.storage.probe --data-root DIR --namespace N --cluster NAME
    [--kubeconfig K] put --objects 30 | get --ledger FILE | inventory

Prints one JSON document on stdout:
  put        {"written": [{"object", "member", "node", "checksum"}, ...]}
  get        {"results": [{"object", "status": ok|not_found|error, "where", "detail"}, ...]}
  inventory  {"members": {"<node>/member-<i>": {"objects", "buckets", "index"}}}
On a usage problem it prints {"error": "..."} and exits 1.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
from pathlib import Path

from kubernetes import client

from implementations import load_config
from implementations.storage import data, decisions

CLUSTER_LABEL = "aftershock.io/storage-cluster"


def spread(count: int, ready: dict[int, str]) -> dict[str, tuple[int, str]]:
    """obj-k -> (ordinal, node): round-robin over the Ready members by ordinal."""
    members = sorted(ready.items())
    return {f"obj-{k}": members[k % len(members)] for k in range(count)}


def put(root: Path, namespace: str, cluster: str, ready: dict[int, str], count: int) -> dict:
    placed = spread(count, ready) if ready else {}
    payloads = {name: (data.bucket_of(int(name.split("-")[1])),
                       os.urandom(random.randint(64, 512))) for name in placed}
    sums: dict[str, str] = {}
    for ordinal, node in sorted(ready.items()):
        mine = {name: payloads[name] for name, (o, _) in placed.items() if o == ordinal}
        if mine:
            path = data.member_dir(root, node, namespace, cluster, ordinal)
            sums.update(data.store(path, mine))
    return {"written": [{"object": name, "member": ordinal, "node": node,
                         "checksum": sums[name]} for name, (ordinal, node) in placed.items()]}


def ready_members(kubeconfig: str, namespace: str, cluster: str) -> dict[int, str]:
    configuration = load_config(kubeconfig)
    core = client.CoreV1Api(client.ApiClient(configuration))
    pods = core.list_namespaced_pod(namespace, label_selector=f"{CLUSTER_LABEL}={cluster}")
    return decisions.ready_members(pods.items, cluster)


def get(root: Path, namespace: str, cluster: str, ledger: Path) -> dict:
    written = json.loads(Path(ledger).read_text())["written"]
    return {"results": data.read_all(root, namespace, cluster, [w["object"] for w in written])}


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m implementations.storage.probe")
    parser.add_argument("--data-root", required=True, type=Path)
    parser.add_argument("--namespace", required=True)
    parser.add_argument("--cluster", required=True)
    parser.add_argument("--kubeconfig")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("put").add_argument("--objects", type=int, default=30)
    commands.add_parser("get").add_argument("--ledger", required=True, type=Path)
    commands.add_parser("inventory")
    return parser.parse_args(argv)


def run(args: argparse.Namespace) -> dict:
    if args.command == "get":
        return get(args.data_root, args.namespace, args.cluster, args.ledger)
    if args.command == "inventory":
        return {"members": data.inventory(args.data_root, args.namespace, args.cluster)}
    if not args.kubeconfig:
        raise ValueError("put needs --kubeconfig (it places objects on the Ready member pods)")
    ready = ready_members(args.kubeconfig, args.namespace, args.cluster)
    if not ready:
        raise ValueError(f"no Ready member pods of {args.cluster} in {args.namespace}")
    return put(args.data_root, args.namespace, args.cluster, ready, args.objects)


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    try:
        document, code = run(args), 0
    except (ValueError, OSError, KeyError) as exc:
        document, code = {"error": str(exc)}, 1
    json.dump(document, sys.stdout, indent=1)
    sys.stdout.write("\n")
    return code


if __name__ == "__main__":
    sys.exit(main())
