"""The cluster as the recorded history says it was at one point: replayed entry by entry.

Judges ask the same questions after every entry ("how many live pods of web?"), so a State keeps
an index per question it has been asked: each entry updates the indexes of its resource, and an
answer costs no scan of every object.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from aftershock.kube import labels
from aftershock.timeline.entry import GAP_END, GAP_START, WATCH, Entry

Selector = dict[str, str]
Key = tuple[str, str, str]
Predicate = Callable[[dict[str, Any]], bool]


def selects(selector: Selector | None, obj: dict[str, Any]) -> bool:
    """Whether the object's labels have every key=value of ``selector``."""
    return not selector or labels.has_all(selector, (obj.get("metadata") or {}).get("labels"))


def is_live(obj: dict[str, Any]) -> bool:
    """Exists and is not being deleted (a *live* pod, as the properties use the word)."""
    return not (obj.get("metadata") or {}).get("deletionTimestamp")


def is_ready(pod: dict[str, Any]) -> bool:
    """Live and with the Ready condition True."""
    conditions = (pod.get("status") or {}).get("conditions") or []
    return is_live(pod) and any(c.get("type") == "Ready" and c.get("status") == "True"
                                for c in conditions)


def is_running(pod: dict[str, Any]) -> bool:
    return is_live(pod) and phase(pod) == "Running"


def exists(_obj: dict[str, Any]) -> bool:
    return True


def phase(obj: dict[str, Any]) -> str:
    return (obj.get("status") or {}).get("phase", "")


def node_of(obj: dict[str, Any]) -> str:
    return (obj.get("spec") or {}).get("nodeName") or ""


def changes_of(entry: Entry) -> list[tuple[Key, dict[str, Any] | None]]:
    """What a re-list found, as (key, object or None when deleted), from a GAP_END entry."""
    found = []
    for change in (entry.extra or {}).get("changes") or []:
        obj = change["object"]
        meta = obj.get("metadata") or {}
        key = (entry.resource, meta.get("namespace", ""), meta.get("name", ""))
        found.append((key, None if change["type"] == "DELETED" else obj))
    return found


class Query:
    """A question asked of every state: the objects of a resource (and namespace) that a
    selector and a predicate admit. Made once and asked often, it is answered from an index."""

    __slots__ = ("index", "key", "namespace", "predicate", "resource", "selector", "state")

    def __init__(self, resource: str, namespace: str | None = None,
                 selector: Selector | None = None, predicate: Predicate = exists):
        self.resource, self.namespace, self.selector, self.predicate = (
            resource, namespace, selector, predicate)
        self.key = (resource, namespace, tuple(sorted((selector or {}).items())), predicate)
        self.state: State | None = None  # the state it was last answered in, and its index
        self.index: Index | None = None


class Index:
    """The objects of one resource (and namespace) that a selector and a predicate admit, with
    the entry at which each one was last admitted."""

    __slots__ = ("ever", "joined", "members", "namespace", "predicate", "selector")

    def __init__(self, namespace: str | None, selector: Selector | None, predicate: Predicate):
        self.namespace, self.selector, self.predicate = namespace, selector, predicate
        self.members: dict[Key, dict[str, Any]] = {}
        self.joined: dict[Key, Entry | None] = {}
        self.ever: set[Key] = set()  # every object it has admitted

    def update(self, key: Key, obj: dict[str, Any] | None, entry: Entry | None) -> None:
        namespace = self.namespace
        if namespace is not None and key[1] != namespace:
            return
        members = self.members
        if obj is not None and (not self.selector or selects(self.selector, obj)) \
                and self.predicate(obj):
            if key not in members:
                self.joined[key] = entry
                self.ever.add(key)
            members[key] = obj
        elif key in members:
            del members[key]
            del self.joined[key]


