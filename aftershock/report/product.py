"""The AI-conformance program's items a run evidences, as a PRODUCT.yaml fragment: each item's
``id``, ``description`` and ``level`` from the program's template for the run's Kubernetes
version (kept in ``ai_conformance/`` with its license), its ``status`` from the verdicts of the
properties that show it, its ``evidence`` the URLs the user gives and a page per item written
beside the fragment, its ``notes`` what was judged."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

import aftershock
from aftershock.errors import UserError
from aftershock.properties import PROPERTIES
from aftershock.report.conformance import Case
from aftershock.report.matrix import NOT_APPLICABLE, PASS, RANK, VIOLATED, _natural

TEMPLATES = Path(__file__).with_name("ai_conformance")
# Each item of the program a run can show, and the properties that show it (one visible list):
# gang_scheduling asks for "all-or-nothing scheduling", the B family's contract;
# secure_accelerator_access for access "properly isolated and mediated by" DRA, D13's
ITEMS: dict[str, tuple[str, ...]] = {
    "gang_scheduling": ("B1", "B2", "B3", "B4", "B5"),
    "secure_accelerator_access": ("D13",),
}
# The program's statuses (its validator takes these, exactly)
IMPLEMENTED, NOT_IMPLEMENTED = "Implemented", "Not Implemented"
EVIDENCE_DIR = "evidence"
URL = re.compile(r"^https?://[^\s/$.?#][^\s]*$")


@dataclass(frozen=True)
class TemplateItem:
    category: str
    id: str
    description: str
    level: str


def versions() -> list[str]:
    """The Kubernetes versions the program has a template for, oldest first."""
    found = [p.stem.split("-", 1)[1] for p in TEMPLATES.glob("AIConformance-*.yaml")]
    return sorted(found, key=lambda v: tuple(int(x) for x in v.split(".")))


def minor(kubernetes: str) -> str:
    """v1.36.3 -> 1.36."""
    match = re.match(r"v?(\d+)\.(\d+)", kubernetes)
    if not match:
        raise UserError(f"the run's Kubernetes version {kubernetes!r} is not one like v1.36.3")
    return f"{match[1]}.{match[2]}"


def template(version: str) -> dict[str, TemplateItem]:
    """The program's items for a Kubernetes version (1.36), by id."""
    path = TEMPLATES / f"AIConformance-{version}.yaml"
    if not path.is_file():
        raise UserError(f"the AI-conformance program has no checklist for Kubernetes "
                        f"{version} (aftershock keeps those for {', '.join(versions())})")
    document = yaml.safe_load(path.read_text())
    return {item["id"]: TemplateItem(category, item["id"], item["description"], item["level"])
            for category, items in document["spec"].items() for item in items}


def check_urls(urls: list[str]) -> None:
    for url in urls:
        if not URL.match(url):
            raise UserError(f"--evidence-url {url!r}: expected the public URL of the published "
                            "run, http:// or https://")


@dataclass
class Shown:
    """What a run shows of one item: per implementation, each mapped property's worst outcome
    and its cases."""

    item: TemplateItem
    outcomes: dict[str, dict[str, list[Case]]] = field(default_factory=dict)

    def worst(self, implementation: str, label: str) -> str:
        cases = self.outcomes[implementation][label]
        return max((c.outcome for c in cases), key=lambda o: RANK[o])

    def implemented_by(self) -> list[str]:
        """The implementations that showed it: every mapped property judged passed or not
        applicable, and at least one passed (none UNKNOWN, none skipped, none violated)."""
        return [implementation for implementation, labels in self.outcomes.items()
                if all(self.worst(implementation, label) in (PASS, NOT_APPLICABLE)
                       for label in labels)
                and any(self.worst(implementation, label) == PASS for label in labels)]

    def violated(self) -> bool:
        return any(self.worst(implementation, label) == VIOLATED
                   for implementation, labels in self.outcomes.items() for label in labels)

    @property
    def status(self) -> str:
        """Implemented when an implementation showed it; Not Implemented when none did and a
        mapped property was violated; else "": the run showed neither (UNKNOWN, not judged)."""
        if self.implemented_by():
            return IMPLEMENTED
        return NOT_IMPLEMENTED if self.violated() else ""

    def line(self, implementation: str) -> str:
        """One implementation's verdicts: "B1 pass (2 scenarios), B3 not applicable: ..."."""
        parts = []
        for label in sorted(self.outcomes[implementation], key=_natural):
            cases = self.outcomes[implementation][label]
            worst = self.worst(implementation, label)
            part = f"{label} {worst}"
            if len(cases) > 1:
                part += f" ({len(cases)} scenarios)"
            if worst != PASS:
                part += f": {_said(next(c.reason for c in cases if c.outcome == worst))}"
            parts.append(part)
        return "; ".join(parts)

    @property
    def notes(self) -> str:
        runs = [f"{implementation}: {self.line(implementation)}"
                for implementation in self.outcomes]
        shown = self.implemented_by()
        head = (f"Shown by aftershock {aftershock.__version__} with "
                f"{', '.join(shown)}" if shown else
                f"Not shown by aftershock {aftershock.__version__}")
        return (f"{head}, from {', '.join(ITEMS[self.item.id])} judged {self.where}. "
                + " | ".join(runs))

    @property
    def where(self) -> str:
        """On what cluster: a platform's (kind, an existing one) or aftershock's own."""
        providers = {c.row.provider or "local" for labels in self.outcomes.values()
                     for cases in labels.values() for c in cases}
        if providers <= {"local"}:
            return ("on aftershock's embedded cluster (a real control plane, simulated nodes), "
                    "not a platform's")
        return f"on a real cluster ({', '.join(sorted(providers))})"


