"""Manifests read as the API server's tools read them, and refused clearly when not YAML."""

from __future__ import annotations

import pytest

from aftershock.errors import UserError
from aftershock.machine import yamlsrc


def test_a_bare_equals_sign_is_a_string_as_in_real_crds(tmp_path):
    crd = tmp_path / "crd.yaml"
    crd.write_text("kind: X\nenum:\n  - =\n  - '!='\n  - =~\n---\n---\nkind: Y\n")
    docs = yamlsrc.manifests(crd)
    assert docs == [{"kind": "X", "enum": ["=", "!=", "=~"]}, {"kind": "Y"}]


def test_a_manifest_that_is_not_yaml_names_file_and_line(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("kind: X\nspec:\n  a: [1, 2\n  b: 3\n")
    with pytest.raises(UserError) as refused:
        yamlsrc.manifests(bad)
    assert f"{bad}:" in str(refused.value) and "not valid YAML" in str(refused.value)


def test_a_missing_manifest_is_a_clear_error(tmp_path):
    with pytest.raises(UserError, match="cannot read manifest"):
        yamlsrc.manifests(tmp_path / "absent.yaml")
