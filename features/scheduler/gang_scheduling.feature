@shape:ten-small-nodes @concept:gang_scheduler
Feature: B - a gang scheduler binds a pod group whole, onto nodes that take it, and evicts it whole
  A gang scheduler binds a group's pods only when its minimum (minMember) can be bound at once,
  never onto a cordoned, tainted or NotReady node; it evicts a group that fell below its minimum
  whole, and never evicts a group that keeps it, its Succeeded pods counted (KAI-scheduler #1968
  evicted gangs that were completing: its informer dropped their Succeeded pods), and never lets
  the pods of a queue's gangs request more than the queue's limit (a gang whose two running pods
  a scheduler evicts in one sweep too: whichever eviction was written first met the group
  whole). One pod fits
  a node, so capacity is counted in nodes. The last three scenarios do the same under faults: a
  node that fails while a gang waits, the scheduler killed between two bindings of a gang, and
  its pod watch delayed. Runs against
  any profile with the gang_scheduler concept (aftershock run features/scheduler --profile
  profiles/gangscheduler-correct.yaml).

  Background:
    Given a cluster with 10 nodes
    And the implementation under test is running

  @demo
  Scenario: A group that cannot have its minimum waits, and is then bound whole
    Given a pod group filler of 7 pods with minMember 7
    And within 30 seconds the pod group filler has 7 bound pods
    And a pod group big of 4 pods with minMember 4
    When 8 seconds pass
    And I delete the pod group filler
    Then within 30 seconds the pod group big has 4 bound pods
    And the gang scheduler bound the pod group big all or nothing within 5 seconds (B1)
    And the gang scheduler bound the pod group filler all or nothing within 5 seconds (B1)

  Scenario: Nothing is bound onto a cordoned node
    Given I cordon every node
    And 3 seconds pass
    And a pod group g of 2 pods with minMember 2
    When 5 seconds pass
    And I uncordon every node
    Then within 30 seconds the pod group g has 2 bound pods
    And the gang scheduler bound no pod of the pod group g onto a cordoned, tainted or NotReady node (B2)

  Scenario: A group that fell below its minimum is evicted whole
    Given a pod group g of 3 pods with minMember 3
    And within 30 seconds the pod group g has 3 bound pods
    And 3 seconds pass
    When I delete 1 bound pods of the pod group g
    And 12 seconds pass
    Then once the gang scheduler evicted a pod of the pod group g, the whole group was gone within 5 seconds (B3)

  @concept:gang_scheduler.preemption
  Scenario: A group preempted for a pod of higher priority goes whole
    Given a pod group g of 3 pods with minMember 3
    And within 30 seconds the pod group g has 3 bound pods
    When I cordon every node no pod of the pod group g is bound to
    And a pod urgent of a higher priority than the pod group g is created
    And 20 seconds pass
    Then once the gang scheduler evicted a pod of the pod group g, the whole group was gone within 5 seconds (B3)
    And once the gang scheduler evicted a pod of the pod group g for pod urgent, that pod was bound within 10 seconds (B8)
    And within 10 seconds pod/urgent matches:
      """
      status: {phase: Running}
      """

  Scenario: A group whose pods are completing is not evicted as stale
    Given a pod group g of 3 pods with minMember 3, 2 of which succeed 3 seconds after they run
    And within 30 seconds the pod group g has 2 Succeeded pods
    When 12 seconds pass
    Then the gang scheduler evicted no pod of the pod group g while it kept its minimum (B4)

  Scenario: A completing group is not evicted as stale in one sweep either
    Given a pod group g of 4 pods with minMember 4, 2 of which succeed 3 seconds after they run
    And within 30 seconds the pod group g has 2 Succeeded pods
    When 12 seconds pass
    Then the gang scheduler evicted no pod of the pod group g while it kept its minimum (B4)

  @concept:gang_scheduler.queue
  Scenario: A queue's limit holds a gang back until another gang of the queue is gone
    Given a queue team limited to 1000m CPU
    And a pod group a of 2 pods with minMember 2 in the queue team, each pod requesting 400m CPU
    And within 30 seconds the pod group a has 2 bound pods
    And a pod group b of 2 pods with minMember 2 in the queue team, each pod requesting 400m CPU
    When 8 seconds pass
    And I delete the pod group a
    Then within 30 seconds the pod group b has 2 bound pods
    And the pods the gang scheduler bound through the queue team never requested more CPU than its limit (B5)

  Scenario: A node that fails while a gang waits gets none of its pods
    Given a pod group filler of 6 pods with minMember 6
    And within 30 seconds the pod group filler has 6 bound pods
    And a pod group big of 5 pods with minMember 5
    When a node no pod of the pod group filler is bound to fails
    And within 30 seconds the failed node is NotReady
    And I delete the pod group filler
    Then within 30 seconds the pod group big has 5 bound pods
    And the gang scheduler bound the pod group big all or nothing within 5 seconds (B1)
    And the gang scheduler bound no pod of the pod group big onto a cordoned, tainted or NotReady node (B2)

  Scenario: A restart between two bindings leaves the gang bound whole
    Given the implementation is killed and restarted right after its 2nd pod create
    And a pod group g of 4 pods with minMember 4
    Then within 30 seconds the pod group g has 4 bound pods
    And the gang scheduler bound the pod group g all or nothing within 10 seconds (B1)

  Scenario: Under a delayed pod watch a gang waits for room and is then bound whole
    Given the pod watch of the implementation is delayed by 3 seconds
    And a pod group filler of 7 pods with minMember 7
    And within 60 seconds the pod group filler has 7 bound pods
    And a pod group big of 4 pods with minMember 4
    When 12 seconds pass
    And I delete the pod group filler
    Then within 60 seconds the pod group big has 4 bound pods
    And the gang scheduler bound the pod group big all or nothing within 10 seconds (B1)
    And the gang scheduler bound no pod of the pod group big onto a cordoned, tainted or NotReady node (B2)
