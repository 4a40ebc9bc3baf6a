"""Step definitions: the words of the features, mapped onto engine calls. Importing this package
registers every step in ``aftershock.grammar.REGISTRY``, in the order of the list below (a
step's text is matched against the steps in that order)."""

# isort: off
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
    watches,
    reference,
    secrets,
    statefulsets,
    storage,
    workloads,
)
# isort: on
