# Found by aftershock explore on 2026-11-27: profile ais-operator-8bb21bf8, seed 0, workload workloads/storage_safe_decommission.steps.
# Plan: When I drain node node-1 ignoring DaemonSets and deleting emptyDir data
# E3 violated: at most 46 writes refused within 10s (limit 42)
# S3 violated: of 30 objects read back: 9 objects lost that the mode keeps (e.g. obj-0)
# Replay: aftershock run docs/findings/ais-1.feature --profile profiles/thirdparty/ais-operator-8bb21bf8.yaml
@explore @records:selfsubjectreviews.authentication.k8s.io
Feature: explore finding 1: E3, S3 under a node fault (drain-node-1-after-step5)

  Scenario: storage_safe_decommission, drain-node-1-after-step5
    Given a cluster with 3 nodes
    And the implementation under test is running
    And the implementation's watches and writes are observed
    And a storage cluster data with 3 members in safe_decommission mode
    And within 60 seconds the storage cluster data has 3 Ready members
    And I write 30 objects to the storage cluster data
    When I scale the storage cluster data to 2
    And I drain node node-1 ignoring DaemonSets and deleting emptyDir data
    And 6 seconds pass
    And the namespace is quiet for 2 seconds
    Then every object written to the storage cluster data reads back or is cleanly not found (S3)
    And the implementation had at most 42 writes refused within 10 seconds (E3)
