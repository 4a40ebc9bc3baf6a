"""The Kubernetes-facing foundation: API access (``api``), the one door every write goes
through (``door``, ``writes``), discovery of the kinds a cluster serves, paths into objects,
comparisons and partial manifests, and the manifests the harness applies."""
