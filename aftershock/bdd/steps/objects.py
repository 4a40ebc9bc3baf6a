"""Steps for any resource, as Chainsaw and KUTTL users write them: apply a manifest, patch,
delete, and assert a partial manifest; judged over the whole recorded history, not at the
moment of a poll. Kinds are named as kubectl names them (``resourceclaim/c``) and found by
discovery; every write goes through the harness's door (Strict, read back)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from aftershock import phrases
from aftershock.checks.objects import ObjectRef
from aftershock.errors import StepFailed, UserError
from aftershock.grammar import match_step, split_keyword
from aftershock.kube import api as kube
from aftershock.kube import partial, paths, writes
from aftershock.kube.comparison import Comparison, ComparisonError
from aftershock.kube.discovery import Catalog, Kind, UnknownKind
from aftershock.kube.partial import PartialError
from aftershock.machine import limits, yamlsrc
from aftershock.profile.placeholders import fill
from aftershock.properties import Judgement
from aftershock.scenario import Scenario, given, then, when
from aftershock.timeline.recorder import recorded_form

CATALOG = "kinds served"  # the scenario's discovery of kinds (not plain data: not judged)
FEATURE_DIR = "feature dir"  # where the feature file is: manifests are named relative to it
CASCADE = {"propagationPolicy": "Background"}  # kubectl delete's default cascade


def catalog(scenario: Scenario) -> Catalog:
    """What the cluster serves, and the kinds of the CRDs the implementation will install."""
    found = scenario.facts.get(CATALOG)
    if found is None:
        found = Catalog.from_api(kube.Discovery(scenario.api))
        profile = scenario.facts.get("profile")
        for manifest in getattr(profile, "manifests", ()):
            found.add_crds(yamlsrc.manifests(profile.resolve(manifest)))
        scenario.facts[CATALOG] = found
    return found


def _kind(scenario: Scenario, word: str) -> Kind:
    try:
        kind = catalog(scenario).resolve(word)
    except UnknownKind as exc:
        raise StepFailed(str(exc)) from None
    _known(scenario, word, kind)
    _record(scenario, kind)
    return kind


def _known(scenario: Scenario, word: str, kind: Kind) -> None:
    """The phrases ("configmap/c is gone") read the word as discovery found it."""
    scenario.facts.setdefault(phrases.KINDS, {})[word.lower()] = {
        "resource": kind.plural, "namespaced": kind.namespaced}


REF = re.compile(r"{(\w+):Ref}")


def prepare(scenario: Scenario, feature: Path | None,
            steps: list[tuple[str, str | None, int]], here: Path | None = None) -> None:
    """Before the first step: every kind the scenario's steps name (``kind/name``, in its
    phrases too, and the manifests of its blocks) found by discovery and recorded from now
    on. A kind this cluster does not serve is refused naming the step's file:line (no file:
    a notebook's step) and the closest kinds it serves. Manifests are named relative to the
    feature, else to ``here`` (an explored workload's folder), else the working directory."""
    scenario.remember(FEATURE_DIR, str(feature.parent if feature else here or Path.cwd()))
    found: list[Kind] = []
    for index, (text, block, line) in enumerate(steps):
        try:
            found += [_kind_of(scenario, word) for word in _words(text)]
            step = match_step(split_keyword(text)[1])
            if feature is not None and step is not None and \
                    step[0].func is never_has_until_step:  # a notebook's next steps: not yet
                _later_step(step[1]["words"], [split_keyword(t)[1] for t, _, _ in
                                               steps[index + 1:]])
            where = "the step's block"
            if step is not None and step[0].func is apply_file:
                block = _manifest_file(scenario, step[1]["path"])
                where = step[1]["path"]
            documents = None if block is None else _parsed(scenario, block, where)
            if documents is not None and step is not None and step[0].func in (apply_block,
                                                                               apply_file):
                found += _manifest_kinds(scenario, documents)
            if documents is not None:
                _check_size(documents)
            if step is not None:
                _check_fields(scenario, *step, documents)
        except (UnknownKind, FileNotFoundError, TooLarge, StepFailed, PartialError) as exc:
            if feature is None:
                raise UserError(str(exc)) from None
            raise UserError(str(exc), path=str(feature), line=line) from None
    for kind in dict.fromkeys(found):
        _record(scenario, kind)


def _parsed(scenario: Scenario, block: str, where: str) -> list[Any]:
    """A step's manifests as they will be applied, or one clear message where they do not
    parse. {name}: a name unique to the scenario that fits any object name or label (its
    namespace's: a DNS label)."""
    filled = fill(block, {"namespace": scenario.namespace, "name": scenario.namespace})
    try:
        return list(yaml.safe_load_all(filled))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        why = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        at = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        raise StepFailed(f"{where}: the YAML does not parse: {why}{at}") from None


def _check_fields(scenario: Scenario, definition, arguments: dict[str, Any],
                  documents: list[Any] | None) -> None:
    """The fields a judging step names exist in the kind's published schema: a typo would
    otherwise make "at no point did it have <typo> > 5" hold for ever."""
    refs = REF.findall(definition.pattern)
    if not refs or definition.func not in FIELDS:
        return
    if definition.func in (matches, matches_for):
        expected = [d for d in documents or [] if d is not None]
        named = [(refs[0], path) for path in
                 (partial.leaf_paths(expected[0]) if len(expected) == 1 else [])]
    else:
        named = [(ref, paths.parse(Comparison.parse(_having(str(arguments[said]))).path))
                 for ref, said in FIELDS[definition.func]]
    for ref, steps in named:
        kind = catalog(scenario).resolve(str(arguments[ref]).partition("/")[0])
        problem = catalog(scenario).field_problem(kind, steps)
        if problem:
            raise UnknownKind(f"{kind.kind.lower()} has no field {paths.shown(steps)}: "
                              f"{problem}")


def _kind_of(scenario: Scenario, word: str) -> Kind:
    kind = catalog(scenario).resolve(word)
    _known(scenario, word, kind)
    return kind


def _words(text: str) -> list[str]:
    """The kind words a step names: its kind/name arguments, and its phrases' kinds."""
    found = match_step(split_keyword(text)[1])
    if found is None:
        return []
    definition, arguments = found
    words = [str(arguments[name]).partition("/")[0] for name in REF.findall(definition.pattern)]
    known = {"condition": phrases.CONDITIONS, "event": phrases.EVENTS}
    for argument, what in definition.phrases.items():
        said = phrases.match(known[what], str(arguments[argument]))
        if said is not None and said[1].get("kind"):
            words.append(str(said[1]["kind"]))
    return words


class TooLarge(ValueError):
    """Manifests that would make more pods than this machine holds."""


def _check_size(documents: list[Any]) -> None:
    problem = limits.manifest_problem(documents)
    if problem:
        raise TooLarge(f"{problem} (every replicas and parallelism in the manifests counts)")


def _manifest_kinds(scenario: Scenario, documents: list[Any]) -> list[Kind]:
    kinds = []
    for manifest in documents:
        if isinstance(manifest, dict) and manifest.get("apiVersion") and manifest.get("kind"):
            kinds.append(catalog(scenario).of_manifest(manifest["apiVersion"],
                                                       manifest["kind"]))
    return kinds


def _record(scenario: Scenario, kind: Kind) -> None:
    if (kind.group, kind.plural) in catalog(scenario).pending:
        # Recorded once the implementation has installed it (with the profile's kinds)
        records = scenario.facts.setdefault("records", [])
        if (kind.group, kind.plural) not in records:
            records.append((kind.group, kind.plural))
    elif scenario.recorder is not None:
        scenario.recorder.record([(kind.group, kind.plural)])


def _ref(scenario: Scenario, text: str) -> tuple[Kind, str, ObjectRef]:
    """'raycluster/web' → its kind, name and the reference judgements carry."""
    word, slash, name = text.partition("/")
    if not slash or not name:
        raise StepFailed(f"'{text}': expected <kind>/<name>, as kubectl names an object "
                         "(resourceclaim/c)")
    kind = _kind(scenario, word)
    namespace = scenario.namespace if kind.namespaced else ""
    return kind, name, ObjectRef(kind.plural, namespace, name, f"{word}/{name}")


def _documents(scenario: Scenario, text: str, where: str) -> list[dict[str, Any]]:
    found = [d for d in _parsed(scenario, text, where) if d is not None]
    if not found or not all(isinstance(d, dict) for d in found):
        raise StepFailed(f"{where}: expected one or more manifests (maps)")
    return found


def _resource(scenario: Scenario, kind: Kind, api_version: str | None = None):
    client = scenario.facts.get("dynamic client")
    if client is None:
        client = scenario.remember("dynamic client", kube.dynamic_client(scenario.api))
    return client.resources.get(api_version=api_version or kind.api_version, kind=kind.kind)


def apply(scenario: Scenario, text: str, where: str) -> None:
    for manifest in _documents(scenario, text, where):
        api_version, kind_name = manifest.get("apiVersion"), manifest.get("kind")
        name = (manifest.get("metadata") or {}).get("name")
        if not api_version or not kind_name or not name:
            raise StepFailed(f"{where}: a manifest needs apiVersion, kind and metadata.name")
        try:
            kind = catalog(scenario).of_manifest(api_version, kind_name)
        except UnknownKind as exc:
            raise StepFailed(f"{where}: {exc}") from None
        _record(scenario, kind)
        namespace = scenario.namespace if kind.namespaced else None
        if namespace:
            manifest.setdefault("metadata", {})["namespace"] = namespace
        scenario.timeline.mark(f"apply {kind.kind.lower()}/{name}")
        resource = _resource(scenario, kind, api_version)
        if not kind.namespaced and f"apply {kind.plural}/{name}" not in scenario.facts:
            # Outside the namespace: removed when the scenario ends, however it ends
            key = f"{kind.plural}/{name}"
            scenario.remember(f"apply {key}", True)
            scenario.remember_undo(key, {"do": "delete_object", "api_version": api_version,
                                         "kind": kind_name, "name": name})

            def undo(resource=resource, name=name, key=key) -> None:
                # a step may have deleted it ("When I delete clusterrole/x"), or its apply
                # been refused before it was made
                writes.delete(resource, name, None, missing_ok=True)
                scenario.forget_undo(key)
            scenario.on_cleanup(f"delete {kind.kind.lower()}/{name}", undo)
        writes.apply(resource, manifest, namespace)


@given("I apply:")
def apply_block(scenario: Scenario, docstring: str) -> None:
    """Create or update the block's manifests, status too (kubectl apply --server-side).

    {namespace} and {name} in them are the scenario's."""
    apply(scenario, docstring, "the block")


@given("I apply the manifest {path}")
def apply_file(scenario: Scenario, path: str) -> None:
    """As 'I apply:', from a file relative to the feature file (manifests/claim.yaml)."""
    try:
        text = _manifest_file(scenario, path)
    except FileNotFoundError as exc:
        raise StepFailed(str(exc)) from None
    apply(scenario, text, path)


def _manifest_file(scenario: Scenario, path: str) -> str:
    file = Path(scenario.facts.get(FEATURE_DIR) or ".") / path
    if not file.is_file():
        raise FileNotFoundError(f"no manifest {path} (a path is relative to the feature "
                                f"file: {file} is not a file)")
    return file.read_text()


@when("I patch {ref:Ref}:")
def patch(scenario: Scenario, ref: str, docstring: str) -> None:
    """A merge patch of the block (null removes a field), its status through /status."""
    kind, name, _ = _ref(scenario, ref)
    body = _documents(scenario, docstring, "the block")
    if len(body) != 1:
        raise StepFailed("a patch is one map: the fields to change (null removes one)")
    namespace = scenario.namespace if kind.namespaced else None
    scenario.timeline.mark(f"patch {ref}")
    writes.merge_patch(_resource(scenario, kind), name, namespace, body[0])


@when("I delete {ref:Ref}")
def delete(scenario: Scenario, ref: str) -> None:
    """Delete it (kubectl delete --wait=false): finalizers may hold it; judge it gone later.
    Its dependents go in the background, as kubectl's default cascade has it (the API's own
    default for a batch/v1 Job orphans its pods)."""
    kind, name, _ = _ref(scenario, ref)
    scenario.timeline.mark(f"delete {ref}")
    writes.delete(_resource(scenario, kind), name,
                  scenario.namespace if kind.namespaced else None, body=CASCADE)


def _expected(scenario: Scenario, docstring: str, target: ObjectRef) -> dict[str, Any]:
    """The block's partial manifest, in the history's form: a Secret's values are recorded as
    digests, so the values the block names are compared as digests too."""
    expected = _documents(scenario, docstring, "the block")
    if len(expected) != 1 or not isinstance(expected[0], dict):
        raise StepFailed("the part of the object to match is one map")
    return recorded_form(expected[0], target.resource)


@then("within {seconds:d} seconds {ref:Ref} matches:", check="matches_within")
def matches(scenario: Scenario, seconds: int, ref: str, docstring: str) -> None:
    """It matched the block's partial manifest at some recorded moment (Chainsaw's rules).

    A list element is picked by key or index: conditions[type=Ready]: {status: "True"}."""
    _, _, target = _ref(scenario, ref)
    expected = _expected(scenario, docstring, target)
    start = scenario.now
    try:
        scenario.wait_until(lambda state: partial.matches(expected, target.get(state)),
                            seconds)
    except PartialError as exc:
        raise StepFailed(str(exc)) from None
    scenario.judge(Judgement("matches_within", {
        "object": _plain(target), "expected": expected, "start": start, "within": seconds,
        "now": scenario.now}))


@then("for {seconds:d} seconds {ref:Ref} matches:", check="matches_for")
def matches_for(scenario: Scenario, seconds: int, ref: str, docstring: str) -> None:
    """It matched the block's partial manifest from this step on, at every recorded change,
    for the whole time: an object that flips away and back between two polls breaks it."""
    _, _, target = _ref(scenario, ref)
    expected = _expected(scenario, docstring, target)
    start = scenario.now
    end = start + seconds
    try:  # returns early once it breaks: the verdict is then already decided
        scenario.wait_until(lambda state: not partial.matches(expected, target.get(state))
                            or scenario.now >= end, seconds)
    except PartialError as exc:
        raise StepFailed(str(exc)) from None
    scenario.judge(Judgement("matches_for", {
        "object": _plain(target), "expected": expected, "start": start, "duration": seconds,
        "now": scenario.now}))


@then("{ref:Ref} changed at most {count:d} times within {seconds:d} seconds",
      check="changed_at_most")
def changed_at_most(scenario: Scenario, ref: str, count: int, seconds: int) -> None:
    """From this step on, for that long, it changed at most so often (every recorded watch
    event of it counts): a status written in a loop breaks it."""
    _, _, target = _ref(scenario, ref)
    start = scenario.now
    end = start + seconds
    scenario.wait_until(lambda _state: scenario.now >= end, seconds)
    scenario.judge(Judgement("changed_at_most", {
        "object": _plain(target), "limit": count, "start": start, "within": seconds,
        "now": scenario.now}))


def _comparison(text: str) -> Comparison:
    try:
        return Comparison.parse(text)
    except ComparisonError as exc:
        raise StepFailed(str(exc)) from None


@then("at no point did {ref:Ref} have {comparison:Comparison}", check="never_had")
def never_had(scenario: Scenario, ref: str, comparison: str) -> None:
    """At no recorded change was the field so: status.readyReplicas > 5 (or exists, absent).

    Operators: ==, !=, <, <=, >, >=, exists, absent."""
    scenario.judge(Judgement("never_had", _compared(scenario, ref, comparison)))


@then("every change of {ref:Ref} kept {comparison:Comparison}", check="kept")
def kept(scenario: Scenario, ref: str, comparison: str) -> None:
    """After every recorded change it was so: spec.groups[name=workers].replicas >= 1."""
    scenario.judge(Judgement("kept", _compared(scenario, ref, comparison)))


def _having(text: str) -> str:
    """What an object has: a comparison, or a bare path meaning it exists."""
    text = text.strip()
    return text if " " in text else f"{text} exists"


def _condition(scenario: Scenario, ref: str, having: str) -> dict[str, Any]:
    return _compared(scenario, ref, _having(having))


@then("from now on {ref:Ref} never has {comparison:Having}", check="never_has_from")
def never_has_from(scenario: Scenario, ref: str, comparison: str) -> None:
    """From this step to the scenario's end, it never has the field so (the state it has now
    included): judged after the last step. A bare path means the field exists:
    status.reservedFor[name=x]."""
    _promise(scenario, _condition(scenario, ref, comparison), None)


@then("from now on {ref:Ref} never has {comparison:Having} until {other:Ref} has "
      "{until:Having}", check="never_has_from")
def never_has_until(scenario: Scenario, ref: str, comparison: str, other: str,
                    until: str) -> None:
    """From this step until the other object first has its field so (or the scenario's end),
    it never has the field so; what it has from then on is not judged."""
    _promise(scenario, _condition(scenario, ref, comparison),
             _condition(scenario, other, until))


@then("from now on {ref:Ref} never has {comparison:Having} until I {words}",
      check="never_has_from")
def never_has_until_step(scenario: Scenario, ref: str, comparison: str, words: str) -> None:
    """From this step until a later step that begins with these words ("until I delete
    pod/x") begins, it never has the field so; what it has from then on is not judged."""
    _promise(scenario, _condition(scenario, ref, comparison), None, f"I {words}")


def _later_step(words: str, later: list[str]) -> None:
    """A scope that ends at a later step names one the scenario has (checked before it runs:
    a misspelt one would make the scope the whole rest of the scenario)."""
    if not any(text.startswith(f"I {words}") for text in later):
        raise StepFailed(f"'until I {words}': no later step of this scenario begins with "
                         f"'I {words}'")


def _promise(scenario: Scenario, said: dict[str, Any], until: dict[str, Any] | None,
             step: str | None = None) -> None:
    start, mine = scenario.now, len(scenario.begun)
    scenario.timeline.mark(f"from now on: {said['object']['shown']} never has "
                           f"{said['comparison']}")

    def judgement() -> Judgement:
        ends = [at for text, at in scenario.begun[mine:] if step and text.startswith(step)]
        return Judgement("never_has_from", {
            **said, "start": start, "now": scenario.now, "until": until,
            "end": ends[0] if ends else None,
            "ended_by": f"the step '{step}' began" if ends else ""})
    scenario.promise(judgement)


@then("while {guard:Ref} has {condition:Having}, {ref:Ref} never has {comparison:Having}",
      check="never_while")
def never_while(scenario: Scenario, guard: str, condition: str, ref: str,
                comparison: str) -> None:
    """No recorded change of the second object left it with its field so while the first had
    its own so: a claim written reserved for a pod after the pod finished."""
    scenario.judge(Judgement("never_while", {**_condition(scenario, ref, comparison),
                                             "while": _condition(scenario, guard, condition)}))


@then("while {guard:Ref} is {phase:w}, {ref:Ref} never has {comparison:Having}",
      check="never_while")
def never_while_phase(scenario: Scenario, guard: str, phase: str, ref: str,
                      comparison: str) -> None:
    """The same, with the first object's status.phase: while pod/x is Succeeded, ..."""
    never_while(scenario, guard, f"status.phase == {phase}", ref, comparison)


def _compared(scenario: Scenario, ref: str, comparison: str) -> dict[str, Any]:
    """A comparison's judgement, with what the published schema types its field as: a number
    (its absence is 0), another type, or not known (None)."""
    kind, _, target = _ref(scenario, ref)
    said = _comparison(comparison)
    typed = catalog(scenario).field_type(kind, said.path)
    return {"object": _plain(target), "comparison": said.text,
            "numeric": None if typed is None else typed in ("integer", "number")}


def _plain(ref: ObjectRef) -> dict[str, str]:
    return {"resource": ref.resource, "namespace": ref.namespace, "name": ref.name,
            "shown": ref.shown}


# The judging steps whose fields are checked against the published schema at collection: the
# object each field is of, and the argument that names it ("phase" is status.phase)
FIELDS = {never_had: [("ref", "comparison")], kept: [("ref", "comparison")], matches: [],
          matches_for: [], never_has_from: [("ref", "comparison")],
          never_has_until: [("ref", "comparison"), ("other", "until")],
          never_has_until_step: [("ref", "comparison")],
          never_while: [("guard", "condition"), ("ref", "comparison")],
          never_while_phase: [("ref", "comparison")]}
