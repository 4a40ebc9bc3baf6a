# Found by aftershock explore on 2026-11-27: profile argo-rollouts, seed 0, workload workloads/replica_group.steps.
# Plan: Given the replicaset watch of the implementation stalls at its 8th MODIFIED event for 4 seconds
# E1 violated: replicasets: metadata.annotations.rollout.argoproj.io/desired-replicas is "3" x1, the reference had "5" x1
# R5 violated: replica group web has 5 live pods did not happen within 30s
# eventually violated: replica group web has 5 live pods did not happen within 30s
# Replay: aftershock run docs/findings/argo-1.feature --profile profiles/thirdparty/argo-rollouts.yaml
@explore
Feature: explore finding 2: E1, R5, eventually under a stale fault (replicasets-MODIFIED#8-4s)

  Scenario: replica_group, replicasets-MODIFIED#8-4s
    Given a cluster with 3 nodes
    And the implementation under test is running
    And the replicaset watch of the implementation stalls at its 8th MODIFIED event for 4 seconds
    And a replica group web with 3 replicas
    And within 30 seconds the replica group web has 3 live pods
    When I scale the replica group web to 5
    And within 30 seconds the replica group web has 5 live pods
    And the namespace is quiet for 2 seconds
    Then within 30 seconds the replica group web has 5 live pods (R5)
    And the objects the implementation owns end as in the reference docs/findings/argo-1.reference.json (E1)
