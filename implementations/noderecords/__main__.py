"""python -m implementations.noderecords --variant faulty|correct --kubeconfig K --namespace N
--slots 3 --staleness 5 --poll 1"""

from __future__ import annotations

import argparse
import functools
import json
import logging
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from kubernetes import client
from kubernetes.client.exceptions import ApiException
from kubernetes.watch import Watch

from implementations import load_config

GROUP, VERSION, PLURAL, KIND = "aftershock.io", "v1", "noderecords", "NodeRecord"
COMPONENT, REASON = "noderecords", "NoFreeSlot"
TIME_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"
NEVER = datetime(1970, 1, 1, tzinfo=UTC)
WATCH_SECONDS = 60
EXPECTATIONS_TIMEOUT = 5.0
log = logging.getLogger("noderecords")


# ---------------------------------------------------------------- decisions (pure)

@dataclass(frozen=True)
class Record:
    name: str
    node: str
    slot: int | None
    touched_at: datetime
    uid: str = ""
    resource_version: str = ""


@dataclass(frozen=True)
class Touch:
    record: Record


@dataclass(frozen=True)
class Release:
    record: Record
    why: str


@dataclass(frozen=True)
class Assign:
    node: str
    slot: int


@dataclass(frozen=True)
class Refuse:
    node: str


Action = Touch | Release | Assign | Refuse


