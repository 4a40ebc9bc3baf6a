"""python -m implementations.dradriver --variant faulty|correct --kubeconfig K --namespace N
--driver gpu.aftershock.io --log FILE [--node-selector L] [--all-namespaces]

Each node's devices come from its aftershock.io/devices label; resource.k8s.io is spoken in the
newest version the cluster serves (v1, else v1beta2)."""

from __future__ import annotations

import argparse
import logging
import threading
import time
from pathlib import Path

from kubernetes import client

from implementations import load_config
from implementations.dradriver.plugin import Plugin
from implementations.dradriver.publisher import Publisher
from implementations.dradriver.slices import GROUP, VERSIONS, Create, pick_version

POLL = 1.0  # seconds between rounds when nothing changes (a waiting prepare is retried)
PUBLISH_TIMEOUT = 30.0
log = logging.getLogger("dradriver")


class Driver:
    def __init__(self, api: client.ApiClient, version: str, args: argparse.Namespace):
        self.wake = threading.Event()
        self.publisher = Publisher(api, self.wake, version=version, driver=args.driver,
                                   namespace=args.namespace, node_selector=args.node_selector)
        self.plugin = Plugin(api, self.wake, version=version, driver=args.driver,
                             variant=args.variant,
                             namespace=None if args.all_namespaces else args.namespace,
                             prepare_log=args.log)

    def start(self) -> None:
        """DeviceClass there, caches synced, then every node's slice published and seen in the
        slice cache."""
        self.publisher.create_device_class()
        reflectors = (*self.publisher.reflectors, *self.plugin.reflectors)
        for reflector in reflectors:
            reflector.start()
        for reflector in reflectors:
            while not reflector.synced.wait(10):
                log.info("waiting for the %s list", reflector.kind)
        deadline = time.monotonic() + PUBLISH_TIMEOUT
        while any(isinstance(a, Create) for a in self.publisher.reconcile()):
            if time.monotonic() > deadline:
                log.warning("slices not all seen after %.0fs", PUBLISH_TIMEOUT)
                break
            self.wake.wait(0.2)
            self.wake.clear()

    def run(self) -> None:
        while True:
            self.wake.clear()
            for side in (self.publisher, self.plugin):
                try:
                    side.reconcile()
                except Exception as exc:  # the API server away: next round
                    log.warning("%s round failed: %s", type(side).__name__.lower(), exc)
            self.wake.wait(POLL)


def served_versions(api: client.ApiClient) -> list[str]:
    for group in client.ApisApi(api).get_api_versions().groups or ():
        if group.name == GROUP:
            return [v.version for v in group.versions or ()]
    return []


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--variant", choices=("faulty", "correct"), required=True)
    parser.add_argument("--kubeconfig", required=True)
    parser.add_argument("--namespace", required=True,
                        help="pods and claims watched here; slices labelled with it")
    parser.add_argument("--driver", default="gpu.aftershock.io")
    parser.add_argument("--node-selector", default=None, help="a label selector of nodes")
    parser.add_argument("--all-namespaces", action="store_true",
                        help="watch pods and claims cluster-wide")
    parser.add_argument("--log", required=True, type=Path, help="the prepare log (JSON lines)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    configuration = load_config(args.kubeconfig)
    api = client.ApiClient(configuration)
    served = served_versions(api)
    version = pick_version(served)
    if version is None:
        log.error("%s is served in none of %s (served: %s): no DRA API to drive", GROUP,
                  ", ".join(VERSIONS), ", ".join(served) or "none")
        raise SystemExit(1)
    driver = Driver(api, version, args)
    driver.start()
    log.info("started dradriver (%s) for %s in namespace %s, speaking %s/%s", args.variant,
             args.driver, args.namespace, GROUP, version)
    driver.run()


if __name__ == "__main__":
    main()
