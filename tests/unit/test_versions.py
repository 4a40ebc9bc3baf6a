"""`aftershock run --kubernetes-version A,B,C`: the list read, and what is refused in one line
before anything starts; the runs' matrices joined with the version as a column."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from aftershock.errors import UserError
from aftershock.report import matrix
from aftershock.runs import versions

REPO = Path(__file__).resolve().parents[2]


def test_a_list_is_normalised_and_each_version_kept_once_in_its_order():
    assert versions.listed("v1.37.2, 1.35.4,1.37.2,1.36.3") == ["1.37.2", "1.35.4", "1.36.3"]
    assert versions.listed("1.37.2") is None and versions.listed(None) is None
    with pytest.raises(UserError, match=r"must look like 1\.37\.2, got 'latest'"):
        versions.listed("1.35.4,latest")
    with pytest.raises(UserError, match="an empty version in the list"):
        versions.listed("1.35.4,,1.37.2")


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "aftershock.cli", "run", *args], cwd=REPO,
                          capture_output=True, text=True, timeout=60)


def test_a_bad_list_or_one_for_an_existing_cluster_is_one_line_and_starts_nothing(tmp_path):
    bad = _run("features/harness/smoke.feature", "--kubernetes-version", "1.35.4,1.x",
               "--run-dir", str(tmp_path / "a"))
    assert bad.returncode == 2 and bad.stderr.strip().splitlines() == [
        "aftershock: error: --kubernetes-version must look like 1.37.2, got '1.x'"]
    existing = _run("features/harness/smoke.feature", "--cluster=existing",
                    "--kubernetes-version", "1.35.4,1.37.2", "--run-dir", str(tmp_path / "b"))
    assert existing.returncode == 2 and "opens as found runs the version it runs" in \
        existing.stderr
    shape = tmp_path / "bad.yaml"
    shape.write_text("nodes:\n  count: 3\n  tempalte: {}\n")
    bad_shape = _run("features/harness/smoke.feature", "--shape", str(shape),
                     "--kubernetes-version", "1.35.4,1.37.2", "--run-dir", str(tmp_path / "c"))
    assert bad_shape.returncode == 2 and bad_shape.stderr.count("\n") == 1, bad_shape.stderr
    assert f"{shape}:3: unknown field 'nodes.tempalte'" in bad_shape.stderr
    assert not any((tmp_path / name).exists() for name in "abc")


def test_a_list_given_to_pytest_itself_says_where_lists_are_taken():
    with pytest.raises(UserError, match="a list of versions is for 'aftershock run'"):
        versions.toolchain.normalise_kubernetes("1.35.4,1.37.2")


def test_each_version_s_run_dir_is_merged_into_one_matrix_naming_the_versions(tmp_path):
    """What run_across does after its children: their run dirs under the run dir, joined."""
    for version, outcome in (("1.35.4", matrix.CAUGHT), ("1.37.2", matrix.MISSED)):
        where = versions.run_dir(tmp_path, version)
        matrix.append(where, matrix.Row("replicagroup-faulty", "f::s", {"R1": outcome},
                                        dir="s", kubernetes=f"v{version}"))
        (where / "s").mkdir()
    codes = versions.run_across(["1.35.4", "1.37.2"], lambda v, where: [
        sys.executable, "-c", f"print('ran {v} into {where.name}')"], tmp_path, print)
    assert codes == [0, 0]
    rows = matrix.load(tmp_path)
    assert [(r.kubernetes, r.dir) for r in rows] == [("v1.35.4", "k8s-v1.35.4/s"),
                                                     ("v1.37.2", "k8s-v1.37.2/s")]
    text = "\n".join(matrix.text(rows))
    assert "v1.35.4" in text and "caught" in text and "missed" in text
    assert json.loads((tmp_path / matrix.FILE).read_text().splitlines()[0])["kubernetes"] == \
        "v1.35.4"
