"""Step definitions: the words of the features, mapped onto engine calls. Importing this package
registers every step in ``aftershock.scenario.REGISTRY``."""

from steps import cluster, history, implementation, nodes, workloads  # noqa: F401  (registration by import)
