"""`aftershock init`: the new project depends on aftershock by the version installed here (a
file:// path would tie it to this machine), says in its README where that aftershock came from,
and walks from the example to the user's own operator with files that exist."""

from __future__ import annotations

import re
import tomllib
from importlib import metadata
from pathlib import Path

import yaml

from aftershock.cli import init as project
from aftershock.profile.load import load_profile


def test_the_new_project_depends_on_aftershock_by_version(tmp_path):
    project.init(tmp_path / "mine")
    document = tomllib.loads((tmp_path / "mine" / "pyproject.toml").read_text())
    assert document["project"]["dependencies"] == [f"aftershock=={metadata.version('aftershock')}"]
    assert "file://" not in (tmp_path / "mine" / "pyproject.toml").read_text()
    assert document["tool"]["setuptools"]["packages"] == []  # `pip install -e .` installs none


def test_its_readme_names_where_aftershock_came_from(tmp_path, monkeypatch):
    monkeypatch.setattr(project.metadata, "distributions", lambda name: [])
    project.init(tmp_path / "mine")
    readme = (tmp_path / "mine" / "README.md").read_text()
    assert ".venv/bin/pip install path/to/aftershock-checkout-or-wheel" in readme
    assert "{" not in readme.replace("{project}", "")  # every placeholder filled


def test_every_file_and_command_its_readme_names_is_there(tmp_path):
    project.init(tmp_path / "mine")
    root = tmp_path / "mine"
    readme = (root / "README.md").read_text()
    named = set(re.findall(r"\b((?:features|profiles|steps|clusters)/[\w./-]+\.\w+)", readme))
    assert "profiles/sample-controller.yaml" in named and "features/replica_group.feature" in named
    missing = [path for path in named if path != "profiles/my-operator.yaml"
               and not (root / path).is_file()]
    assert not missing, missing
    for name in ("kube-replicaset.yaml", "sample-controller.yaml"):
        load_profile(str(root / "profiles" / name))  # every shipped profile loads


def test_its_third_party_profile_is_the_one_the_suite_runs():
    """The template's sample-controller profile is profiles/thirdparty/sample-controller.yaml
    (which tests/integration/test_thirdparty.py runs), comments aside."""
    repo = Path(__file__).resolve().parents[2]
    shipped = project.TEMPLATE / "profiles" / "sample-controller.yaml"
    tested = repo / "profiles" / "thirdparty" / "sample-controller.yaml"
    assert yaml.safe_load(shipped.read_text()) == yaml.safe_load(tested.read_text())
    assert (project.TEMPLATE / "profiles" / "manifests" / "foo.yaml").read_text() == \
        (repo / "profiles" / "thirdparty" / "manifests" / "foo.yaml").read_text()
