"""The data probe for AIStore, written for aftershock (AIStore ships nothing of it): objects are
written and read through AIStore's own HTTP API, and what each target keeps is read from the
nodes' disks.

python ais/probe.py --namespace N --cluster NAME --kubeconfig K --node-data DIR
    put --objects 30 | get --ledger FILE | inventory | watch | maintain --member N

Prints one JSON document on stdout:
  put        {"bucket", "written": [{"object", "member", "node", "checksum", "daemon"}, ...]}
  get        {"results": [{"object", "status": ok|not_found|error, "detail"}, ...]}
  inventory  {"nodes": {"<node>": {"objects": [...], "daemon_id": "..."}}}
  maintain   {"member", "daemon", "xid"}: member N's target put into maintenance, as
             ``ais cluster add-remove-nodes start-maintenance <daemon-id>`` does (ais-k8s's
             docs/node_replacement.md, step 1); AIStore then rebalances its objects away
or, for watch, one line per read of the cluster map (4 a second, until it is ended):
  {"at", "answered", "version", "members", "finished", "maintenance", "decommission",
   "listed", "moved", "nodes"} (asked at "at", answered at "answered") or {"at", "error"}

The cluster map (the proxy's Smap, ``GET /v1/daemon?what=smap``) is AIStore's own word on its
members: a target is listed in ``tmap`` with ``flags`` (4: in maintenance, 8: being
decommissioned, 16: in maintenance after its rebalance) until a decommission has moved its
objects away and removed it. ``members`` are the listed targets in neither state;
``finished`` the targets whose removal is over: in maintenance (a retained member), or listed
before and no longer (a decommissioned one); ``moved`` the targets in maintenance whose
rebalance is over (flag 16: their objects are on the others now). The ordinals are the
targets' pods' (a target's intra-cluster hostname is its pod's DNS name).

A read AIStore answered is judged: its HTTP status, the checksum of what it sent. A read that
got no answer (the connection refused, timed out or reset, the name not resolved: a drained
node, say) is an error with ``"error_kind": "transport"``, the ``address`` it could not reach
and the ``node`` that address is, for the judge to say where the probe could not look rather
than blame AIStore.

The proxy is reached on its node's address (it publishes its port there), and a target the
proxy redirects to likewise. Which target holds an object is what AIStore itself lists
(``location``), and which pod that target is, its cluster map (a target's intra-cluster
hostname is its pod's DNS name). A target keeps its objects under its mountpath as
``@ais/<bucket>/%ob/<object>`` and its ID in the mountpath's ``user.ais.daemon_id`` xattr.
"""

from __future__ import annotations

import argparse
import hashlib
import http.client
import json
import os
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

from kubernetes import client, config

BUCKET = "aftershock"
PROXY_PORT = 51080
MOUNT = "ais"  # the mountpath under the node-data directory (aistore.yaml)
TIMEOUT = 30


def kube(kubeconfig: str) -> client.CoreV1Api:
    return client.CoreV1Api(config.new_client_from_config(config_file=kubeconfig))


def proxy_url(core: client.CoreV1Api, namespace: str, cluster: str) -> str:
    pod = core.read_namespaced_pod(f"{cluster}-proxy-0", namespace)
    if not pod.status.host_ip:
        raise SystemExit(f"pod/{namespace}/{cluster}-proxy-0 has no node address yet")
    return f"http://{pod.status.host_ip}:{PROXY_PORT}"


class Unreachable(Exception):
    """No answer from ``address``: the connection was refused, timed out or was reset, or the
    name did not resolve (``cause``)."""

    def __init__(self, address: str, host: str, cause: Exception):
        super().__init__(f"{address}: {cause}")
        self.address, self.host, self.cause = address, host, cause


def request(method: str, url: str, body: bytes | None = None,
            headers: dict[str, str] | None = None, hops: int = 3) -> tuple[int, bytes]:
    """One HTTP request, following AIStore's redirects (to the target that owns an object)
    with the same method and body. Unreachable where an address gave no answer."""
    status, data, location = exchange(method, url, body, headers)
    if status in (301, 302, 307, 308) and location and hops > 0:
        return request(method, location, body, headers, hops - 1)
    return status, data


def exchange(method: str, url: str, body: bytes | None,
             headers: dict[str, str] | None) -> tuple[int, bytes, str | None]:
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=TIMEOUT)
    try:
        path = parts.path + (f"?{parts.query}" if parts.query else "")
        connection.request(method, path, body=body, headers=headers or {})
        response = connection.getresponse()
        return response.status, response.read(), response.getheader("Location")
    except (OSError, http.client.HTTPException) as exc:  # no whole answer came back
        raise Unreachable(parts.netloc, parts.hostname or "", exc) from exc
    finally:
        connection.close()


def node_addresses(core: client.CoreV1Api) -> dict[str, str]:
    """Each address of a node (its IPs, its hostname) → the node's name."""
    return {address.address: node.metadata.name for node in core.list_node().items
            for address in node.status.addresses or ()}


