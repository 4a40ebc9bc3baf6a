"""The feature gates and API versions a cluster of a Kubernetes version needs for what its
shape asks, the same on every provider: dynamic resource allocation (a beta behind a gate
before 1.34) and kube-scheduler's built-in gang scheduling (the Workload and PodGroup API,
KEP-4671: alpha from 1.35, its gate and API version moving with each minor)."""

from __future__ import annotations

from dataclasses import dataclass, field

from aftershock.errors import UserError

# The scheduling.k8s.io version that serves Workload (and, from 1.36, PodGroup), and the gates
# that turn gang scheduling on, by minor. 1.37 folds GangScheduling into GenericWorkload (beta,
# still off by default), and has a PodGroup's own claims (KEP-5729, spec.resourceClaims,
# reserved for the group) behind DRAWorkloadResourceClaims, beta and off by default too.
GANG = {
    35: ("v1alpha1", ("GenericWorkload", "GangScheduling")),
    36: ("v1alpha2", ("GenericWorkload", "GangScheduling")),
    37: ("v1beta1", ("GenericWorkload", "DRAWorkloadResourceClaims")),
}
GANG_FIRST = min(GANG)


@dataclass(frozen=True)
class Gates:
    feature_gates: dict[str, bool] = field(default_factory=dict)
    runtime_config: dict[str, str] = field(default_factory=dict)  # the API server's only

    def flags(self, component: str) -> list[str]:
        """Command-line flags for one control-plane component."""
        flags = []
        if self.feature_gates:
            flags.append("--feature-gates=" + ",".join(
                f"{name}={str(on).lower()}" for name, on in sorted(self.feature_gates.items())))
        if component == "kube-apiserver" and self.runtime_config:
            flags.append("--runtime-config=" + ",".join(
                f"{api}={value}" for api, value in sorted(self.runtime_config.items())))
        return flags


def minor(version: str) -> int:
    return int(version.lstrip("v").split(".")[1])


def for_cluster(version: str, gang_scheduling: bool = False, source: str = "") -> Gates:
    """``source``: the shape that asked for gang scheduling, named when the version lacks it."""
    gates, runtime = _dra(minor(version))
    if gang_scheduling:
        api, names = _gang(version, source)
        gates.update(dict.fromkeys(names, True))
        runtime[f"scheduling.k8s.io/{api}"] = "true"
    return Gates(gates, runtime)


def _dra(minor_version: int) -> tuple[dict[str, bool], dict[str, str]]:
    """GA (resource.k8s.io/v1, on by default) from 1.34; before, a beta behind a feature gate,
    served as v1beta1/v1beta2 only when asked for. From 1.34 v1beta2 is served beside v1 (it is
    v1's shape), so one manifest runs on 1.33 and after."""
    if minor_version >= 34:
        return {}, {"resource.k8s.io/v1beta2": "true"}
    return ({"DynamicResourceAllocation": True},
            {"resource.k8s.io/v1beta1": "true", "resource.k8s.io/v1beta2": "true"})


def _gang(version: str, source: str) -> tuple[str, tuple[str, ...]]:
    found = minor(version)
    if found < GANG_FIRST:
        where = f"{source}: " if source else ""
        raise UserError(f"{where}gangScheduling needs Kubernetes 1.{GANG_FIRST} or later (the "
                        f"Workload API, KEP-4671); this cluster is v{version.lstrip('v')}")
    return GANG[min(found, max(GANG))]
