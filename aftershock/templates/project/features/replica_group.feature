@concept:replica_group
Feature: A replica group keeps its size under a stale cache
  Runs against any profile that maps the words "replica group" onto its own resource:
  `aftershock run features/replica_group.feature --profile profiles/kube-replicaset.yaml` (the
  real ReplicaSet controller) or `--profile profiles/sample-controller.yaml` (an operator built
  from its Go module). Without a profile it is skipped, saying so.

  Background:
    Given a cluster with 3 nodes
    And the implementation under test is running

  Scenario Outline: No over-creation under a <delay> s watch delay
    Given the pod watch of the implementation is delayed by <delay> seconds
    And a replica group web with 3 replicas
    And within 30 seconds the replica group web has 3 live pods
    When I scale the replica group web to 5
    And <settle> seconds pass
    Then at no point did the replica group web have more than 5 live pods (R1)
    And within 30 seconds the replica group web has 5 live pods (R5)

    Examples:
      | delay | settle |
      | 0     | 3      |
      | 2     | 5      |
