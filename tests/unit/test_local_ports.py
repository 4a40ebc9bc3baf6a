"""The embedded cluster picks each component's port free, then the component binds it: another
cluster starting beside it (a second worker, another test) can take it in between, and the
start failed with "bind: address already in use" (a red CI once). It starts again on fresh
ports, a few times; any other failure is not retried."""

from __future__ import annotations

import pytest

from aftershock.errors import ClusterError
from aftershock.providers import local


class _Taken(local.LocalCluster):
    def __init__(self, failures: list[str]):
        self.failures, self.starts = list(failures), 0
        self._rebinds = {}

    def _start(self):
        self.starts += 1
        if self.failures:
            raise ClusterError(self.failures.pop(0))
        return self


IN_USE = ("etcd did not become healthy; last lines of etcd.log:\n  listen tcp "
          "127.0.0.1:33525: bind: address already in use")


def test_a_port_taken_before_it_was_bound_starts_the_cluster_again():
    cluster = _Taken([IN_USE, IN_USE])
    assert cluster.start() is cluster and cluster.starts == 3


def test_it_gives_up_after_a_few_tries_and_never_retries_another_failure():
    with pytest.raises(ClusterError, match="address already in use"):
        _Taken([IN_USE] * (local.PORT_RETRIES + 1)).start()
    other = _Taken(["kube-apiserver exited with 1"])
    with pytest.raises(ClusterError, match="exited with 1"):
        other.start()
    assert other.starts == 1
