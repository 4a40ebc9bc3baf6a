# Found by reading Kruise's pod webhook for the cause of kueue-2, kyverno-1 and opentelemetry-1 (a Namespace read from a cache that has not seen it yet), on 2026-11-30; not by explore.
# A pod made while Kruise's cache has not seen its namespace gets no container from a SidecarSet that selects that namespace (see openkruise-1.md).
# Replay: aftershock run docs/findings/openkruise-1.feature --profile profiles/thirdparty/openkruise.yaml
# The fix tried on v1.9.1: aftershock run docs/findings/openkruise-1.feature --profile profiles/thirdparty/openkruise-1-fixed.yaml
Feature: openkruise-1: a pod made before Kruise's cache has its namespace gets no sidecar

  Scenario: a pod a SidecarSet selects, made while the namespace watch of the implementation is behind
    Given a cluster with 3 nodes
    And the implementation under test is running
    And the namespace watch of the implementation misses 20 seconds of events from its 1st ADDED event, then relists
    And I apply the manifest ../../workloads/openkruise/sidecarset.yaml
    And 5 seconds pass
    When I apply the manifest ../../workloads/openkruise/app-pod.yaml
    Then within 10 seconds pod/app matches:
      """
      spec:
        containers[name=sidecar]: {name: sidecar}
      """
