"""Who did it: the audit log's requests, each joined to the life it acted on, counted by actor.
A request is judged by the life it touched (its uid), never by a name another life had."""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable

from aftershock.checks.verdict import PASS, UNKNOWN, VIOLATED, Verdict
from aftershock.history import Action, History, Life
from aftershock.history.state import selects

Recorded = History | Iterable

ALIASES = {
    "the harness": "aftershock",
    "aftershock": "aftershock",
    "the scheduler": "system:kube-scheduler",
    "the kube-scheduler": "system:kube-scheduler",
    "the kubelet": "kwok-controller",
    "kwok": "kwok-controller",
    "the garbage collector": "system:serviceaccount:kube-system:generic-garbage-collector",
}
# The implementation under test, by the identity its profile gives it (the step resolves it).
IMPLEMENTATION = ("the implementation", "implementation")
# kube-controller-manager's controllers, each by its service account in kube-system: "the
# replicaset controller" is system:serviceaccount:kube-system:replicaset-controller.
CONTROLLERS = (
    "attachdetach", "bootstrap-signer", "certificate", "clusterrole-aggregation", "cronjob",
    "daemon-set", "deployment", "disruption", "endpoint", "endpointslice",
    "endpointslicemirroring", "ephemeral-volume", "expand", "job", "namespace", "node",
    "pv-protection", "pvc-protection", "replicaset", "replication", "resource-claim",
    "resourcequota", "root-ca-cert-publisher", "service-account", "service-cidrs",
    "statefulset", "ttl", "ttl-after-finished", "validatingadmissionpolicy-status")
CONTROLLER = "system:serviceaccount:kube-system:{}-controller"


def _controller(text: str) -> str | None:
    """'the replicaset controller' → replicaset (None: not such words, or no such one)."""
    if not (text.startswith("the ") and text.endswith(" controller")):
        return None
    name = text[4:-len(" controller")].strip().replace(" ", "-")
    return name if name in CONTROLLERS else None


def known_actors() -> list[str]:
    """Every actor a step may name by words, as a step writes them."""
    return [*IMPLEMENTATION[:1], *ALIASES, *(f"the {c.replace('-', ' ')} controller"
                                              for c in CONTROLLERS)]


def actor_problem(words: str) -> str | None:
    """Why ``words`` name no actor the run knows (None: they do): the implementation, a named
    component, one of kube-controller-manager's controllers, or a username as the audit log
    records it (with a ``:``, e.g. system:serviceaccount:{namespace}:implementation)."""
    text = words.strip()
    if text in IMPLEMENTATION or text in ALIASES or ":" in text or _controller(text):
        return None
    close = difflib.get_close_matches(text, known_actors(), n=1, cutoff=0.6)
    hint = f"; did you mean '{close[0]}'?" if close else ""
    return (f"unknown actor '{text}': the implementation, {', '.join(ALIASES)}, the <name> "
            f"controller of kube-controller-manager ({', '.join(CONTROLLERS)}), or a username "
            f"as the audit log records it (system:...){hint}")


def username(words: str, implementation: Callable[[], str], namespace: str) -> str:
    """The username the audit log records for an actor a step names (checked by
    ``actor_problem`` when the feature was collected); a username's ``{namespace}`` is the
    scenario's."""
    text = words.strip()
    if text in IMPLEMENTATION:
        return implementation()
    if text in ALIASES:
        return ALIASES[text]
    controller = _controller(text)
    if controller is not None:
        return CONTROLLER.format(controller)
    return text.replace("{namespace}", namespace)


def actor_matches(description: str) -> Callable[[str], bool]:
    """Who a judgement saved before actors were resolved by their step meant: a username, or
    words (checked the same way: words that name nobody match nobody)."""
    text = description.strip()
    if text in ALIASES:
        wanted = ALIASES[text]
        return lambda user: user == wanted
    controller = _controller(text)
    if controller is not None:
        return lambda user: user == CONTROLLER.format(controller)
    if text.startswith("the ") and text.endswith(" controller"):
        suffix = ":" + text[4:].replace(" ", "-")
        return lambda user: user.endswith(suffix)
    return lambda user: user == text or user.endswith(":" + text)


def actor(words: str, exact: bool = False) -> Callable[[str], bool]:
    """An actor given as plain data: a username (exact) or words ('the scheduler')."""
    return (lambda user: user == words) if exact else actor_matches(words)


GARBAGE_COLLECTOR = "system:serviceaccount:kube-system:generic-garbage-collector"

SLACK = 5.0  # an audited request's time is when its response completed, after what it did


def pods_of(history: History, namespace: str, labels: dict[str, str]) -> list[Life]:
    """Every pod of ``namespace`` recorded with these labels, each life once."""
    return [life for life in history.lives_of("pods", namespace)
            if life.ever(lambda obj: selects(labels, obj))]


