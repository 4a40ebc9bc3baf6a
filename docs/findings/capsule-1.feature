# Found by reading Capsule's pod webhook for the cause of kueue-2, kyverno-1, opentelemetry-1 and openkruise-1 (a policy skipped while a cache has not seen a new object yet), on 2026-11-30; not by explore.
# A pod made while Capsule's cache has not seen its Tenant (or the Tenant's status listing the namespace) gets none of the tenant's defaults (see capsule-1.md).
# Replay: aftershock run docs/findings/capsule-1.feature --profile profiles/thirdparty/capsule.yaml
# The fix tried on v0.14.0: aftershock run docs/findings/capsule-1.feature --profile profiles/thirdparty/capsule-1-fixed.yaml
Feature: capsule-1: a pod made before Capsule's cache has its tenant gets none of the tenant's defaults

  Scenario: a pod of a tenant's namespace, made while the tenant watch of the implementation is behind
    Given a cluster with 3 nodes
    And the implementation under test is running
    And the tenant watch of the implementation misses 20 seconds of events from its 1st ADDED event, then relists
    And I apply the manifest ../../workloads/capsule/classes.yaml
    And I apply the manifest ../../workloads/capsule/tenant.yaml
    And I apply the manifest ../../workloads/capsule/namespace.yaml
    And 5 seconds pass
    When I apply the manifest ../../workloads/capsule/app-pod.yaml
    Then within 10 seconds pod/app matches:
      """
      spec: {priorityClassName: "tenant-{namespace}", runtimeClassName: "tenant-{namespace}", priority: 1000}
      """
