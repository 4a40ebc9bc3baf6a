Feature: S - stateful storage scale-down
  A storage operator scaled down by decommissioning a member with "remove user data" after a
  drain had left another member Pending; the Pending member landed on the freed node and found
  its data wiped or half-wiped, and clients got server errors (AIStore's Kubernetes operator,
  NVIDIA/ais-k8s PR #61). Runs against any profile with the storage_cluster concept: the
  reference operators (aftershock run features/operator --profile profiles/storage-correct.yaml)
  and AIStore's own on kind (--cluster=kind --profile
  profiles/thirdparty/ais-operator-388c1f8e.yaml). A mode the profile does not have is skipped.

  @concept:storage_cluster @demo
  Scenario Outline: Scaling down after a drain left member 0 Pending (<mode> mode)
    Given a cluster with 3 nodes
    And the implementation under test is running
    And a storage cluster data with 3 members in <mode> mode
    And within 300 seconds the storage cluster data has 3 Ready members
    And I write 30 objects to the storage cluster data
    When I drain the node running member 0 of the storage cluster data
    And within 60 seconds member 0 of the storage cluster data is Pending
    And I scale the storage cluster data to 2
    And within 300 seconds member 0 of the storage cluster data is Ready
    And 6 seconds pass
    Then destructive actions touched only removed members of the storage cluster data (S1)
    And the node-local data of the removed members of the storage cluster data is still there (S2)
    And every object written to the storage cluster data reads back or is cleanly not found (S3)
    And the storage cluster data shrank only after its removed members were done (S5)
    And within 30 seconds the storage cluster data lists its Ready members (S4)

    Examples:
      | mode              |
      | decommission      |
      | safe_decommission |
      | retain            |

  @concept:storage_cluster
  Scenario Outline: Scaling down after member 0's node failed and was taken out of service (<mode> mode)
    Given a cluster with 3 nodes
    And the implementation under test is running
    And a storage cluster data with 3 members in <mode> mode
    And within 300 seconds the storage cluster data has 3 Ready members
    And I write 30 objects to the storage cluster data
    When the node running member 0 of the storage cluster data fails and is taken out of service
    And within 120 seconds member 0 of the storage cluster data is Pending
    And I scale the storage cluster data to 2
    And within 300 seconds member 0 of the storage cluster data is Ready
    And 6 seconds pass
    Then destructive actions touched only removed members of the storage cluster data (S1)
    And the node-local data of the removed members of the storage cluster data is still there (S2)
    And every object written to the storage cluster data reads back or is cleanly not found (S3)
    And the storage cluster data shrank only after its removed members were done (S5)
    And within 30 seconds the storage cluster data lists its Ready members (S4)

    Examples:
      | mode              |
      | decommission      |
      | safe_decommission |
      | retain            |

  @concept:storage_cluster
  Scenario: A retained member's node-local data is still there after the scale-down
    Given a cluster with 3 nodes
    And the implementation under test is running
    And a storage cluster data with 3 members in retain mode
    And within 60 seconds the storage cluster data has 3 Ready members
    And I write 30 objects to the storage cluster data
    When I scale the storage cluster data to 2
    And 6 seconds pass
    Then the node-local data of the removed members of the storage cluster data is still there (S2)
    And every object written to the storage cluster data reads back or is cleanly not found (S3)
    And destructive actions touched only removed members of the storage cluster data (S1)

  @concept:storage_cluster
  Scenario: A cordon without eviction never shrinks an autoscaled cluster
    Given a cluster with 3 nodes
    And the implementation under test is running
    And an autoscaled storage cluster data with 3 members in retain mode
    And within 60 seconds the storage cluster data has 3 Ready members
    When I cordon node node-2
    And 6 seconds pass
    Then at no point did the workload of the storage cluster data shrink (S6)
    And for 3 seconds the storage cluster data has 3 Ready members holds (S6)

  @concept:stateful_set @demo
  Scenario: Kubernetes form: retained claims survive a scale-down after a drain
    Given a cluster with 3 nodes
    And the implementation under test is running
    And a stateful set db with 3 replicas, one per node, whose PVCs are retained when scaled
    And within 60 seconds 3 pods of db are Running
    When I cordon and drain the node running pod db-0
    And I scale the StatefulSet db to 2
    And within 30 seconds pod db-0 is Running elsewhere
    Then the claims of the removed ordinals of db and their volumes are still there (S2)
    And pod db-0 kept its own claim and volume (S3)
