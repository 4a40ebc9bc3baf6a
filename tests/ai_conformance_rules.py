"""The Kubernetes AI Conformance program's rules for a PRODUCT.yaml, as its validator
(cncf/k8s-ai-conformance scripts/validate.go) applies them, without its network steps: the
landscape's member list (vendorName) and the reachability of URLs are left to the program; the
form of a URL, and a local evidence file's presence beside PRODUCT.yaml, are checked. One rule
more, from the program's instructions, which its validator does not check: each item's id,
description and level as the template writes them."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

STATUSES = {"Implemented", "Not Implemented", "Partially Implemented", "N/A"}
REQUIRED = ["kubernetesVersion", "platformName", "platformVersion", "vendorName", "websiteUrl",
            "documentationUrl", "productLogoUrl", "description", "contactEmailAddress",
            "k8sConformanceUrl"]
OPTIONAL = ["repoUrl"]
CONFORMANCE_URL = re.compile(
    r"^https://github\.com/cncf/k8s-conformance/tree/(master|main)/v\d+\.\d+/[^/]+/?$")


def _snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()


def _metadata(metadata: dict) -> list[str]:
    problems = []
    for name in REQUIRED + OPTIONAL:
        value = metadata.get(name, metadata.get(_snake(name)))
        if value is None:
            if name in REQUIRED:
                problems.append(f"Missing metadata field: {name} (or {_snake(name)})")
            continue
        if not isinstance(value, str):
            problems.append(f"Metadata field {name} is not a string")
            continue
        if value == "":
            if name in REQUIRED:
                problems.append(f"Metadata field {name} is empty")
            continue
        if value.startswith("[") and value.endswith("]"):
            problems.append(f"Metadata field {name} has placeholder value: {value}")
        elif name == "k8sConformanceUrl" and not CONFORMANCE_URL.match(value):
            problems.append(f"Invalid k8sConformanceUrl format: {value}")
    return problems


def validate(path: Path, template: Path) -> list[str]:
    """The problems the program's rules find in PRODUCT.yaml at ``path``."""
    product = yaml.safe_load(path.read_text())
    schema = yaml.safe_load(template.read_text())
    problems = _metadata(product.get("metadata") or {})
    spec = product.get("spec")
    if spec is None:
        return [*problems, "Missing 'spec' section"]
    for category, items in schema["spec"].items():
        if category not in spec:
            problems.append(f"Missing spec category: {category}")
            continue
        given = {item["id"]: item for item in spec[category] or []}
        for wanted in items:
            item = given.get(wanted["id"])
            if item is None:
                problems.append(f"Missing requirement '{wanted['id']}' in category '{category}'")
                continue
            problems += _item(path.parent, wanted, item)
    return problems


def _item(folder: Path, wanted: dict, item: dict) -> list[str]:
    problems = []
    name, status = wanted["id"], item.get("status") or ""
    evidence = item.get("evidence") or []
    if not isinstance(evidence, list):
        return [f"Error loading product: evidence of '{name}' is not a list"]
    for field in ("description", "level"):  # the instructions', not the validator's
        if item.get(field) != wanted[field]:
            problems.append(f"'{name}': {field} is not the template's")
    if wanted["level"] == "SHOULD" and status == "" and not evidence:
        return problems
    if status not in STATUSES:
        problems.append(f"Invalid status '{status}' for '{name}'")
    if wanted["level"] == "MUST" and status != "Implemented":
        problems.append(f"Requirement '{name}' is MUST level but status is '{status}'. It must "
                        "be 'Implemented'.")
    if status == "N/A" and not item.get("notes"):
        problems.append(f"Notes required for '{name}' when status is N/A")
    for entry in evidence:
        if not entry:
            continue
        if entry.startswith(("http://", "https://")):
            if not re.match(r"^https?://[^\s/]+\S*$", entry):
                problems.append(f"Invalid evidence URL for '{name}': {entry}")
        elif not (folder / entry).is_file():
            problems.append(f"Invalid evidence file for '{name}': {entry} (not found at "
                            f"{folder / entry})")
    return problems


def merged(template: Path, fragment: Path, out: Path) -> Path:
    """The template, its metadata filled and its other items answered, with the fragment's
    items put in place of the template's of the same id: what a vendor submits."""
    document = yaml.safe_load(template.read_text())
    version = document["metadata"]["kubernetesVersion"]
    document["metadata"].update({
        "platformName": "Yoyodyne Platform", "platformVersion": "1.0",
        "vendorName": "Yoyodyne", "websiteUrl": "https://yoyodyne.example",
        "repoUrl": "", "documentationUrl": "https://yoyodyne.example/docs",
        "productLogoUrl": "https://yoyodyne.example/logo.svg", "description": "A platform",
        "contactEmailAddress": "conformance@yoyodyne.example",
        "k8sConformanceUrl": f"https://github.com/cncf/k8s-conformance/tree/master/{version}/yoyo"})
    ours = yaml.safe_load(fragment.read_text())
    for category, items in document["spec"].items():
        given = {item["id"]: item for item in (ours["spec"].get(category) or [])}
        for index, item in enumerate(items):
            if item["id"] in given:
                items[index] = given[item["id"]]
            elif item["level"] == "MUST":
                item.update(status="Implemented", evidence=["https://yoyodyne.example/e"])
    out.mkdir(parents=True, exist_ok=True)
    path = out / "PRODUCT.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False, allow_unicode=True))
    return path
