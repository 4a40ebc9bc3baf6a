# grove-3 under review (issue 66): the plan that found it, at Grove's newest commit (fcc3b3bb,
# 2026-08-19, under KAI-scheduler as that commit needs: profiles/thirdparty/grove-fcc3b3bb-kai.yaml),
# with the 5 s termination delay of the finding and with Grove's own default. What grove-3 says
# happened is the implementation deleting the pods of a replica that was whole all along (G4).
#   aftershock run docs/findings/grove-3-review.feature --profile profiles/thirdparty/grove-fcc3b3bb-kai.yaml --repeat 10
@explore @shape:three-small-nodes
Feature: grove-3 under review: a healthy replica recycled on a stale view of its pods

  Scenario: as found, a 5 second termination delay
    Given a cluster with 3 nodes
    And the implementation under test is running
    And the pod watch of the implementation stalls at its 5th MODIFIED event for 10 seconds
    And a gang train of 1 groups of 3 pods with minAvailable 3 and a termination delay of 5 seconds
    And within 60 seconds the gang train has 3 Ready pods
    When 5 seconds pass
    And 10 seconds pass
    And the namespace is quiet for 2 seconds
    Then the implementation deleted no pod of group 0 of the gang train (G4)

  Scenario: Grove's default termination delay
    Given a cluster with 3 nodes
    And the implementation under test is running
    And the pod watch of the implementation stalls at its 5th MODIFIED event for 10 seconds
    And a gang train of 1 groups of 3 pods with minAvailable 3 and the implementation's default termination delay
    And within 60 seconds the gang train has 3 Ready pods
    When 5 seconds pass
    And 10 seconds pass
    And the namespace is quiet for 2 seconds
    Then the implementation deleted no pod of group 0 of the gang train (G4)
