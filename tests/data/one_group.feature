@concept:replica_group
Feature: One replica group comes up
  The shortest scenario a replica group profile runs, for the tests of what a profile's set-up
  does to the cluster (tests/integration/test_setup_errors.py).

  Scenario: A replica group comes up
    Given a cluster with 3 nodes
    And the implementation under test is running
    And a replica group web with 2 replicas
    Then within 30 seconds the replica group web has 2 live pods (R5)
