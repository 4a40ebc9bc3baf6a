"""python -m implementations.statuswriter --variant faulty|correct [--kubeconfig K] --namespace N

A controller that reports a state: each ConfigMap labelled aftershock.io/status-writer gets
data.state=ready. The correct variant writes it once. The faulty one writes it in a loop, ready
and busy in turn 20 times a second for 5 seconds, then leaves it ready: a status write loop
that a check at one moment (Chainsaw's, or "within N seconds ... matches") passes."""

from __future__ import annotations

import argparse
import logging
import os
import signal
import threading
import time

from kubernetes import client, watch

from implementations import load_config

LABEL = "aftershock.io/status-writer"
FLAPS, EVERY = 100, 0.05  # 20 writes a second for 5 seconds
log = logging.getLogger("statuswriter")


def report(core: client.CoreV1Api, namespace: str, name: str, variant: str) -> None:
    states = ["ready"] if variant == "correct" else \
        [("busy" if i % 2 else "ready") for i in range(FLAPS)] + ["ready"]
    for state in states:
        core.patch_namespaced_config_map(name, namespace, {"data": {"state": state}})
        log.info("wrote configmap/%s/%s state=%s", namespace, name, state)
        if len(states) > 1:
            time.sleep(EVERY)  # the bug's own pace: a write loop, not a wait for a state


def run(core: client.CoreV1Api, namespace: str, variant: str) -> None:
    seen: set[str] = set()
    stream = watch.Watch().stream(core.list_namespaced_config_map, namespace,
                                  label_selector=LABEL)
    for event in stream:
        name = event["object"].metadata.name
        if event["type"] == "ADDED" and name not in seen:
            seen.add(name)
            threading.Thread(target=report, args=(core, namespace, name, variant),
                             daemon=True).start()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--variant", choices=("faulty", "correct"), required=True)
    parser.add_argument("--kubeconfig", help="default: $KUBECONFIG, else in-cluster")
    parser.add_argument("--namespace", required=True)
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    core = client.CoreV1Api(client.ApiClient(load_config(args.kubeconfig)))
    log.info("started statuswriter (%s) in namespace %s", args.variant, args.namespace)
    run(core, args.namespace, args.variant)


if __name__ == "__main__":
    main()
