"""The toolchain's generated Go module matches the committed one, and versions key the cache."""

import re
from pathlib import Path

import pytest

from aftershock.errors import UserError
from aftershock.go import toolchain

REPO = Path(__file__).resolve().parents[2]
UPSTREAM_SNIPPET = """module k8s.io/kubernetes

go 1.24.0

godebug default=go1.24

replace (
\tk8s.io/api => ./staging/src/k8s.io/api
\tk8s.io/client-go => ./staging/src/k8s.io/client-go
\tk8s.io/kubectl => ./staging/src/k8s.io/kubectl
)
"""


def _block(text: str, keyword: str) -> list[str]:
    match = re.search(rf"^{keyword} \((.*?)^\)", text, re.M | re.S)
    assert match, keyword
    return sorted(line.strip() for line in match.group(1).splitlines() if line.strip())


def test_consumer_module_replaces_each_staging_module_with_its_v0_tag():
    generated = toolchain.consumer_go_mod("1.33.13", UPSTREAM_SNIPPET)
    assert "require k8s.io/kubernetes v1.33.13" in generated
    assert _block(generated, "replace") == [
        "k8s.io/api => k8s.io/api v0.33.13",
        "k8s.io/client-go => k8s.io/client-go v0.33.13",
        "k8s.io/kubectl => k8s.io/kubectl v0.33.13",
    ]
    assert "godebug default=go1.24" in generated
    assert "k8s.io/kubernetes/cmd/kube-apiserver" in _block(generated, "tool")


def test_committed_module_is_what_the_generator_makes():
    committed = (REPO / "aftershock/toolchain/kubernetes/go.mod").read_text()
    version = toolchain.pinned_kubernetes()
    assert version.startswith("1.37.")
    replaces = _block(committed, "replace")
    assert replaces, "the committed module must replace the staging modules"
    _, minor, patch = version.split(".")
    assert all(line.endswith(f"v0.{minor}.{patch}") for line in replaces)
    assert {"k8s.io/api", "k8s.io/apiserver", "k8s.io/client-go", "k8s.io/kms"} <= {
        line.split()[0] for line in replaces}
    assert _block(committed, "tool") == sorted(
        f"k8s.io/kubernetes/cmd/{tool}" for tool in (*toolchain.KUBE_SERVERS, "kubectl"))
    assert (REPO / "aftershock/toolchain/kubernetes/go.sum").stat().st_size > 0


def test_staging_modules_are_read_from_the_tag_go_mod():
    assert toolchain.staging_modules(UPSTREAM_SNIPPET) == [
        "k8s.io/api", "k8s.io/client-go", "k8s.io/kubectl"]


@pytest.mark.parametrize("given", ["1.33.13", "v1.33.13", " 1.33.13 "])
def test_kubernetes_version_flag_is_normalised(given):
    assert toolchain.normalise_kubernetes(given) == "1.33.13"


def test_bad_kubernetes_version_is_a_user_error():
    with pytest.raises(UserError, match=r"must look like 1\.37\.2"):
        toolchain.normalise_kubernetes("1.34")


def test_cache_key_names_every_version(monkeypatch):
    versions = toolchain.Versions("1.34.4", "3.6.16", "0.8.0", "go1.26.8", "linux-amd64")
    assert versions.key == "k8s-v1.34.4_etcd-v3.6.16_kwok-v0.8.0_go1.26.8_linux-amd64"


def test_version_ldflags_set_the_server_version():
    flags = toolchain.kubernetes_ldflags("1.34.4")
    assert "-X 'k8s.io/component-base/version.gitVersion=v1.34.4'" in flags
    assert "-X 'k8s.io/component-base/version.gitMinor=34'" in flags
    assert "-X 'k8s.io/client-go/pkg/version.gitVersion=v1.34.4'" in flags
