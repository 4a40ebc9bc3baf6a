"""Step definitions: the words of the features, mapped onto engine calls. Importing this package
registers every step in ``aftershock.scenario.REGISTRY``."""

from aftershock.bdd.steps import (  # noqa: F401  (registration by import)
    anchored,
    chaos,
    cluster,
    dra,
    gang,
    history,
    implementation,
    node_records,
    nodes,
    reference,
    secrets,
    statefulsets,
    storage,
    workloads,
)
