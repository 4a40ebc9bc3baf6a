"""Who did it: counting audited actions by actor."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable

from aftershock.checks.verdict import PASS, VIOLATED, Verdict
from aftershock.timeline.entry import AUDIT, WATCH, Entry
from aftershock.timeline.state import selects

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


GARBAGE_COLLECTOR = "system:serviceaccount:kube-system:generic-garbage-collector"


SLACK = 5.0  # an audited request's time is when its response completed, after what it did


def done_by(entries: Iterable[Entry], is_actor: Callable[[str], bool]) -> Callable[[Entry], bool]:
    """Whether an audited write is the actor's: it made it, or it is the garbage collector's
    deletion of an object whose owner the actor deleted (a cascade: Grove deletes a PodClique,
    the collector its pods). An owner is the actor's to have deleted when, while the owner
    lived, the actor deleted it (by name, or a collection of its kind in its namespace) and
    nobody else did: the namespace's own teardown, later, takes nothing from it."""
    cascade = cascade_began(entries, is_actor)

    def judged(entry: Entry) -> bool:
        return bool(is_actor(entry.actor)) or cascade(entry) is not None
    return judged


def cascade_began(entries: Iterable[Entry],
                  is_actor: Callable[[str], bool]) -> Callable[[Entry], float | None]:
    """For the garbage collector's deletion of an object whose owner the actor deleted (as
    ``done_by`` says), when the actor deleted that owner: the moment the termination began,
    before which its replacements cannot have been made. None for any other write."""
    entries = list(entries)
    owned: dict[tuple[str, str], set[str]] = {}  # (namespace, name) of a pod → its owners' uids
    kinds: dict[str, tuple[str, str, str]] = {}  # uid → (resource, namespace, name)
    lived: dict[str, list[float]] = {}  # uid → [first seen, first seen going]
    for entry in entries:
        if entry.kind != WATCH or not entry.object or not entry.uid:
            continue
        meta = entry.object.get("metadata") or {}
        kinds[entry.uid] = (entry.resource, entry.namespace, entry.name)
        span = lived.setdefault(entry.uid, [entry.mono, float("inf")])
        if entry.type == "DELETED" or meta.get("deletionTimestamp"):
            span[1] = min(span[1], entry.mono)
        refs = {ref.get("uid") for ref in meta.get("ownerReferences") or [] if ref.get("uid")}
        if refs:
            owned.setdefault((entry.namespace, entry.name), set()).update(refs)
    deletions = [e for e in entries if e.kind == AUDIT and e.verb in ("delete", "deletecollection")
                 and 200 <= e.code < 300 and not e.subresource]

    def deleted_by_actor(uid: str) -> float | None:
        if uid not in kinds or lived[uid][1] == float("inf"):
            return None
        resource, namespace, name = kinds[uid]
        born, going = lived[uid]
        said = [e for e in deletions if (e.resource, e.namespace) == (resource, namespace)
                and e.name in (name, "") and born - SLACK <= e.mono <= going + SLACK]
        if not said or not all(is_actor(e.actor) for e in said):
            return None
        # the first deletion near its going that it lived to see: a name reused (a PodClique
        # remade) was deleted before it was born, and a deletion repeated once it was going
        # (Grove deletes a replica's collection twice) began nothing
        near = [e.mono for e in said if e.mono >= born and abs(e.mono - going) <= SLACK]
        return min(near) if near else min(said, key=lambda e: abs(e.mono - going)).mono

    def began(entry: Entry) -> float | None:
        if entry.actor != GARBAGE_COLLECTOR:
            return None
        times = [t for uid in owned.get((entry.namespace, entry.name), ())
                 if (t := deleted_by_actor(uid)) is not None]
        return min(times, default=None)
    return began


def pod_names(entries: Iterable[Entry], namespace: str, labels: dict[str, str]) -> set[str]:
    """Every pod of ``namespace`` with these labels, seen at any time."""
    return {e.name for e in entries if e.kind == WATCH and e.resource == "pods"
            and e.namespace == namespace and selects(labels, e.object or {})}


def deleted_by(entries: Iterable[Entry], namespace: str, labels: dict[str, str],
               is_actor: Callable[[str], bool], who: str, what: str,
               name: str = "deleted_by") -> Verdict:
    """No pod with ``labels`` was deleted or evicted by an actor ``is_actor`` accepts (by the
    audit log); judged over every such pod the watch recorded."""
    entries = list(entries)
    names = pod_names(entries, namespace, labels)
    deleting, theirs = pod_deleted(namespace, names), done_by(entries, is_actor)
    guilty = [e for e in entries if e.kind == AUDIT and deleting(e) and theirs(e)]
    summary = (f"{who} deleted or evicted {len(guilty)} of the {len(names)} pods of {what}"
               if names else f"no pod of {what} was ever recorded")
    return Verdict(name, VIOLATED if guilty else PASS, summary, guilty,
                   entries[0].mono if entries else 0.0, subjects=len(names),
                   reads=frozenset({"pods", "audit"}))


def deleted_count(entries: Iterable[Entry], namespace: str, labels: dict[str, str], count: int,
                  is_actor: Callable[[str], bool], who: str, what: str,
                  name: str = "deleted_count") -> Verdict:
    """Exactly ``count`` pods with ``labels`` were deleted or evicted by an actor ``is_actor``
    accepts (by the audit log). Too few is judged by absence, as for creations."""
    entries = list(entries)
    names = pod_names(entries, namespace, labels)
    deleting = pod_deleted(namespace, names)
    done = [e for e in entries if e.kind == AUDIT and deleting(e) and is_actor(e.actor)]
    status = PASS if len(done) == count else VIOLATED
    return Verdict(name, status, f"{who} deleted or evicted {len(done)} of the {len(names)} "
                   f"pods of {what} (expected {count})", done,
                   entries[0].mono if entries else 0.0, subjects=len(names),
                   by_absence=len(done) < count, reads=frozenset({"pods", "audit"}))


def created_by(entries: Iterable[Entry], namespace: str, labels: dict[str, str], count: int,
               is_actor: Callable[[str], bool], who: str, what: str,
               name: str = "created_by") -> Verdict:
    """Exactly ``count`` pods with ``labels`` were created by an actor ``is_actor`` accepts.
    Too few is judged by absence (a log that lags would hide creations)."""
    entries = list(entries)
    creating = pod_created(namespace, labels)
    made = [e for e in entries if e.kind == AUDIT and creating(e) and is_actor(e.actor)]
    seen = len(pod_names(entries, namespace, labels))
    status = PASS if len(made) == count else VIOLATED
    return Verdict(name, status, f"{who} created {len(made)} pods of {what} (expected "
                   f"exactly {count})", made if status != PASS else [],
                   entries[0].mono if entries else 0.0, subjects=seen,
                   by_absence=len(made) < count, reads=frozenset({"pods", "audit"}))


def actor(words: str, exact: bool = False) -> Callable[[str], bool]:
    """An actor given as plain data: a username (exact) or words ('the scheduler')."""
    return (lambda user: user == words) if exact else actor_matches(words)
