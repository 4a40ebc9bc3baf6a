@concept:replica_group
Feature: R - replica groups under a stale cache
  An operator that computes "desired minus the pods in my informer cache" creates pods its cache
  has not seen yet, then creates more; the cure is expectations, as in the ReplicaSet controller.
  Runs against any profile with the replica_group concept (aftershock run features/operator
  --profile profiles/replicagroup-correct.yaml).

  Background:
    Given a cluster with 3 nodes
    And the implementation under test is running

  @demo
  Scenario Outline: No over-creation under a <delay> s watch delay
    Given the pod watch of the implementation is delayed by <delay> seconds
    And a replica group web with 3 replicas
    And within 30 seconds the replica group web has 3 live pods
    When I scale the replica group web to 5
    And <settle> seconds pass
    Then at no point did the replica group web have more than 5 live pods (R1)
    And within 30 seconds the replica group web has 5 live pods (R5)
    And for 5 seconds the replica group web has 5 live pods holds (R5)

    Examples:
      | delay | settle |
      | 0     | 3      |
      | 2     | 5      |
      | 5     | 8      |

  Scenario Outline: No churn without cause under a <delay> s watch delay
    Given the pod watch of the implementation is delayed by <delay> seconds
    And a replica group web with 3 replicas
    When <settle> seconds pass
    Then the implementation created exactly 3 pods of the replica group web (R3)
    And the implementation deleted no pod of the replica group web (R3)

    Examples:
      | delay | settle |
      | 0     | 3      |
      | 2     | 5      |

  Scenario Outline: The head pod stays single under a <delay> s watch delay
    Given the pod watch of the implementation is delayed by <delay> seconds
    And a replica group web with 2 replicas and a head pod
    And within 30 seconds the replica group web has 2 live pods
    When <settle> seconds pass
    Then at no point did the replica group web have more than 1 live head pod (R2)

    Examples:
      | delay | settle |
      | 0     | 3      |
      | 2     | 5      |

  Scenario Outline: Scaling down by 2 under a <delay> s watch delay marks exactly 2 pods
    Given the pod watch of the implementation is delayed by <delay> seconds
    And a replica group web with 5 replicas whose pods are held by a finalizer
    And within 30 seconds the replica group web has 5 live pods
    When I scale the replica group web to 3
    And <settle> seconds pass
    Then exactly 2 pods of the replica group web were marked for deletion (R4)
    And within 30 seconds the replica group web has 3 live pods (R5)

    Examples:
      | delay | settle |
      | 0     | 3      |
      | 2     | 5      |

  Scenario Outline: A drained node's pods come back without surplus under a <delay> s delay
    Given the pod watch of the implementation is delayed by <delay> seconds
    And a replica group web with 6 replicas
    And within 30 seconds the replica group web has 6 live pods
    When I cordon and drain the node running a pod of the replica group web, deleting emptyDir data
    And <settle> seconds pass
    Then at no point did the replica group web have more than 6 live pods (R6)
    And within 30 seconds the replica group web has 6 live pods (R6)
    And the implementation deleted no pod of the replica group web (R6)

    Examples:
      | delay | settle |
      | 0     | 3      |
      | 2     | 5      |
