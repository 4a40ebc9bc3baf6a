# ais-1 without explore's placement lottery: the node drained is the one running member 0 (explore drained
# node-1, whichever member ran there). Scenario 1 breaks S3 whenever the scale-down finishes;
# scenario 2, which gives the drained node a target again, passes.
# aftershock run docs/findings/ais-1-member.feature --profile profiles/thirdparty/ais-operator-8bb21bf8.yaml --cluster=kind
Feature: ais-1: a member's objects stay behind on its drained node during a safe decommission

  Scenario: member 0's node is drained while the cluster is scaled from 3 to 2
    Given a cluster with 3 nodes
    And the implementation under test is running
    And a storage cluster data with 3 members in safe_decommission mode
    And within 60 seconds the storage cluster data has 3 Ready members
    And I write 30 objects to the storage cluster data
    When I scale the storage cluster data to 2
    And I drain the node running member 0 of the storage cluster data
    And within 300 seconds member 0 of the storage cluster data is Ready
    And 6 seconds pass
    Then every object written to the storage cluster data reads back or is cleanly not found (S3)

  Scenario: the objects read back once a target runs on the drained node again
    Given a cluster with 3 nodes
    And the implementation under test is running
    And a storage cluster data with 3 members in safe_decommission mode
    And within 60 seconds the storage cluster data has 3 Ready members
    And I write 30 objects to the storage cluster data
    When I scale the storage cluster data to 2
    And I drain the node running member 0 of the storage cluster data
    And within 300 seconds member 0 of the storage cluster data is Ready
    And 6 seconds pass
    And I uncordon every node
    And I scale the storage cluster data to 3
    And within 300 seconds member 2 of the storage cluster data is Ready
    And 30 seconds pass
    Then every object written to the storage cluster data reads back or is cleanly not found (S3)
