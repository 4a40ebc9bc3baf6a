@shape:hundred-small-nodes @concept:gang
Feature: G at scale - a gang of a hundred pods on a hundred nodes
  The gang family's regression, on a cluster a hundred nodes large: four gang replicas of 25
  pods fill every node, one pod of replica 0 loses its node, and nothing else gives way. Runs
  against any profile with the gang concept (make demo runs gang-correct and gang-faulty).

  Background:
    Given a cluster with 100 nodes
    And the implementation under test is running

  Scenario: A regression in a gang of a hundred pods is detected and only its replica recycled
    Given a gang train of 4 groups of 25 pods with minAvailable 25 and a termination delay of 5 seconds
    And within 120 seconds the gang train has 100 Ready pods
    When I take away the nodes of 1 pods of group 0 of the gang train
    Then within 10 seconds group 0 of the gang train is breached (G1)
    When 20 seconds pass
    Then group 0 of the gang train was terminated within 5 seconds once its breach had lasted its termination delay (G2)
    And no replica of the gang train was recycled before its breach had lasted its termination delay (G3)
    And the implementation deleted no pod of group 1 of the gang train (G4)
    And the implementation deleted no pod of group 2 of the gang train (G4)
    And the implementation deleted no pod of group 3 of the gang train (G4)
    And every regression of the gang train below minAvailable was breached within 10 seconds (G1)
    And the gang train was terminated at most 1 times (G6)
    And at no point did group 0 of the gang train have more than 25 live pods (G8)