def format_time(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime(TIME_FORMAT)


def parse_time(text: str | None) -> datetime:
    """A missing or unreadable touchedAt reads as never touched."""
    try:
        moment = datetime.fromisoformat(text) if text else NEVER
    except ValueError:
        return NEVER
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def to_record(obj: dict[str, Any]) -> Record:
    meta, spec = obj.get("metadata") or {}, obj.get("spec") or {}
    slot = spec.get("slot")
    return Record(name=meta.get("name", ""), node=spec.get("node") or "",
                  slot=slot if isinstance(slot, int) else None,
                  touched_at=parse_time(spec.get("touchedAt")),
                  uid=meta.get("uid", ""), resource_version=meta.get("resourceVersion", ""))


def stale_release(record: Record, live: set[str], now: datetime, staleness: float,
                  variant: str) -> str | None:
    """Why a record is released: its node is gone and nobody touched it for the staleness
    window (None: it is kept)."""
    if record.node in live:
        return None
    age = (now - record.touched_at).total_seconds()
    stale = age > staleness
    why = f"node/{record.node} gone, touched {age:.1f}s ago"
    if variant == "correct":
        return why if record.slot is not None and stale else None
    record_slot = record.slot
    if record_slot and stale:  # the incident: slot 0 reads as "no slot"
        return why
    return None


def _by_slot(record: Record) -> tuple[bool, int, str]:
    return record.slot is None, record.slot or 0, record.name


def _releases(ordered: list[Record], live: set[str], now: datetime, staleness: float,
              variant: str) -> list[Release]:
    """Stale records of vanished nodes, and every record of a node but its lowest slot's."""
    releases: list[Release] = []
    owners: dict[str, str] = {}
    for record in ordered:
        why = stale_release(record, live, now, staleness, variant)
        if why:
            releases.append(Release(record, why))
        elif record.node in owners:
            releases.append(Release(record, f"node/{record.node} holds {owners[record.node]}"))
        else:
            owners[record.node] = record.name
    return releases


def _assignments(kept: list[Record], live: set[str], slots: int) -> list[Assign | Refuse]:
    """Nodes without a record, by name, get the lowest free slot, or are refused."""
    held = {r.slot for r in kept if r.slot is not None}
    free = [i for i in range(slots) if i not in held]
    owned = {r.node for r in kept}
    return [Assign(node, free.pop(0)) if free else Refuse(node)
            for node in sorted(live - owned)]


def plan(records: Iterable[Record], nodes: Iterable[str], now: datetime, *, staleness: float,
         poll: float, slots: int, variant: str) -> list[Action]:
    """Releases first, then touches, then assignments; a released slot is free this round."""
    live = set(nodes)
    ordered = sorted(records, key=_by_slot)
    releases = _releases(ordered, live, now, staleness, variant)
    released = {r.record.name for r in releases}
    kept = [r for r in ordered if r.name not in released]
    touches = [Touch(r) for r in kept
               if r.node in live and now - r.touched_at > timedelta(seconds=poll)]
    return [*releases, *touches, *_assignments(kept, live, slots)]


def refusal_episodes(episodes: set[str], actions: list[Action]) -> tuple[set[str], set[str]]:
    """(nodes to report now, episodes open): an episode lasts until the node holds a record
    or is gone, so each gets one Event."""
    refused = {a.node for a in actions if isinstance(a, Refuse)}
    unassigned = {a.node for a in actions if isinstance(a, Assign | Refuse)}
    return refused - episodes, (episodes & unassigned) | refused


# ---------------------------------------------------------------- cluster

class Reflector:
    """List, then watch, one resource into a cache of raw objects by name."""

    def __init__(self, list_fn: Callable[..., Any], on_change: Callable[[], None], kind: str):
        self.list_fn, self.on_change, self.kind = list_fn, on_change, kind
        self.synced = threading.Event()
        self._lock = threading.Lock()
        self._items: dict[str, dict[str, Any]] = {}

    def start(self) -> None:
        threading.Thread(target=self._run, name=f"reflector-{self.kind}", daemon=True).start()

    def items(self) -> list[dict[str, Any]]:
        with self._lock:
            return list(self._items.values())

    def _run(self) -> None:
        version: str | None = None
        while True:
            try:
                if version is None:
                    version = self._list()
                version = self._watch(version)
            except ApiException as exc:
                if exc.status == 410:
                    version = None  # expired: list again
                else:
                    log.warning("watch of %s failed: %s %s", self.kind, exc.status, exc.reason)
                    time.sleep(1)
            except Exception as exc:  # connection dropped: list again
                log.warning("watch of %s failed: %s", self.kind, exc)
                version = None
                time.sleep(1)

    def _list(self) -> str:
        body = json.loads(self.list_fn(_preload_content=False).data)
        with self._lock:
            self._items = {o["metadata"]["name"]: o for o in body.get("items") or []}
        self.synced.set()
        self.on_change()
        return body["metadata"]["resourceVersion"]

    def _watch(self, version: str) -> str:
        watch = Watch()
        for event in watch.stream(self.list_fn, resource_version=version,
                                  allow_watch_bookmarks=True, timeout_seconds=WATCH_SECONDS):
            obj = event["raw_object"]
            if event["type"] in ("ADDED", "MODIFIED", "DELETED"):
                with self._lock:
                    if event["type"] == "DELETED":
                        self._items.pop(obj["metadata"]["name"], None)
                    else:
                        self._items[obj["metadata"]["name"]] = obj
                self.on_change()
        return watch.resource_version or version


class Controller:
    def __init__(self, api: client.ApiClient, args: argparse.Namespace):
        self.core = client.CoreV1Api(api)
        self.objects = client.CustomObjectsApi(api)
        self.namespace, self.variant = args.namespace, args.variant
        self.slots, self.staleness, self.poll = args.slots, args.staleness, args.poll
        self.wake = threading.Event()
        # the nodes it keeps records for, selected by the API server (e.g. no control plane)
        self.nodes = Reflector(functools.partial(self.core.list_node,
                                                 label_selector=args.node_selector),
                               self.wake.set, "nodes")
        self.records = Reflector(functools.partial(
            self.objects.list_namespaced_custom_object, GROUP, VERSION, self.namespace, PLURAL),
            self.wake.set, PLURAL)
        self.episodes: set[str] = set()
        self.expected: dict[str, str | None] = {}  # own writes: record name -> uid (None: gone)
        self.expected_since = 0.0

    def start(self) -> None:
        for reflector in (self.nodes, self.records):
            reflector.start()
        for reflector in (self.nodes, self.records):
            while not reflector.synced.wait(10):
                log.info("waiting for the %s list", reflector.kind)

    def run(self) -> None:
        while True:
            try:
                self.reconcile()
            except Exception as exc:  # the API server away: next round
                log.warning("reconcile failed: %s", exc)
            self.wake.wait(self.poll)
            self.wake.clear()

    def ref(self, name: str) -> str:
        return f"noderecord/{self.namespace}/{name}"

    def _expect(self, name: str, uid: str | None) -> None:
        self.expected[name], self.expected_since = uid, time.monotonic()

    def _observed(self) -> bool:
        """Own creations and deletions seen in the cache (or given up on): no acting on a
        cache that misses them."""
        uids = {o["metadata"]["name"]: o["metadata"].get("uid") for o in self.records.items()}
        self.expected = {n: u for n, u in self.expected.items() if uids.get(n) != u}
        if time.monotonic() - self.expected_since > EXPECTATIONS_TIMEOUT:
            self.expected.clear()
        return not self.expected

    def reconcile(self) -> None:
        if not self._observed():
            return
        records = [to_record(o) for o in self.records.items()]
        nodes = [o["metadata"]["name"] for o in self.nodes.items()]
        actions = plan(records, nodes, datetime.now(UTC), staleness=self.staleness,
                       poll=self.poll, slots=self.slots, variant=self.variant)
        report, self.episodes = refusal_episodes(self.episodes, actions)
        unreleased: set[int | None] = set()
        for action in actions:
            try:
                if isinstance(action, Release) and not self._release(action):
                    unreleased.add(action.record.slot)
                elif isinstance(action, Touch):
                    self._touch(action.record)
                elif isinstance(action, Assign) and action.slot not in unreleased:
                    self._assign(action)
                elif isinstance(action, Refuse) and action.node in report:
                    self._refuse(action.node)
            except ApiException as exc:
                log.warning("%s failed: %s %s", action, exc.status, exc.reason)

    def _release(self, action: Release) -> bool:
        record = action.record
        options = None
        if self.variant == "correct":
            options = client.V1DeleteOptions(preconditions=client.V1Preconditions(
                uid=record.uid, resource_version=record.resource_version))
        try:
            self.objects.delete_namespaced_custom_object(
                GROUP, VERSION, self.namespace, PLURAL, record.name, body=options)
        except ApiException as exc:
            if exc.status not in (404, 409):
                raise
            why = "gone already" if exc.status == 404 else "changed since judged (409 Conflict)"
            log.info("skipped release of %s: %s", self.ref(record.name), why)
            return False
        self._expect(record.name, None)
        log.info("released %s (slot %s, %s)", self.ref(record.name), record.slot, action.why)
        return True

    def _touch(self, record: Record) -> None:
        patch = {"spec": {"touchedAt": format_time(datetime.now(UTC))}}
        try:
            self.objects.patch_namespaced_custom_object(
                GROUP, VERSION, self.namespace, PLURAL, record.name, patch)
        except ApiException as exc:
            if exc.status != 404:
                raise
            log.info("skipped touch of %s: gone", self.ref(record.name))
            return
        log.debug("touched %s for node/%s", self.ref(record.name), record.node)

    def _assign(self, action: Assign) -> None:
        name = f"slot-{action.slot}"
        body = {"apiVersion": f"{GROUP}/{VERSION}", "kind": KIND,
                "metadata": {"name": name},
                "spec": {"node": action.node, "slot": action.slot,
                         "touchedAt": format_time(datetime.now(UTC))}}
        try:
            created = self.objects.create_namespaced_custom_object(
                GROUP, VERSION, self.namespace, PLURAL, body)
        except ApiException as exc:
            if exc.status != 409:
                raise
            log.info("skipped create of %s for node/%s: exists already, re-reading",
                     self.ref(name), action.node)
            return
        self._expect(name, created["metadata"]["uid"])
        log.info("created %s for node/%s", self.ref(name), action.node)

    def _refuse(self, node: str) -> None:
        log.info("refused node/%s: no free slot", node)
        now = datetime.now(UTC)
        event = client.CoreV1Event(
            metadata=client.V1ObjectMeta(generate_name=f"{node}.", namespace=self.namespace),
            involved_object=client.V1ObjectReference(
                api_version="v1", kind="Node", name=node, namespace=self.namespace),
            reason=REASON, type="Warning", count=1, first_timestamp=now, last_timestamp=now,
            message=f"node {node} refused: all {self.slots} slots are held",
            source=client.V1EventSource(component=COMPONENT), reporting_component=COMPONENT)
        self.core.create_namespaced_event(self.namespace, event)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--variant", choices=("faulty", "correct"), required=True)
    parser.add_argument("--kubeconfig", required=True)
    parser.add_argument("--namespace", required=True)
    parser.add_argument("--slots", type=int, default=3)
    parser.add_argument("--staleness", type=float, default=5.0, help="seconds")
    parser.add_argument("--poll", type=float, default=1.0, help="seconds")
    parser.add_argument("--node-selector", default="",
                        help="a label selector of the nodes to keep records for")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    configuration = load_config(args.kubeconfig)
    controller = Controller(client.ApiClient(configuration), args)
    controller.start()
    log.info("started noderecords (%s) in namespace %s", args.variant, args.namespace)
    controller.run()


if __name__ == "__main__":
    main()
