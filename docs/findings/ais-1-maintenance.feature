# ais-1 again, the node retired as ais-k8s's docs/node_replacement.md says (read at 8bb21bf8):
# the targets only on labelled nodes (the Helm chart's default node selector), and before the
# node is drained its target put into maintenance, its rebalance waited for, and the node
# unlabelled. Scenario 1 does so during the scale-down from 3 to 2, as ais-1's did; scenario 2
# is the same without the maintenance step.
# aftershock run docs/findings/ais-1-maintenance.feature --profile profiles/thirdparty/ais-operator-8bb21bf8-target-nodes.yaml --cluster=kind
Feature: ais-1 with the documented maintenance step: a target's node retired as its operator's guide says

  Scenario: member 0's node is retired as documented while the cluster is scaled from 3 to 2
    Given a cluster with 3 nodes
    And every node is labelled nvidia.com/ais-target=data
    And the implementation under test is running
    And a storage cluster data with 3 members in safe_decommission mode
    And within 60 seconds the storage cluster data has 3 Ready members
    And I write 30 objects to the storage cluster data
    When I put member 0 of the storage cluster data into maintenance
    And within 300 seconds member 0 of the storage cluster data is in maintenance with its data moved
    And I scale the storage cluster data to 2
    And I remove the label nvidia.com/ais-target from the node running member 0 of the storage cluster data
    And I drain the node running member 0 of the storage cluster data
    And within 300 seconds member 0 of the storage cluster data is Ready
    And 6 seconds pass
    Then every object written to the storage cluster data reads back or is cleanly not found (S3)

  Scenario: member 0's node is retired without the maintenance step while the cluster is scaled from 3 to 2
    Given a cluster with 3 nodes
    And every node is labelled nvidia.com/ais-target=data
    And the implementation under test is running
    And a storage cluster data with 3 members in safe_decommission mode
    And within 60 seconds the storage cluster data has 3 Ready members
    And I write 30 objects to the storage cluster data
    When I scale the storage cluster data to 2
    And I remove the label nvidia.com/ais-target from the node running member 0 of the storage cluster data
    And I drain the node running member 0 of the storage cluster data
    And within 300 seconds member 0 of the storage cluster data is Ready
    And 6 seconds pass
    Then every object written to the storage cluster data reads back or is cleanly not found (S3)
