@shape:ten-small-nodes @concept:gang_scheduler
Feature: B1 with D1, and B7 - a gang whose pods claim devices binds whole, each claim allocated for its node first
  Gangs meet dynamic resource allocation: each pod of a group claims a device (a
  ResourceClaimTemplate of the group's), every node publishes one. A gang scheduler binds the
  group whole (B1) and binds no pod before its claims are allocated for its node (D1: the
  incident of a pod bound before its claim, and kubernetes#140053's gang whose claims were
  allocated elsewhere); a group that waits for room binds whole once room frees (B6: within a
  bound of the devices and nodes it needs standing free), and one that cannot be bound holds no
  device meanwhile (B7: none of its claims stays allocated). The
  devices are published by the scenario (a driver's node side: no kubelet is needed for
  allocation), on the embedded cluster. Runs against any profile with the gang_scheduler concept
  (aftershock run features/scheduler --profile profiles/gangscheduler-correct.yaml).

  Background:
    Given a cluster with 10 nodes
    And the implementation under test is running
    And every node publishes a ResourceSlice

  Scenario: A gang whose pods each claim a device binds whole, each claim allocated first
    Given a pod group g of 3 pods with minMember 3, each pod claiming a device
    When 10 seconds pass
    Then within 30 seconds the pod group g has 3 bound pods
    And the gang scheduler bound the pod group g all or nothing within 5 seconds (B1)
    And every pod was bound only after its claims were allocated for its node (D1)

  Scenario: A claiming gang that waits for devices binds whole once they free
    Given a pod group filler of 7 pods with minMember 7, each pod claiming a device
    And within 30 seconds the pod group filler has 7 bound pods
    And a pod group big of 4 pods with minMember 4, each pod claiming a device
    When 8 seconds pass
    And I delete the pod group filler
    And 15 seconds pass
    Then the gang scheduler bound the pod group big within 10 seconds whenever the nodes had room for it (B6)
    And within 60 seconds the pod group big has 4 bound pods
    And the gang scheduler bound the pod group big all or nothing within 5 seconds (B1)
    And every pod was bound only after its claims were allocated for its node (D1)

  Scenario: A claiming gang that cannot be bound holds no device
    Given a pod group filler of 7 pods with minMember 7, each pod claiming a device
    And within 30 seconds the pod group filler has 7 bound pods
    And a pod group big of 4 pods with minMember 4, each pod claiming a device
    When 15 seconds pass
    Then no claim of an unbound pod of the pod group big stayed allocated for more than 5 seconds while the group was below its minimum (B7)
