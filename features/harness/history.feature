Feature: Judging the whole history, event by event
  Every kind of assertion, each shown once holding and once caught violated
  (@expect-violation: the scenario passes only if that property is violated).

  Background:
    Given a cluster with 3 nodes
    And a Deployment web with 3 replicas
    And within 60 seconds 3 pods of web are Running

  Scenario: A steady Deployment never exceeds its replicas
    When I scale the Deployment web to 2
    Then within 30 seconds 2 pods of web are live
    And at no point did web have more than 3 live pods

  @expect-violation:never_more_than
  Scenario: A brief excess while scaling 3 to 5 to 3 is caught
    When I scale the Deployment web to 5
    And within 30 seconds 5 pods of web are live
    And I scale the Deployment web to 3
    Then within 30 seconds 3 pods of web are live
    And at no point did web have more than 3 live pods

  Scenario: Nobody deletes the pods of a steady Deployment
    When 2 seconds pass
    Then no pod of web was deleted by the replicaset controller
    And exactly 3 pods of web were created by the replicaset controller

  @expect-violation:deleted_by
  Scenario: A scale-down is attributed to the ReplicaSet controller
    When I scale the Deployment web to 2
    Then within 30 seconds 2 pods of web are live
    And no pod of web was deleted by the replicaset controller

  @expect-violation:created_by
  Scenario: A replaced pod is an extra creation by the ReplicaSet controller
    When I delete a pod of web
    Then within 30 seconds 3 pods of web are Running
    And exactly 3 pods of web were created by the replicaset controller

  Scenario: The Deployment exists before its pods
    Then deployment/web was created happened before a pod of web was created
    And a pod of web was created happened no earlier than 0 seconds after deployment/web was created

  @expect-violation:happened_before
  Scenario: Pods before their Deployment is caught
    Then a pod of web was created happened before deployment/web was created

  @expect-violation:no_earlier_than
  Scenario: Pods created within 30 seconds of their Deployment are caught
    Then a pod of web was created happened no earlier than 30 seconds after deployment/web was created

  Scenario: Running pods stay Running and conditions carry their reason
    Then for 3 seconds 3 pods of web are Running holds
    And within 30 seconds deployment/web has condition Available True with reason MinimumReplicasAvailable

  @expect-violation:stays_for
  Scenario: A scale-down during the window breaks "stays Running"
    When I scale the Deployment web to 2
    Then for 5 seconds 3 pods of web are Running holds

  @expect-violation:eventually
  Scenario: A condition reason that never comes is caught
    Then within 3 seconds deployment/web has condition Available True with reason NoSuchReason

  Scenario: A bound on live pods holds at every recorded event
    When I scale the Deployment web to 1
    Then within 30 seconds 1 pods of web are live
    And at most 3 pods of web are live held at every recorded event

  @expect-violation:always
  Scenario: A tighter bound is broken at some recorded event
    When I scale the Deployment web to 1
    Then within 30 seconds 1 pods of web are live
    And at most 2 pods of web are live held at every recorded event

  Scenario: Condition transitions carry honest times
    When I scale the Deployment web to 5
    Then within 30 seconds 5 pods of web are Running
    And every change of condition Available of deployment/web moved its lastTransitionTime

  @expect-violation:honest_transition
  Scenario: A status writer that forgets lastTransitionTime is caught
    Given a pod solo
    And within 30 seconds pod/solo has condition Ready True
    When I set condition Ready of pod solo to False without moving its lastTransitionTime
    Then within 10 seconds pod/solo has condition Ready False
    And every change of condition Ready of pod/solo moved its lastTransitionTime
