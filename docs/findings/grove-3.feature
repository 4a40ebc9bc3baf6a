# Found by aftershock explore on 2026-11-26: profile grove-d5afd169, seed 0, workload workloads/gang.steps.
# Plan: Given the pod watch of the implementation stalls at its 5th MODIFIED event for 10 seconds
# E2 violated: the implementation made 2 podcliques create (reference: 1), 6 pods create (reference: 3)
# Replay: aftershock run docs/findings/grove-3.feature --profile profiles/thirdparty/grove-d5afd169.yaml
@explore @shape:three-small-nodes
Feature: explore finding 2: E2 under a stale fault (pods-MODIFIED#5-10s)

  Scenario: gang, pods-MODIFIED#5-10s
    Given a cluster with 3 nodes
    And the implementation under test is running
    And the pod watch of the implementation stalls at its 5th MODIFIED event for 10 seconds
    And a gang train of 1 groups of 3 pods with minAvailable 3 and a termination delay of 5 seconds
    And within 60 seconds the gang train has 3 Ready pods
    When 5 seconds pass
    And 10 seconds pass
    And the namespace is quiet for 2 seconds
    Then the implementation's creates and deletes are as in the reference: podcliques create 1, podgangs create 1, pods create 3, rolebindings create 1, roles create 1, secrets create 1..2, serviceaccounts create 1, services create 1 (E2)
