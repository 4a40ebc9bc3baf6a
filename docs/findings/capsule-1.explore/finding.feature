# Found by aftershock explore on 2026-11-30: profile capsule, seed 0, workload workloads/capsule_tenant.steps.
# Plan: Given the namespace watch of the implementation misses 8 seconds of events from its 1st MODIFIED event, then relists
# matches_within violated: pod/app did not match within 30s: spec.priorityClassName: absent, expected 'tenant-plan-015-unobserved-namespaces-modified1-92ca3c'; spec.runtimeClassName: absent, expected 'tenant-plan-015-unobserved-namespaces-modified1-92ca3c'; spec.priority: 0, expected 1000
# Replay: aftershock run reports/explore-capsule/findings/01-unobserved-namespaces-MODIFIED1-8s.feature --profile profiles/thirdparty/capsule.yaml
@explore @records:limitranges,capsuleconfigurations.capsule.clastix.io,rulestatuses.capsule.clastix.io,clusterrolebindings.rbac.authorization.k8s.io,clusterroles.rbac.authorization.k8s.io,rolebindings.rbac.authorization.k8s.io
Feature: explore finding 1: matches_within under a unobserved fault (namespaces-MODIFIED#1-8s)

  Scenario: capsule_tenant, namespaces-MODIFIED#1-8s
    Given a cluster with 3 nodes
    And the implementation under test is running
    And the namespace watch of the implementation misses 8 seconds of events from its 1st MODIFIED event, then relists
    And I apply the manifest ../../../workloads/capsule/classes.yaml
    And I apply the manifest ../../../workloads/capsule/tenant.yaml
    And 3 seconds pass
    When I apply the manifest ../../../workloads/capsule/namespace.yaml
    And 5 seconds pass
    And I apply the manifest ../../../workloads/capsule/app-pod.yaml
    And within 30 seconds pod/app matches:
      """
      spec: {priorityClassName: "tenant-{namespace}", runtimeClassName: "tenant-{namespace}", priority: 1000}
      """
    And 5 seconds pass
    And the namespace is quiet for 2 seconds
