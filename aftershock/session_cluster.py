"""Choosing and opening the cluster a test session runs on, from command-line options."""

from __future__ import annotations

from typing import Any

from aftershock.providers.existing import open_existing
from aftershock.shape import default_shape, load_shape


def open_cluster(config: Any):
    option = config.option
    if option.aftershock_cluster == "existing":
        return open_existing(option.aftershock_kubeconfig, option.aftershock_context,
                             option.aftershock_allow_faults_on)
    from aftershock.providers.local import LocalProvider

    shape = load_shape(option.aftershock_shape) if option.aftershock_shape else default_shape()
    return LocalProvider(option.aftershock_kubernetes_version).up(shape)
