@shape:ten-small-nodes @concept:gang_scheduler
Feature: B6 - a gang scheduler makes progress: a group that has room is bound
  Beside the safety of B1-B5, progress: a pod group waiting for its minimum while the nodes have
  room for the pods it lacks is bound within a bound. A gang that cannot be bound holds no room
  from one that can (scheduler-plugins#713: a pending group's pods, assumed and never bound,
  kept their capacity, and other pods starved), and of two gangs that compete, each needing
  more than half the nodes, one is bound whole and the other once room frees. Nor is a gang
  passed over by single pods made after it: room they take from it still counts as room it
  waited in (volcano#5805: a gang stayed below its minimum while single pods took the capacity
  it freed). One pod fits a node, so room is counted in nodes. Runs against any profile with the gang_scheduler concept (aftershock run
  features/scheduler --profile profiles/gangscheduler-correct.yaml).

  Background:
    Given a cluster with 10 nodes
    And the implementation under test is running

  Scenario: A group that cannot be bound holds no room from one that can
    Given a pod group filler of 7 pods with minMember 7
    And within 30 seconds the pod group filler has 7 bound pods
    And a pod group big of 4 pods with minMember 4
    And a pod group small of 2 pods with minMember 2
    When 15 seconds pass
    Then the gang scheduler bound the pod group small within 10 seconds whenever the nodes had room for it (B6)
    And the gang scheduler bound the pod group big within 10 seconds whenever the nodes had room for it (B6)

  Scenario: Of two groups that each need more than half the nodes, one is bound whole and the other once room frees
    Given a pod group a of 6 pods with minMember 6
    And a pod group b of 6 pods with minMember 6
    When 15 seconds pass
    And I delete the pod group a
    And 15 seconds pass
    Then the gang scheduler bound the pod group a within 10 seconds whenever the nodes had room for it (B6)
    And the gang scheduler bound the pod group b within 10 seconds whenever the nodes had room for it (B6)
    And the gang scheduler bound the pod group a all or nothing within 5 seconds (B1)
    And the gang scheduler bound the pod group b all or nothing within 5 seconds (B1)

  @concept:gang_scheduler.single
  Scenario: A group is not passed over by single pods made after it
    Given a pod group filler of 7 pods with minMember 7
    And within 30 seconds the pod group filler has 7 bound pods
    And a pod group big of 4 pods with minMember 4
    And 2 seconds pass
    When 7 single pods are created
    And 5 seconds pass
    And I delete the pod group filler
    And 15 seconds pass
    Then the gang scheduler bound the pod group big within 10 seconds whenever the nodes had room for it (B6)
    And the gang scheduler bound the pod group big all or nothing within 5 seconds (B1)
