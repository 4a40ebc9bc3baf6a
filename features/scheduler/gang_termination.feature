@shape:ten-small-nodes @concept:gang
Feature: G - gang workloads and termination delay
  A gang operator suppressed its MinAvailableBreached signal whenever scheduled < minAvailable,
  which also hid regressions after a node was cordoned: the gang was never terminated and stayed
  stuck. Capacity shaping makes it deterministic: one pod fits a node, and cordoning the free
  nodes leaves a deleted pod's replacement Pending. After a partial regression the scenario waits
  20 seconds, four termination delays: a recycled replica that finds part of its capacity and is
  recycled again (a churn loop) shows within it. The fault comes once the gang has been healthy
  for a while (<held> seconds, 30 by default: what the feature means is a running gang that
  regresses, not one an implementation may still be starting up); the edge, the fault as soon as
  the gang is Ready, is a scenario of its own. Runs against any profile with the gang concept
  (aftershock run features/scheduler --profile profiles/gang-correct.yaml).

  Background:
    Given a cluster with 10 nodes
    And the implementation under test is running

  @demo
  Scenario Outline: A partial regression of a gang healthy for <held> seconds is detected and only its gang replica is recycled
    Given a gang train of 2 groups of 3 pods with minAvailable 3 and a termination delay of 5 seconds
    And within 60 seconds the gang train has 6 Ready pods
    And for <held> seconds the gang train has 6 Ready pods holds
    When I cordon every node no pod of the gang train runs on
    And I take away the nodes of 1 pods of group 0 of the gang train
    Then within 10 seconds group 0 of the gang train is breached (G1)
    When 20 seconds pass
    Then group 0 of the gang train was terminated within 5 seconds once its breach had lasted its termination delay (G2)
    And no replica of the gang train was recycled before its breach had lasted its termination delay (G3)
    And the implementation deleted no pod of group 1 of the gang train (G4)
    And the gang train was terminated at most 1 times (G6)
    And at no point did group 0 of the gang train have more than 3 live pods (G8)
    And every regression of the gang train below minAvailable was breached within 10 seconds (G1)

    Examples:
      | held |
      | 30   |

  Scenario: At the edge, a partial regression as soon as the gang is Ready is detected and only its gang replica is recycled
    Given a gang train of 2 groups of 3 pods with minAvailable 3 and a termination delay of 5 seconds
    And within 60 seconds the gang train has 6 Ready pods
    When I cordon every node no pod of the gang train runs on
    And I take away the nodes of 1 pods of group 0 of the gang train
    Then within 10 seconds group 0 of the gang train is breached (G1)
    When 20 seconds pass
    Then group 0 of the gang train was terminated within 5 seconds once its breach had lasted its termination delay (G2)
    And no replica of the gang train was recycled before its breach had lasted its termination delay (G3)
    And the implementation deleted no pod of group 1 of the gang train (G4)
    And the gang train was terminated at most 1 times (G6)
    And at no point did group 0 of the gang train have more than 3 live pods (G8)
    And every regression of the gang train below minAvailable was breached within 10 seconds (G1)

  Scenario Outline: A regression to zero scheduled pods of a gang healthy for <held> seconds warns once and recycles once
    Given a gang train of 1 groups of 3 pods with minAvailable 2 and a termination delay of 5 seconds
    And within 60 seconds the gang train has 3 Ready pods
    And for <held> seconds the gang train has 3 Ready pods holds
    When I cordon every node no pod of the gang train runs on
    And I take away the nodes of 3 pods of group 0 of the gang train
    Then within 10 seconds group 0 of the gang train is breached (G1)
    When 20 seconds pass
    Then group 0 of the gang train was terminated within 5 seconds once its breach had lasted its termination delay (G2)
    And no replica of the gang train was recycled before its breach had lasted its termination delay (G3)
    And group 0 of the gang train got one warning per drop to zero scheduled pods (G9)
    And the gang train was terminated at most 1 times (G6)

    Examples:
      | held |
      | 30   |

  Scenario: A gang that never became healthy is not terminated
    Given I cordon every node
    And a gang train of 1 groups of 3 pods with minAvailable 3 and a termination delay of 3 seconds
    When 10 seconds pass
    Then the gang train was terminated at most 0 times (G5)

  Scenario: Uncordoning brings the gang back
    Given a gang train of 1 groups of 3 pods with minAvailable 3 and a termination delay of 3 seconds
    And within 60 seconds the gang train has 3 Ready pods
    When I cordon every node no pod of the gang train runs on
    And I take away the nodes of 1 pods of group 0 of the gang train
    And within 10 seconds group 0 of the gang train is breached
    And I uncordon every node
    Then within 30 seconds the gang train has 3 Ready pods (G7)
    And within 30 seconds group 0 of the gang train is not breached (G7)
    And at no point did group 0 of the gang train have more than 3 live pods (G8)
