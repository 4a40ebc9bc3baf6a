# Found by aftershock explore on 2026-11-26: profile grove-cd742f07, seed 0, workload workloads/gang.steps.
# Plan: When I drain node small-1 deleting emptyDir data
# G1 violated: group 0 of gang train had been healthy, then had fewer scheduled pods than minAvailable (but some) for 10s from +6.586s, and its breach condition never turned True
# Replay: aftershock run docs/findings/grove-1.feature --profile profiles/thirdparty/grove-cd742f07.yaml
@explore @shape:three-small-nodes
Feature: explore finding 1: G1 under a node fault (drain-small-1-after-step3)

  Scenario: gang, drain-small-1-after-step3
    Given a cluster with 3 nodes
    And the implementation under test is running
    And the implementation's watches and writes are observed
    And a gang train of 1 groups of 3 pods with minAvailable 3 and a termination delay of 5 seconds
    And within 60 seconds the gang train has 3 Ready pods
    When I drain node small-1 deleting emptyDir data
    And 5 seconds pass
    And 10 seconds pass
    And the namespace is quiet for 2 seconds
    Then every regression of the gang train below minAvailable was breached within 10 seconds (G1)
