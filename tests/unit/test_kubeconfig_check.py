"""A kubeconfig given to --cluster=existing is refused at the line where it is wrong."""

from __future__ import annotations

from pathlib import Path

import pytest

from aftershock.errors import UserError
from aftershock.providers.existing import check_kubeconfig

GOOD = """apiVersion: v1
kind: Config
current-context: c
clusters:
- name: k
  cluster:
    server: https://127.0.0.1:6443
contexts:
- name: c
  context:
    cluster: k
    user: u
users:
- name: u
  user:
    token: abc
"""


def _refusal(tmp_path: Path, text: str) -> UserError:
    path = tmp_path / "kubeconfig"
    path.write_text(text)
    with pytest.raises(UserError) as refused:
        check_kubeconfig(path, "c")
    return refused.value


def test_a_well_formed_kubeconfig_is_accepted(tmp_path):
    path = tmp_path / "kubeconfig"
    path.write_text(GOOD)
    check_kubeconfig(path, "c")


@pytest.mark.parametrize(("change", "line", "says"), [
    (("cluster: k\n", "cluster: other\n"), 4, "no cluster named 'other'"),
    (("- name: u\n", "- name: v\n"), 13, "no user named 'u'"),
    (("    server: https://127.0.0.1:6443\n", "    insecure: true\n"), 4, "needs a server"),
    (("  user:\n    token: abc\n", "  user: [1]\n"), 15, "needs a 'user' mapping"),
    (("- name: c\n", "- name: d\n"), 8, "no context named 'c'"),
])
def test_a_broken_entry_is_refused_at_its_line(tmp_path, change, line, says):
    refused = _refusal(tmp_path, GOOD.replace(*change))
    assert refused.line == line and says in str(refused), str(refused)
