"""R: replica groups under a stale cache (docs/properties.md). Judged by the generic checks over the
pods of the group, which the profile's replica_group concept selects."""

from __future__ import annotations

from aftershock.properties.base import prop

CONCEPTS = ("replica_group",)

prop("R1", "No over-creation: live pods of the group never exceed max(desired before, desired "
     "after), under watch delays on the implementation's pod watch.",
     ["never_more_than"], CONCEPTS)
prop("R2", "Singletons stay single: never more than 1 live head pod.",
     ["never_more_than"], CONCEPTS)
prop("R3", "No churn without cause: with a constant desired size, the implementation deletes no "
     "pod and creates exactly the missing number (by the audit log).",
     ["created_by", "deleted_by"], CONCEPTS)
prop("R4", "Exact scale-down: desired N to N-k marks exactly k pods for deletion.",
     ["exactly"], CONCEPTS)
prop("R5", "Convergence: once faults stop, live pods equal desired within a bound and stay so.",
     ["eventually", "stays_for"], CONCEPTS)
prop("R6", "Drain: after a node is drained, the group returns to desired without ever exceeding "
     "it and without deleting surviving pods.",
     ["never_more_than", "eventually", "deleted_by"], CONCEPTS, ("destructive_faults",))
