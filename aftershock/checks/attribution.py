"""Who did it: counting audited actions by actor."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable

from aftershock.timeline.entry import AUDIT, Entry

ALIASES = {
    "the harness": "aftershock",
    "aftershock": "aftershock",
    "the scheduler": "system:kube-scheduler",
    "the kube-scheduler": "system:kube-scheduler",
    "the kubelet": "kwok-controller",
    "kwok": "kwok-controller",
}


def actor_matches(description: str) -> Callable[[str], bool]:
    """'the replicaset controller' → …:replicaset-controller; an exact username also works."""
    text = description.strip()
    if text in ALIASES:
        wanted = ALIASES[text]
        return lambda user: user == wanted
    if text.startswith("the ") and text.endswith(" controller"):
        suffix = ":" + text[4:].replace(" ", "-")
        return lambda user: user.endswith(suffix)
    return lambda user: user == text or user.endswith(":" + text)


def count(entries: Iterable[Entry], action: Callable[[Entry], bool]) -> Counter[str]:
    """How many audited ``action``s each actor performed."""
    return Counter(e.actor for e in entries if e.kind == AUDIT and action(e))


def pod_created(namespace: str, selector: dict[str, str]) -> Callable[[Entry], bool]:
    def matches(entry: Entry) -> bool:
        labels = entry.extra.get("labels") or {}
        return (entry.resource == "pods" and not entry.subresource and entry.verb == "create"
                and entry.code in (200, 201) and entry.namespace == namespace
                and all(labels.get(k) == v for k, v in selector.items()))
    return matches


def pod_deleted(namespace: str, names: set[str]) -> Callable[[Entry], bool]:
    """A successful delete or eviction of one of ``names``."""
    def matches(entry: Entry) -> bool:
        if entry.resource != "pods" or entry.namespace != namespace or entry.name not in names:
            return False
        deleted = entry.verb == "delete" and not entry.subresource
        evicted = entry.verb == "create" and entry.subresource == "eviction"
        return (deleted or evicted) and entry.code in (200, 201)
    return matches
