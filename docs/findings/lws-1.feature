# Found by aftershock explore on 2026-11-27: profile lws, seed 0, workload workloads/replica_group.steps.
# Plan: Given the statefulset watch of the implementation misses 3 seconds of events from its 1st ADDED event, then relists
# E1 and E2 violated: the implementation made ten ControllerRevisions of one template (reference: 1), all left in place.
# Replay: aftershock run docs/findings/lws-1.feature --profile profiles/thirdparty/lws.yaml
# The fix tried on v0.7.0: aftershock run docs/findings/lws-1.feature --profile profiles/thirdparty/lws-1-fixed.yaml
@explore
Feature: lws-1: a ControllerRevision made again at each reconcile while the leader StatefulSet is not in the cache

  Scenario: replica_group, statefulsets-ADDED#1-3s
    Given a cluster with 3 nodes
    And the implementation under test is running
    And the statefulset watch of the implementation misses 3 seconds of events from its 1st ADDED event, then relists
    And a replica group web with 3 replicas
    And within 30 seconds the replica group web has 3 live pods
    And the namespace is quiet for 2 seconds
    Then the implementation's creates and deletes are as in the reference: controllerrevisions create 1, services create 1, statefulsets create 3 (E2)