def pod_names(history: Recorded, namespace: str, labels: dict[str, str]) -> set[str]:
    """The names of the pods of ``namespace`` with these labels, seen at any time."""
    return {life.name for life in pods_of(History.of(history), namespace, labels)}


def done_by(history: History, is_actor: Callable[[str], bool]) -> Callable[[Action], bool]:
    """Whether an audited write is the actor's: it made it, or it is the garbage collector's
    deletion of an object whose owner the actor deleted (a cascade: Grove deletes a PodClique,
    the collector its pods). An owner is the actor's to have deleted when, while the owner
    lived, the actor deleted it and nobody else did: the namespace's own teardown, later,
    takes nothing from it."""
    cascade = cascade_began(history, is_actor)

    def judged(action: Action) -> bool:
        return bool(is_actor(action.actor)) or cascade(action) is not None
    return judged


def cascade_began(history: History,
                  is_actor: Callable[[str], bool]) -> Callable[[Action], float | None]:
    """For the garbage collector's deletion of an object whose owner the actor deleted (as
    ``done_by`` says), when the actor deleted that owner: the moment the termination began,
    before which its replacements cannot have been made. None for any other write."""
    deletions: dict[str, list[Action]] = {}  # a life's id → the deletions joined to it
    for action in history.actions:
        if action.life is not None and action.ok and not action.subresource and \
                action.verb in ("delete", "deletecollection"):
            deletions.setdefault(action.life.id, []).append(action)
    collections = [a for a in history.actions if a.ok and a.verb == "deletecollection"]

    def deleted_by_actor(owner: Life) -> float | None:
        going = owner.going
        if going is None:
            return None
        said = deletions.get(owner.id, []) + [
            a for a in collections if (a.resource, a.namespace) == owner.key[:2]
            and owner.born.lo - SLACK <= a.hi and a.lo <= going.hi + SLACK]
        if not said or not all(is_actor(a.actor) for a in said):
            return None
        # the first deletion near its going that it lived to see: one repeated once it was
        # going (Grove deletes a replica's collection twice) began nothing
        near = [a.hi for a in said if a.lo >= owner.born.lo
                and going.lo - SLACK <= a.hi <= going.hi + SLACK]
        return min(near) if near else min(a.hi for a in said)

    def began(action: Action) -> float | None:
        if action.actor != GARBAGE_COLLECTOR or action.life is None:
            return None
        owners = {ref.get("uid") for obj in action.life.objects()
                  for ref in (obj.get("metadata") or {}).get("ownerReferences") or []
                  if ref.get("uid")}
        times = [t for uid in owners if (life := history.life(uid)) is not None
                 and (t := deleted_by_actor(life)) is not None]
        return min(times, default=None)
    return began


def deletions_of(history: History, lives: list[Life]) -> tuple[list[Action], list[Action]]:
    """The deletes and evictions the API server accepted of these lives, and those of their
    names the record cannot tie to one life (another life had the name then, or none)."""
    ids = {life.id for life in lives}
    names = {life.key for life in lives}
    joined, loose = [], []
    for action in history.actions:
        if not action.deletes:
            continue
        if action.life is not None:
            if action.life.id in ids:
                joined.append(action)
        elif action.key in names:
            loose.append(action)
    return joined, loose


def unheard(history: History, is_actor: Callable[[str], bool], who: str) -> str | None:
    """Why a judgement of what ``who`` did cannot rest on the audit log: it has no request of
    that actor at all (words that name nobody, or an actor that never spoke)."""
    if any(is_actor(action.actor) for action in history.actions):
        return None
    return (f"no request by {who} was recorded in the whole history (the audit log never shows "
            "that actor), so what it did or did not do is not known")


def deleted_by(history: Recorded, namespace: str, labels: dict[str, str],
               is_actor: Callable[[str], bool], who: str, what: str,
               name: str = "deleted_by") -> Verdict:
    """No pod with ``labels`` was deleted or evicted by an actor ``is_actor`` accepts (by the
    audit log), nor by the garbage collector after it deleted their owner; judged over every
    such pod the watch recorded, each deletion by the life it removed."""
    history = History.of(history)
    lives = pods_of(history, namespace, labels)
    joined, loose = deletions_of(history, lives)
    theirs = done_by(history, is_actor)
    guilty = [a for a in joined if theirs(a)]
    unsure = [a for a in loose if theirs(a)]
    reads = frozenset({"pods", "audit"})
    origin = history.origin
    nobody = unheard(history, is_actor, who)
    if nobody is not None:
        return Verdict(name, UNKNOWN, nobody, [], origin, subjects=len(lives), reads=reads)
    if guilty:
        return Verdict(name, VIOLATED, f"{who} deleted or evicted {len(guilty)} of the "
                       f"{len(lives)} pods of {what}", [a.entry for a in guilty], origin,
                       subjects=len(lives), reads=reads)
    if unsure:
        return Verdict(name, UNKNOWN, f"{who} deleted or evicted "
                       f"{_named(unsure)}, and the record cannot tell which life of that name "
                       f"it removed (one of {what}'s, or another)", [a.entry for a in unsure],
                       origin, subjects=len(lives), reads=reads)
    summary = (f"{who} deleted or evicted 0 of the {len(lives)} pods of {what}"
               if lives else f"no pod of {what} was ever recorded")
    return Verdict(name, PASS, summary, [], origin, subjects=len(lives), reads=reads)


