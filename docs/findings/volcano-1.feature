# Volcano v1.15.1 with its preempt action on: a gang whose pods claim devices, having waited for
# them, is never bound once they free (B6). Its pods say their claims are "in the process of
# being allocated"; no allocation of them is ever written.
# Reproduce: aftershock run docs/findings/volcano-1.feature --profile profiles/thirdparty/volcano-v1.15.1-preempt.yaml
# The same without the preempt action passes: --profile profiles/thirdparty/volcano-v1.15.1.yaml
@shape:ten-small-nodes @concept:gang_scheduler
Feature: volcano-1: a claiming gang that waited is never bound once its devices free

  Scenario: A claiming gang that waits for devices binds once they free
    Given a cluster with 10 nodes
    And the implementation under test is running
    And every node publishes a ResourceSlice
    And a pod group filler of 7 pods with minMember 7, each pod claiming a device
    And within 30 seconds the pod group filler has 7 bound pods
    And a pod group big of 4 pods with minMember 4, each pod claiming a device
    When 8 seconds pass
    And I delete the pod group filler
    And 15 seconds pass
    Then the gang scheduler bound the pod group big within 10 seconds whenever the nodes had room for it (B6)
