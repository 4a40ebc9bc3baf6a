# Found by aftershock explore on 2026-11-26: profile kuberay-v1.0.0, seed 0, workload workloads/replica_group.steps.
# Plan: Given the pod watch of the implementation stalls at its 9th MODIFIED event for 4 seconds
# E2 violated: the implementation made 7 pods create (reference: 6), 1 pods delete (reference: 0)
# R1 violated: 6 live pods of replica group web at once, more than 5
# Replay: aftershock run docs/findings/kuberay-1.feature --profile profiles/thirdparty/kuberay-v1.0.0.yaml
@explore
Feature: explore finding 1: E2, R1 under a stale fault (pods-MODIFIED#9)

  Scenario: replica_group, pods-MODIFIED#9
    Given a cluster with 3 nodes
    And the implementation under test is running
    And the pod watch of the implementation stalls at its 9th MODIFIED event for 4 seconds
    And a replica group web with 3 replicas
    And within 30 seconds the replica group web has 3 live pods
    When I scale the replica group web to 5
    And within 30 seconds the replica group web has 5 live pods
    And the namespace is quiet for 2 seconds
    Then at no point did the replica group web have more than 5 live pods (R1)
    And the implementation's creates and deletes are as in the reference: pods create 6, services create 1 (E2)
