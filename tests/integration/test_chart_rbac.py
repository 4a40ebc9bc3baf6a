"""rbac_from naming a Helm chart's folder: the chart rendered by the helm built here, with its
default values, grants its ClusterRoles' and Roles' rules; a chart that does not render is one
line naming it."""

from __future__ import annotations

from pathlib import Path

import pytest

from aftershock.errors import UserError
from aftershock.profile import charts
from aftershock.profile.load import load_profile

CLUSTER_ROLE = """apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: {{ .Values.name }}}
rules:
- apiGroups: [{{ .Values.group }}]
  resources: [widgets, widgets/status]
  verbs: [get, list, watch, patch]
"""


def _chart(folder: Path, template: str = CLUSTER_ROLE) -> Path:
    (folder / "templates").mkdir(parents=True)
    (folder / "Chart.yaml").write_text("apiVersion: v2\nname: op\nversion: 0.1.0\n")
    (folder / "values.yaml").write_text("name: op\ngroup: example.com\n")
    (folder / "templates" / "clusterrole.yaml").write_text(template)
    (folder / "templates" / "sa.yaml").write_text(
        "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: op}\n")
    return folder


def test_a_charts_cluster_role_is_what_a_profile_is_granted(tmp_path):
    _chart(tmp_path / "chart")
    profile = tmp_path / "p.yaml"
    profile.write_text("name: p\nrbac_from: [chart]\nconcepts: {}\n")
    loaded = load_profile(profile)
    assert loaded.cluster_rules() == ({"apiGroups": ["example.com"],
                                       "resources": ["widgets", "widgets/status"],
                                       "verbs": ["get", "list", "watch", "patch"]},)
    assert ("example.com", "widgets") in loaded.written_kinds()


def test_a_chart_that_does_not_render_is_one_line(tmp_path):
    chart = _chart(tmp_path / "chart", CLUSTER_ROLE.replace("{{ .Values.name }}",
                                                            "{{ required \"a name\" .Values.x }}"))
    with pytest.raises(UserError) as refused:
        charts.rules(chart)
    assert f"rbac_from {chart}: helm template could not render it" in str(refused.value)
    assert "a name" in str(refused.value)


def test_a_chart_whose_subchart_is_not_there_still_grants_its_own_rules(tmp_path):
    """As a published module holds External Secrets' chart: its Chart.yaml names a subchart
    from an OCI registry (off by default), which helm refuses to render without."""
    chart = _chart(tmp_path / "chart")
    (chart / "Chart.yaml").write_text(
        "apiVersion: v2\nname: op\nversion: 0.1.0\ndependencies:\n"
        "- {name: sdk-server, version: v0.3.1, repository: oci://ghcr.io/x/charts, "
        "condition: sdk-server.enabled}\n")
    assert charts.rules(chart) == [{"apiGroups": ["example.com"],
                                    "resources": ["widgets", "widgets/status"],
                                    "verbs": ["get", "list", "watch", "patch"]}]
    assert "sdk-server" in (chart / "Chart.yaml").read_text()


def test_a_chart_that_requires_a_newer_kubernetes_than_helms_default_renders(tmp_path):
    """Kyverno's chart requires Kubernetes 1.25 or later; helm renders for 1.20 unless told:
    the chart is rendered for the Kubernetes aftershock runs."""
    chart = _chart(tmp_path / "chart")
    (chart / "Chart.yaml").write_text(
        "apiVersion: v2\nname: op\nversion: 0.1.0\nkubeVersion: '>=1.25.0-0'\n")
    assert [rule["apiGroups"] for rule in charts.rules(chart)] == [["example.com"]]
