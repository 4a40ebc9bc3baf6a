# Found by aftershock explore on 2026-11-30: profile openkruise, seed 0, workload workloads/openkruise_cloneset.steps.
# Plan: Given the namespace watch of the implementation misses 3 seconds of events from its 1st ADDED event, then relists
# matches_within violated: pod/app did not match within 30s: spec.containers[name=sidecar]: absent, expected {'name': 'sidecar'}
# Replay: aftershock run reports/explore-openkruise/findings/02-unobserved-namespaces-ADDED1-3s.feature --profile profiles/thirdparty/openkruise.yaml
@explore
Feature: explore finding 2: matches_within under a unobserved fault (namespaces-ADDED#1-3s)

  Scenario: openkruise_cloneset, namespaces-ADDED#1-3s
    Given a cluster with 3 nodes
    And the implementation under test is running
    And the namespace watch of the implementation misses 3 seconds of events from its 1st ADDED event, then relists
    And I apply the manifest ../../../workloads/openkruise/cloneset.yaml
    And within 60 seconds cloneset/web matches:
      """
      status: {readyReplicas: 2}
      """
    When I patch cloneset/web:
      """
      spec: {replicas: 3}
      """
    And within 60 seconds cloneset/web matches:
      """
      status: {readyReplicas: 3}
      """
    And I patch cloneset/web:
      """
      spec: {replicas: 1}
      """
    And within 60 seconds cloneset/web matches:
      """
      status: {replicas: 1, readyReplicas: 1}
      """
    And I apply the manifest ../../../workloads/openkruise/sidecarset.yaml
    And 3 seconds pass
    And I apply the manifest ../../../workloads/openkruise/app-pod.yaml
    And within 30 seconds pod/app matches:
      """
      spec:
        containers[name=sidecar]: {name: sidecar}
      """
    And 5 seconds pass
    And the namespace is quiet for 2 seconds
