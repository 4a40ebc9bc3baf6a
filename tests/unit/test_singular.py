"""Objects are named as kubectl names them (pod/ns/name): a custom resource by its singular."""

import pytest

from aftershock.timeline.entry import singular_of


@pytest.mark.parametrize(("plural", "singular"), [
    ("storageclusters", "storagecluster"), ("storageclasses", "storageclass"),
    ("policies", "policy"), ("globalcontextentries", "globalcontextentry"),
    ("ingresses", "ingress"), ("workloads", "workload")])
def test_a_custom_resource_is_named_by_its_singular(plural, singular):
    assert singular_of(plural) == singular
