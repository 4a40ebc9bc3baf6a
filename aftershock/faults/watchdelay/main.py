"""The WatchDelay proxy as a sidecar in an in-cluster implementation's pod:
``python -m aftershock.faults.watchdelay.main --port 8001 --rules '[...]'``.

It listens on the pod's loopback; the implementation's container gets a kubeconfig pointing at
it. Upstream it speaks to the apiserver's service with the pod's own ServiceAccount token, so
the audit log still names the implementation. Its log (one JSON line per request and frame)
goes to stdout, where the harness reads it back. This module imports only the proxy (and its
anchored faults) and the standard library: it is what the sidecar image runs
(data/watchdelay.Dockerfile).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import ssl
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from aftershock.faults.anchors import from_plain
from aftershock.faults.watchdelay.proxy import Rule, Upstream, WatchDelay

SERVICE_ACCOUNT = Path("/var/run/secrets/kubernetes.io/serviceaccount")
RULE_FIELDS = ("delay", "resource", "namespace", "types", "jitter", "drop")


def rules_to_json(rules: list[Rule]) -> str:
    return json.dumps([{"delay": rule.delay, "resource": rule.resource,
                        "namespace": rule.namespace,
                        "types": sorted(rule.types) if rule.types is not None else None,
                        "jitter": rule.jitter, "drop": rule.drop} for rule in rules])


def rules_from_json(text: str) -> list[Rule]:
    rules = []
    for raw in json.loads(text):
        unknown = set(raw) - set(RULE_FIELDS)
        if unknown:
            raise ValueError(f"unknown rule fields: {', '.join(sorted(unknown))}")
        types = raw.get("types")
        rules.append(Rule(delay=float(raw.get("delay", 0)), resource=raw.get("resource"),
                          namespace=raw.get("namespace"),
                          types=frozenset(types) if types is not None else None,
                          jitter=float(raw.get("jitter", 0)), drop=bool(raw.get("drop", False))))
    return rules


def in_cluster_upstream(secrets: Path = SERVICE_ACCOUNT,
                        env: Mapping[str, str] = os.environ) -> Upstream:
    """The apiserver's service, trusted by the pod's CA bundle, with the pod's token."""
    contexts = [ssl.create_default_context(cafile=str(secrets / "ca.crt")) for _ in range(2)]
    token = (secrets / "token").read_text().strip()
    return Upstream(env["KUBERNETES_SERVICE_HOST"], int(env["KUBERNETES_SERVICE_PORT"]),
                    contexts[0], contexts[1], token)


def arguments(argv: list[str] | None = None) -> Any:
    parser = argparse.ArgumentParser(prog="watchdelay-sidecar", description=__doc__)
    parser.add_argument("--port", type=int, default=8001)
    parser.add_argument("--rules", default="[]", help="JSON list of rules")
    parser.add_argument("--anchors", default="[]", help="JSON list of anchored faults "
                        "(faults.anchors.to_plain); a kill severs the implementation")
    parser.add_argument("--log", default="/dev/stdout")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = arguments(argv)
    proxy = WatchDelay(in_cluster_upstream(), Path(args.log), "implementation", port=args.port)
    proxy.set_rules(rules_from_json(args.rules))
    faults = [from_plain(raw) for raw in json.loads(args.anchors)]
    if faults:
        proxy.anchor(faults, kill=proxy.sever)
    proxy.start()
    ended = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: ended.set())
    signal.signal(signal.SIGINT, lambda *_: ended.set())
    ended.wait()
    proxy.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
