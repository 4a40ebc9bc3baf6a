"""E: the differential oracles of `aftershock explore`, a run judged against its unperturbed
reference runs (as Sieve's are), plus the error storm. Each reference travels as plain data in
the judgement's parameters, so a saved run is judged again against the same reference."""

from __future__ import annotations

from aftershock.checks import differential as diff
from aftershock.checks.verdict import PASS, VIOLATED, Verdict
from aftershock.history import History
from aftershock.history.names import AUDIT_LOG, QUIET
from aftershock.properties.base import Params, check, prop

prop("E1", "The objects the implementation owns (created, by the audit log) end as in the "
     "unperturbed reference runs, with the fields that vary between those runs masked.",
     ["end_state_as_reference"])
prop("E2", "The implementation creates and deletes as many objects of each kind as in the "
     "unperturbed reference runs (by the audit log).", ["writes_as_reference"])
prop("E3", "No error storm: once a perturbation is lifted, the implementation never has more "
     "writes refused within 10 seconds than twice the most of the reference runs, plus 10 (while "
     "it lasts, ten times that: retries back off).", ["no_error_storm"])

HOT = 10  # how many times the limit a perturbation may cause while it lasts


@check("end_state_as_reference", "The objects the implementation created (by the audit log), "
       "at the end of the history, equal the reference's with the learned fields masked.",
       audit=True)
def end_state_as_reference(history: History, p: Params) -> Verdict:
    namespace, reference, masks = p["namespace"], p["reference"], p["masks"]
    ends = diff.end_objects(history, namespace, reference, p.get("actor"))
    unordered = p.get("unordered") or {}
    got = {r: [diff.normal(o, namespace, resource=r, unordered=unordered.get(r, ()))
               for o in objs] for r, objs in ends.items()}
    differences = diff.end_state_difference(got, reference, masks)
    judged = sum(len(objs) for r, objs in got.items() if masks.get(r) != ["*"])
    witness = [e for r in reference for e in diff.last_entries(history, namespace, r)]
    summary = "; ".join(differences) if differences else \
        f"{judged} objects of {', '.join(sorted(reference)) or 'no kind'} end as in the reference"
    return Verdict("end_state_as_reference", VIOLATED if differences else PASS, summary,
                   witness if differences else [],
                   history.origin, subjects=judged,
                   reads=frozenset({*reference, QUIET, *([AUDIT_LOG] if p.get("actor") else [])}),
                   # a difference is judged at the end, whatever happened in between
                   window=(history.end, history.end) if differences else None,
                   by_absence=any("at the end" in d for d in differences))


@check("writes_as_reference", "The creates and deletes an actor made per kind (by the audit "
       "log) fall within the reference runs' range.", audit=True)
def writes_as_reference(history: History, p: Params) -> Verdict:
    made = diff.writes(history, p["actor"], p["namespace"])
    expected: dict[str, list[int]] = p["expected"]
    wrong, witness, fewer = [], [], False
    for key in sorted({*made, *expected}):
        low, high = expected.get(key, [0, 0])
        count = len(made.get(key, []))
        if not low <= count <= high:
            band = f"{low}" if low == high else f"{low}..{high}"
            wrong.append(f"{count} {key} (reference: {band})")
            witness += made.get(key, [])
            fewer = fewer or count < low
    total = sum(len(v) for v in made.values())
    resources = {key.split(" ")[0] for key in (*made, *expected)}
    recorded = {life.key for resource in resources
                for life in history.lives_of(resource, p["namespace"])}
    summary = ("the implementation made " + ", ".join(wrong)) if wrong else \
        f"{total} creates and deletes, each kind within the reference's range"
    return Verdict("writes_as_reference", VIOLATED if wrong else PASS, summary,
                   witness, history.origin, subjects=len(recorded), by_absence=fewer or not witness,
                   reads=frozenset({*resources, "audit"}))


@check("no_error_storm", "An actor never had more writes refused within 10 seconds than a "
       "limit once every perturbation was lifted, nor ten times that while one lasted (a loop "
       "with no backoff); by the audit log.", audit=True)
def no_error_storm(history: History, p: Params) -> Verdict:
    # A controller manager's writes into the namespaces of earlier scenarios, refused while
    # they terminate, are not this run's.
    found = diff.refused(history, p["actor"], p.get("namespace"))
    during, after = diff.split_by(found, diff.perturbed(history))
    limit = p["limit"]
    storm, while_perturbed = diff.densest(after), diff.densest(during)
    status, witness = PASS, []
    if len(storm) > limit:
        status, witness = VIOLATED, storm
    elif len(while_perturbed) > HOT * limit:
        status, witness = VIOLATED, while_perturbed
    writes = sum(1 for a in history.actions if a.actor == p["actor"]
                 and a.verb in diff.WRITE_VERBS
                 and (p.get("namespace") is None or a.namespace in (p["namespace"], "")))
    summary = f"at most {len(storm)} writes refused within {diff.STORM_WINDOW:g}s (limit {limit})"
    if during:
        summary += (f"; {len(while_perturbed)} while a perturbation lasted (limit "
                    f"{HOT * limit})")
    return Verdict("no_error_storm", status, summary,
                   [a.entry for a in witness] if status != PASS else [],
                   history.origin, subjects=writes, reads=frozenset({"audit"}))