def _named(actions: list[Action]) -> str:
    return ", ".join(sorted({a.ref for a in actions}))


def deleted_count(history: Recorded, namespace: str, labels: dict[str, str], count: int,
                  is_actor: Callable[[str], bool], who: str, what: str,
                  name: str = "deleted_count") -> Verdict:
    """Exactly ``count`` pods with ``labels`` were deleted or evicted by an actor ``is_actor``
    accepts (by the audit log). Too few is judged by absence, as for creations."""
    history = History.of(history)
    lives = pods_of(history, namespace, labels)
    joined, loose = deletions_of(history, lives)
    done = [a for a in joined if is_actor(a.actor)]
    unsure = [a for a in loose if is_actor(a.actor)]
    pods = len({a.life.id for a in done if a.life is not None})  # a pod deleted twice is one
    reads = frozenset({"pods", "audit"})
    summary = (f"{who} deleted or evicted {pods} of the {len(lives)} pods of {what} "
               f"(expected {count})")
    nobody = unheard(history, is_actor, who)
    if nobody is not None:
        return Verdict(name, UNKNOWN, f"{nobody}; {summary}", [], history.origin,
                       subjects=len(lives), reads=reads)
    if unsure and pods <= count <= pods + len(unsure):  # each may be of another pod, or not
        return Verdict(name, UNKNOWN, f"{summary}; {len(unsure)} more of a name the record "
                       f"cannot tie to one life ({_named(unsure)})", [a.entry for a in unsure],
                       history.origin, subjects=len(lives), reads=reads)
    status = PASS if pods == count else VIOLATED
    return Verdict(name, status, summary, [a.entry for a in done], history.origin,
                   subjects=len(lives), by_absence=pods < count, reads=reads)


def created_by(history: Recorded, namespace: str, labels: dict[str, str], count: int,
               is_actor: Callable[[str], bool], who: str, what: str,
               name: str = "created_by") -> Verdict:
    """Exactly ``count`` pods with ``labels`` were created by an actor ``is_actor`` accepts
    (by the audit log: a create's response names the pod and its labels). Too few is judged
    by absence (a log that lags would hide creations)."""
    history = History.of(history)
    made = [a for a in history.actions if a.creates and a.resource == "pods"
            and a.namespace == namespace and is_actor(a.actor)
            and all(a.labels.get(k) == v for k, v in labels.items())]
    seen = len(pods_of(history, namespace, labels))
    nobody = unheard(history, is_actor, who)
    if nobody is not None:
        return Verdict(name, UNKNOWN, nobody, [], history.origin, subjects=seen,
                       reads=frozenset({"pods", "audit"}))
    status = PASS if len(made) == count else VIOLATED
    return Verdict(name, status, f"{who} created {len(made)} pods of {what} (expected "
                   f"exactly {count})", [a.entry for a in made] if status != PASS else [],
                   history.origin, subjects=seen, by_absence=len(made) < count,
                   reads=frozenset({"pods", "audit"}))


# How the API server words an admission webhook's refusal (a webhook that answered: not one it
# could not call, "failed calling webhook", which is the webhook's server being down).
DENIED = re.compile(r'admission webhook "[^"]+" denied the request')
WRITES = ("create", "update", "patch", "delete", "deletecollection")


def admitted(history: Recorded, namespace: str, name: str = "admitted") -> Verdict:
    """No write in ``namespace`` was refused by an admission webhook that answered (by the
    audit log: each refusal's request, with the API server's message naming the webhook)."""
    history = History.of(history)
    writes = [a for a in history.actions if a.namespace == namespace and a.verb in WRITES]
    refused = [a for a in writes if DENIED.search(a.refusal)]
    reads = frozenset({"audit"})
    if refused:
        first = refused[0]
        return Verdict(name, VIOLATED, f"{len(refused)} of {len(writes)} writes in the namespace "
                       f"refused by an admission webhook, the first a {first.verb} of "
                       f"{first.resource}/{first.name}: {first.refusal}",
                       [a.entry for a in refused], history.origin, subjects=len(writes),
                       reads=reads)
    return Verdict(name, PASS, f"every one of {len(writes)} writes in the namespace was admitted "
                   "or refused for another reason than a webhook's denial", [], history.origin,
                   subjects=len(writes), reads=reads)