def ensure_bucket(base: str) -> None:
    body = json.dumps({"action": "create-bck"}).encode()
    status, data = request("POST", f"{base}/v1/buckets/{BUCKET}?provider=ais", body,
                           {"Content-Type": "application/json"})
    if status not in (200, 409) and b"already exists" not in data:
        raise SystemExit(f"creating bucket {BUCKET}: HTTP {status}: {data[:300]!r}")


def locations(base: str) -> dict[str, str]:
    """object → the ID of the target AIStore lists it on."""
    found, token = {}, ""
    while True:
        body = json.dumps({"action": "list", "value": {
            "props": "name,size,location", "continuation_token": token}}).encode()
        status, data = request("GET", f"{base}/v1/buckets/{BUCKET}?provider=ais", body,
                               {"Content-Type": "application/json"})
        if status != 200:
            raise SystemExit(f"listing bucket {BUCKET}: HTTP {status}: {data[:300]!r}")
        page = json.loads(data)
        for entry in page.get("entries") or []:
            found[entry["name"]] = daemon_id(entry.get("location", "").split(":", 1)[0])
        token = page.get("continuation_token") or ""
        if not token:
            return found


def daemon_id(text: str) -> str:
    """t[nmJkHDRq] (how AIStore prints a target) → nmJkHDRq."""
    return text[2:-1] if text.startswith("t[") and text.endswith("]") else text


def target_pods(base: str) -> dict[str, str]:
    """Target ID → its pod's name, from the cluster map."""
    status, data = request("GET", f"{base}/v1/daemon?what=smap")
    if status != 200:
        raise SystemExit(f"reading the cluster map: HTTP {status}: {data[:300]!r}")
    pods = {}
    for daemon, node in (json.loads(data).get("tmap") or {}).items():
        host = ((node.get("intra_control_net") or {}).get("node_ip_addr") or "")
        pods[daemon] = host.split(".", 1)[0]
    return pods


MAINTENANCE, DECOMMISSION, MAINTENANCE_DONE = 4, 8, 16
WATCH_EVERY = 0.25  # the operator acts within a second of what the map says


def cluster_map(base: str) -> dict:
    status, data = request("GET", f"{base}/v1/daemon?what=smap")
    if status != 200:
        raise SystemExit(f"reading the cluster map: HTTP {status}: {data[:300]!r}")
    return json.loads(data)


def watch(core: client.CoreV1Api, namespace: str, cluster: str) -> None:
    """The cluster map, read every WATCH_EVERY seconds, one line each, stamped with this
    machine's clock (the nodes' own, on kind)."""
    listed_before: set[int] = set()
    base = ""
    while True:
        at = time.time()
        try:
            base = base or proxy_url(core, namespace, cluster)
            smap = cluster_map(base)
            read = members_of(smap, cluster, listed_before)
            listed_before |= set(read["listed"])
            # what it says was so at some moment between the asking and the answer
            line = {"at": at, "answered": time.time(), **read}
        except (Unreachable, SystemExit, client.ApiException, OSError, ValueError) as exc:
            line, base = {"at": at, "error": str(exc)[:300]}, ""  # the proxy may have moved
        print(json.dumps(line), flush=True)
        time.sleep(max(0.0, WATCH_EVERY - (time.time() - at)))  # the schedule, not a wait


def members_of(smap: dict, cluster: str, listed_before: set[int]) -> dict:
    flags, nodes = {}, {}
    for node in (smap.get("tmap") or {}).values():
        host = (node.get("intra_control_net") or {}).get("node_ip_addr") or ""
        number = ordinal(host.split(".", 1)[0], cluster)
        if number is not None:
            flags[number] = int(node.get("flags") or 0)
            nodes[number] = node.get("daemon_id", "")
    listed = sorted(flags)
    maintenance = sorted(o for o, f in flags.items() if f & (MAINTENANCE | MAINTENANCE_DONE)
                         and not f & DECOMMISSION)
    decommission = sorted(o for o, f in flags.items() if f & DECOMMISSION)
    gone = sorted(listed_before - set(listed))
    return {"version": int(smap.get("version") or 0), "listed": listed,
            "members": [o for o in listed if o not in maintenance and o not in decommission],
            "maintenance": maintenance, "decommission": decommission,
            "finished": sorted(set(gone) | set(maintenance)),
            "moved": sorted(o for o in maintenance if flags[o] & MAINTENANCE_DONE),
            "daemons": {str(o): d for o, d in sorted(nodes.items())}}


def maintain(core: client.CoreV1Api, namespace: str, cluster: str, member: int) -> dict:
    """Member ``member``'s target into maintenance, its objects rebalanced onto the others."""
    base = proxy_url(core, namespace, cluster)
    daemons = members_of(cluster_map(base), cluster, set())["daemons"]
    daemon = daemons.get(str(member))
    if not daemon:
        raise SystemExit(f"member {member} is no target in the cluster map (listed: "
                         f"{', '.join(sorted(daemons)) or 'none'})")
    body = json.dumps({"action": "start-maintenance", "value": {"sid": daemon}}).encode()
    status, data = request("PUT", f"{base}/v1/cluster", body,
                           {"Content-Type": "application/json"})
    if status != 200:
        raise SystemExit(f"start-maintenance of {daemon}: HTTP {status}: {data[:300]!r}")
    return {"member": member, "daemon": daemon, "xid": data.decode(errors="replace").strip()}


