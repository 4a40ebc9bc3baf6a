"""`aftershock init`: the new project depends on the aftershock installed here, never on the
bare name on a public index (this project does not own it there)."""

from __future__ import annotations

import tomllib

from aftershock import project


def test_the_new_project_depends_on_the_distribution_installed_here(tmp_path):
    project.init(tmp_path / "mine")
    document = tomllib.loads((tmp_path / "mine" / "pyproject.toml").read_text())
    dependencies = document["project"]["dependencies"]
    assert all(" @ " in d for d in dependencies), dependencies
    assert not any(d.replace(" ", "").startswith("aftershock==") for d in dependencies)


def test_with_no_known_place_no_dependency_is_written(tmp_path, monkeypatch):
    monkeypatch.setattr(project.metadata, "distributions", lambda name: [])
    project.init(tmp_path / "mine")
    document = tomllib.loads((tmp_path / "mine" / "pyproject.toml").read_text())
    assert document["project"]["dependencies"] == []
