"""Reference implementations under test, each with a faulty and a correct variant."""

from __future__ import annotations

import os

from kubernetes import client, config


def load_config(kubeconfig: str | None) -> client.Configuration:
    """The client's configuration: from ``kubeconfig``, else from $KUBECONFIG, else the pod's
    service account (installed in the cluster). The certificates it must hold as files go
    beside the kubeconfig (a directory of the harness's, removed with its cluster), not to
    /tmp, where they stayed for ever whenever this process was killed."""
    configuration = client.Configuration()
    kubeconfig = kubeconfig or os.environ.get("KUBECONFIG")
    if not kubeconfig:
        config.load_incluster_config(client_configuration=configuration)
        return configuration
    config.load_kube_config(config_file=kubeconfig, client_configuration=configuration,
                            persist_config=False,
                            temp_file_path=os.path.dirname(os.path.abspath(kubeconfig)))
    return configuration
