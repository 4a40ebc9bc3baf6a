"""rbac_from's chart reading: a subchart the chart's folder lacks is left out of what is
rendered, so a chart published with optional dependencies (fetched from registries unreachable
here) still yields its own RBAC rules."""

from pathlib import Path

import yaml

from aftershock.profile.charts import _without, missing_dependencies


def _chart(root: Path, dependencies: list[dict], held: tuple[str, ...] = ()) -> Path:
    chart = root / "op"
    (chart / "charts").mkdir(parents=True)
    for name in held:
        (chart / "charts" / name).mkdir()
    (chart / "Chart.yaml").write_text(yaml.safe_dump(
        {"apiVersion": "v2", "name": "op", "version": "1.0.0", "dependencies": dependencies}))
    return chart


def test_a_subchart_named_but_not_in_charts_is_missing(tmp_path):
    chart = _chart(tmp_path, [{"name": "bitwarden", "version": "0.3.1", "condition": "b.enabled"},
                              {"name": "held", "version": "1.0.0"},
                              {"name": "archived", "version": "2.0.0"}], held=("held",))
    (chart / "charts" / "archived-2.0.0.tgz").write_bytes(b"")
    assert missing_dependencies(chart) == ["bitwarden"]


def test_a_chart_with_no_dependencies_misses_none(tmp_path):
    chart = tmp_path / "plain"
    chart.mkdir()
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: plain\nversion: 1.0.0\n")
    assert missing_dependencies(chart) == []


def test_the_copy_rendered_names_only_the_subcharts_it_has(tmp_path):
    chart = _chart(tmp_path / "src", [{"name": "bitwarden", "version": "0.3.1"},
                                      {"name": "held", "version": "1.0.0"}], held=("held",))
    (chart / "Chart.lock").write_text("dependencies: []\n")
    copy = _without(chart, ["bitwarden"], tmp_path)
    meta = yaml.safe_load((copy / "Chart.yaml").read_text())
    assert [dep["name"] for dep in meta["dependencies"]] == ["held"]
    assert not (copy / "Chart.lock").exists()
    assert "bitwarden" in (chart / "Chart.yaml").read_text()  # the original is untouched