class State:
    """Objects by (resource, namespace, name), updated one entry at a time."""

    def __init__(self) -> None:
        self.gaps: set[str] = set()  # resources whose history is unknown right now
        self.last: Entry | None = None
        self._by_resource: dict[str, dict[Key, dict[str, Any]]] = {}
        self._indexes: dict[tuple, Index] = {}
        self._indexes_of: dict[str, list[Index]] = {}
        self._asked: dict[int, tuple[Query, Index]] = {}  # by id; the query is kept alive
        # The version a list found each object at (or found it gone), after a gap or a
        # catch-up: a watch that was behind still delivers its older events, which must not
        # bring back what the list superseded.
        self._listed_at: dict[Key, int] = {}

    def apply(self, entry: Entry) -> None:
        self.last = entry
        if entry.kind == WATCH and entry.object is not None:
            key = (entry.resource, entry.namespace, entry.name)
            if self._superseded(key, entry.rv):
                return
            self.put(key, None if entry.type == "DELETED" else entry.object, entry)
        elif entry.kind == GAP_START:
            self.gaps.add(entry.resource)
        elif entry.kind == GAP_END:
            listed = int(entry.rv) if entry.rv.isdigit() else 0
            for key, obj in changes_of(entry):
                self.put(key, obj, entry)
                if listed:
                    self._listed_at[key] = listed
            self.gaps.discard(entry.resource)

    def _superseded(self, key: Key, rv: str) -> bool:
        """An event from before the list that last found the object: older than what the
        state has."""
        listed = self._listed_at.get(key)
        if listed is None:
            return False
        if rv.isdigit() and int(rv) <= listed:
            return True
        del self._listed_at[key]  # a later change: the watch is past the list
        return False

    def put(self, key: Key, obj: dict[str, Any] | None, entry: Entry | None = None) -> None:
        """Set (or, with None, remove) one object, keeping the indexes up to date."""
        of_resource = self._by_resource.get(key[0])
        if of_resource is None:
            of_resource = self._by_resource[key[0]] = {}
        if obj is None:
            of_resource.pop(key, None)
        else:
            of_resource[key] = obj
        indexes = self._indexes_of.get(key[0])
        if indexes:
            for index in indexes:
                index.update(key, obj, entry)

    @property
    def objects(self) -> dict[Key, dict[str, Any]]:
        """Every object now, by (resource, namespace, name): a copy, to read."""
        return {key: obj for of_resource in self._by_resource.values()
                for key, obj in of_resource.items()}

    def of(self, resource: str) -> dict[Key, dict[str, Any]]:
        """The objects of one resource now, by key (to read)."""
        return self._by_resource.get(resource, {})

    def names(self, resource: str) -> set[str]:
        return {name for _, _, name in self._by_resource.get(resource, {})}

    def index(self, resource: str, namespace: str | None = None,
              selector: Selector | None = None, predicate: Predicate = exists) -> Index:
        """The index answering this question, built from the objects now and kept up to date
        by every later entry."""
        return self.answer(Query(resource, namespace, selector, predicate), remember=False)

    def answer(self, query: Query, remember: bool = True) -> Index:
        """The index for ``query``; a query asked again (``remember``) is found by identity."""
        if query.state is self:
            return query.index
        asked = self._asked.get(id(query))
        if asked is not None and asked[0] is query:
            return asked[1]
        found = self._indexes.get(query.key)
        if found is None:
            found = self._indexes[query.key] = Index(query.namespace, query.selector,
                                                     query.predicate)
            for key, obj in self._by_resource.get(query.resource, {}).items():
                found.update(key, obj, None)
            self._indexes_of.setdefault(query.resource, []).append(found)
        if remember:
            self._asked[id(query)] = (query, found)
            query.state, query.index = self, found
        return found

    def questions(self) -> set[tuple]:
        """The questions it keeps an index for (by their keys)."""
        return set(self._indexes)

    def forget(self, questions: set[tuple]) -> None:
        """Keep no index for these questions: a replay that will not ask them again need not
        update them at every change (asked again, an index is built from the objects then)."""
        for key in questions:
            index = self._indexes.pop(key, None)
            if index is None:
                continue
            self._indexes_of[key[0]].remove(index)
            for id_, (query, asked) in list(self._asked.items()):
                if asked is index:
                    del self._asked[id_]
                    query.state = query.index = None

    def count(self, query: Query | str, namespace: str | None = None,
              selector: Selector | None = None, predicate: Predicate = exists) -> int:
        """How many objects a query admits (a Query made once is the fast way to ask)."""
        if not isinstance(query, Query):
            return len(self.index(query, namespace, selector, predicate).members)
        return len(self.answer(query).members)

    def select(self, resource: str, namespace: str | None = None,
               selector: Selector | None = None) -> list[dict[str, Any]]:
        return [obj for (_, ns, _), obj in self._by_resource.get(resource, {}).items()
                if (namespace is None or ns == namespace) and selects(selector, obj)]

    def get(self, resource: str, namespace: str, name: str) -> dict[str, Any] | None:
        return self._by_resource.get(resource, {}).get((resource, namespace, name))

    def has(self, key: Key) -> bool:
        return key in self._by_resource.get(key[0], {})

    def live_pods(self, namespace: str | None, selector: Selector | None) -> list[dict[str, Any]]:
        return list(self.index("pods", namespace, selector, is_live).members.values())

    def copy(self) -> State:
        """The same objects, without the indexes."""
        fresh = State()
        fresh._by_resource = {resource: dict(of) for resource, of in self._by_resource.items()}
        fresh.gaps = set(self.gaps)
        fresh._listed_at = dict(self._listed_at)
        return fresh


def replay(entries: Iterable[Entry]) -> Iterator[tuple[Entry, State]]:
    """Each entry with the state just after it (the same State object, updated in place)."""
    state = State()
    for entry in entries:
        state.apply(entry)
        yield entry, state