def ordinal(pod: str, cluster: str) -> int | None:
    prefix = f"{cluster}-target-"
    return int(pod[len(prefix):]) if pod.startswith(prefix) and pod[len(prefix):].isdigit() \
        else None


def put(core: client.CoreV1Api, namespace: str, cluster: str, count: int) -> dict:
    base = proxy_url(core, namespace, cluster)
    ensure_bucket(base)
    sums = {}
    for k in range(count):
        name, payload = f"obj-{k}", os.urandom(256 + 16 * k)
        status, data = request("PUT", f"{base}/v1/objects/{BUCKET}/{name}?provider=ais",
                               payload, {"Content-Type": "application/octet-stream"})
        if status != 200:
            raise SystemExit(f"writing {name}: HTTP {status}: {data[:300]!r}")
        sums[name] = hashlib.sha256(payload).hexdigest()
    where, pods = locations(base), target_pods(base)
    nodes = {p.metadata.name: p.spec.node_name
             for p in core.list_namespaced_pod(namespace).items}
    written = []
    for name, checksum in sums.items():
        pod = pods.get(where.get(name, ""), "")
        written.append({"object": name, "checksum": checksum, "daemon": where.get(name, ""),
                        "member": ordinal(pod, cluster), "node": nodes.get(pod)})
    return {"bucket": BUCKET, "targets": pods, "written": written}


def get(core: client.CoreV1Api, namespace: str, cluster: str, ledger: Path) -> dict:
    base = proxy_url(core, namespace, cluster)
    nodes = node_addresses(core)
    results = []
    for item in json.loads(ledger.read_text())["written"]:
        url = f"{base}/v1/objects/{BUCKET}/{item['object']}?provider=ais"
        try:
            status, data = request("GET", url)
        except Unreachable as exc:
            results.append({"object": item["object"], "status": "error",
                            "error_kind": "transport", "address": exc.address,
                            "node": nodes.get(exc.host), "detail": str(exc)})
            continue
        if status == 404:
            results.append({"object": item["object"], "status": "not_found"})
        elif status != 200:
            results.append({"object": item["object"], "status": "error",
                            "detail": f"HTTP {status}: {data[:200].decode(errors='replace')}"})
        elif hashlib.sha256(data).hexdigest() != item["checksum"]:
            results.append({"object": item["object"], "status": "error",
                            "detail": "read back with another checksum"})
        else:
            results.append({"object": item["object"], "status": "ok"})
    return {"results": results}


def inventory(node_data: Path, namespace: str, cluster: str) -> dict:
    """What each node's disk keeps for the cluster: the objects under its mountpath, and the
    target ID the mountpath says it belongs to."""
    nodes = {}
    for node_dir in sorted(p for p in node_data.iterdir() if p.is_dir()):
        mountpath = node_dir / MOUNT / namespace / cluster / "target"
        if not mountpath.is_dir():
            continue
        objects = mountpath / "@ais" / BUCKET / "%ob"
        names = sorted(str(p.relative_to(objects)) for p in objects.rglob("*")
                       if p.is_file()) if objects.is_dir() else []
        try:
            daemon = os.getxattr(mountpath, "user.ais.daemon_id").decode()
        except OSError:
            daemon = ""
        nodes[node_dir.name] = {"objects": names, "daemon_id": daemon}
    return {"nodes": nodes}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="ais/probe.py")
    parser.add_argument("--namespace", required=True)
    parser.add_argument("--cluster", required=True)
    parser.add_argument("--kubeconfig", required=True)
    parser.add_argument("--node-data", type=Path, required=True)
    verbs = parser.add_subparsers(dest="verb", required=True)
    verbs.add_parser("put").add_argument("--objects", type=int, required=True)
    verbs.add_parser("get").add_argument("--ledger", type=Path, required=True)
    verbs.add_parser("inventory")
    verbs.add_parser("watch")
    verbs.add_parser("maintain").add_argument("--member", type=int, required=True)
    args = parser.parse_args(argv)
    if args.verb == "watch":
        watch(kube(args.kubeconfig), args.namespace, args.cluster)
        return
    if args.verb == "inventory":
        answer = inventory(args.node_data, args.namespace, args.cluster)
    elif args.verb == "maintain":
        answer = maintain(kube(args.kubeconfig), args.namespace, args.cluster, args.member)
    else:
        core = kube(args.kubeconfig)
        answer = (put(core, args.namespace, args.cluster, args.objects) if args.verb == "put"
                  else get(core, args.namespace, args.cluster, args.ledger))
    json.dump(answer, sys.stdout)


if __name__ == "__main__":
    main()
