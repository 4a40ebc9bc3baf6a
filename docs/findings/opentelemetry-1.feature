# Found by reading the operator's pod webhook for the cause of kueue-2 and kyverno-1 (a Namespace read from a cache that has not seen it yet), on 2026-11-30; not by explore.
# A pod made while the operator's cache has not seen its namespace is admitted with no sidecar, though it asks for one (see opentelemetry-1.md).
# Replay: aftershock run docs/findings/opentelemetry-1.feature --profile profiles/thirdparty/opentelemetry-operator.yaml
# The fix tried on v0.143.0: aftershock run docs/findings/opentelemetry-1.feature --profile profiles/thirdparty/opentelemetry-1-fixed.yaml
Feature: opentelemetry-1: a pod made before the operator's cache has its namespace gets no sidecar

  Scenario: a pod that asks for the sidecar, made while the namespace watch of the implementation is behind
    Given a cluster with 3 nodes
    And the implementation under test is running
    And the namespace watch of the implementation misses 20 seconds of events from its 1st ADDED event, then relists
    And I apply the manifest ../../workloads/opentelemetry/sidecar-collector.yaml
    And 5 seconds pass
    When I apply the manifest ../../workloads/opentelemetry/app-pod.yaml
    Then within 10 seconds pod/app matches:
      """
      spec:
        initContainers[name=otc-container]: {name: otc-container}
      """