def _said(reason: str, limit: int = 300) -> str:
    """A verdict's reason without its "B1: VIOLATED: " head, cut at ``limit``."""
    said = re.sub(r"^[^:\n]+: (PASS|VIOLATED|UNKNOWN|NOT APPLICABLE): ", "", reason)
    return said if len(said) <= limit else said[:limit - 3].rstrip() + "..."


def shown(items: dict[str, TemplateItem], cases: list[Case]) -> list[Shown]:
    """The template's items the run judged a mapped property of, in the template's order."""
    found = []
    for item_id, labels in ITEMS.items():
        if item_id not in items:
            continue
        item = Shown(items[item_id])
        for case in cases:
            if case.property in labels:
                per = item.outcomes.setdefault(case.row.implementation, {})
                per.setdefault(case.property, []).append(case)
        if item.outcomes:
            found.append(item)
    order = list(items)
    return sorted(found, key=lambda s: order.index(s.item.id))


def _quoted(text: str) -> str:
    """A YAML double-quoted scalar (JSON's string syntax is YAML's)."""
    return json.dumps(text, ensure_ascii=False)


def fragment(version: str, items: list[Shown], urls: list[str]) -> str:
    """PRODUCT.yaml's lines for the items shown, under their template categories."""
    lines = [
        f"# The Kubernetes AI Conformance items this run evidences (aftershock "
        f"{aftershock.__version__}),",
        f"# with id, description and level as the program's checklist for Kubernetes {version}",
        "# writes them. Put each item into your PRODUCT.yaml in place of the template's item",
        "# of the same id, and copy evidence/ beside it: its paths are relative to PRODUCT.yaml.",
        "metadata:",
        f"  kubernetesVersion: v{version}",
        "spec:",
    ]
    categories: dict[str, list[Shown]] = {}
    for item in items:
        categories.setdefault(item.item.category, []).append(item)
    for category, members in categories.items():
        lines.append(f"  {category}:")
        for item in members:
            evidence = [*urls, f"{EVIDENCE_DIR}/{item.item.id}.md"]
            lines += [f"    - id: {item.item.id}",
                      f"      description: {_quoted(item.item.description)}",
                      f"      level: {item.item.level}",
                      f"      status: {_quoted(item.status)}",
                      "      evidence:",
                      *[f"        - {_quoted(entry)}" for entry in evidence],
                      f"      notes: {_quoted(item.notes)}"]
    return "\n".join(lines) + "\n"


def evidence_page(version: str, item: Shown, urls: list[str]) -> str:
    """The item's page: what aftershock judged, per implementation, with every verdict."""
    lines = [f"# {item.item.id}: {item.status or 'not shown'}", "",
             f"Kubernetes AI Conformance, Kubernetes {version}, level {item.item.level}:", "",
             f"> {item.item.description}", "",
             f"Judged by aftershock {aftershock.__version__} {item.where}, from the history "
             "it recorded (the API server's objects and audit log), never from what the "
             "implementation under test says of itself."]
    if urls:
        lines += ["", "The published run: " + ", ".join(urls)]
    for implementation, labels in item.outcomes.items():
        version_seen = next(iter(labels.values()))[0].row.kubernetes or "unrecorded"
        lines += ["", f"## {implementation} on Kubernetes {version_seen}", "",
                  "| property | statement | verdict |", "|---|---|---|"]
        for label in sorted(labels, key=_natural):
            known = PROPERTIES.get(label)
            statement = (known.statement if known else "").replace("|", "\\|")
            lines.append(f"| {label} | {statement} | {item.worst(implementation, label)} |")
        for label in sorted(labels, key=_natural):
            for case in labels[label]:
                lines += ["", f"### {label}: {case.scenario} ({case.feature}): {case.outcome}",
                          "", "```", *(case.details or [case.reason]), "```"]
    return "\n".join(lines) + "\n"
