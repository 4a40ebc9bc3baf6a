@concept:device_driver
Feature: D - dynamic resource allocation
  A pod must never be bound to a node before its claims are allocated for that node, and a device
  must never serve two claims at once, in the API or on the node. The scheduler's allocation and
  the resource-claim controller are the real ones; the driver publishes a ResourceSlice per node
  and plays each node's prepare/unprepare. Runs against any profile with the device_driver
  concept (aftershock run features/driver --profile profiles/dradriver-correct.yaml).

  Background:
    Given a cluster with 3 nodes
    And the implementation under test is running

  Scenario: Every binding comes after its claims are allocated for its node
    Given a Deployment web of 3 pods that each claim a device
    And within 60 seconds 3 pods of web are Running
    Then every pod was bound only after its claims were allocated for its node (D1)
    And no device was ever allocated to two claims at once (D2)
    And the driver never prepared a device for two claims at once on a node (D5)

  Scenario: A drained node's pod gets its device elsewhere
    Given a Deployment web of 2 pods that each claim a device
    And within 60 seconds 2 pods of web are Running
    When I cordon and drain the node running a pod of web
    And within 60 seconds 2 pods of web are Running, none on the drained node
    Then within 30 seconds every claim of a departed pod is released (D4)
    And no claim was re-allocated or freed while in use (D3)
    And every pod was bound only after its claims were allocated for its node (D1)
    And no device was ever allocated to two claims at once (D2)
    And the driver never prepared a device for two claims at once on a node (D5)

  @demo
  Scenario: A force-deleted pod's device is not prepared twice
    Given a Deployment web of 3 pods that each claim a device
    And within 60 seconds 3 pods of web are Running
    When I force-delete a pod of web
    And within 60 seconds 3 pods of web are Running
    And 3 seconds pass
    Then the driver never prepared a device for two claims at once on a node (D5)
    And no device was ever allocated to two claims at once (D2)
    And every pod was bound only after its claims were allocated for its node (D1)
    And within 30 seconds every claim of a departed pod is released (D4)
    And no claim was re-allocated or freed while in use (D3)

  Scenario: A finished pod's claim is released
    Given a pod job that claims a device and finishes after 5 seconds
    And within 60 seconds pod/job has finished
    Then within 30 seconds every claim of a departed pod is released (D4)
    And the driver never prepared a device for two claims at once on a node (D5)

  Scenario: A deleted node's slices go and nothing is allocated from them
    Given a Deployment web of 2 pods that each claim a device
    And within 60 seconds 2 pods of web are Running
    When I delete the node running a pod of web without draining it
    Then within 120 seconds nothing bound to the deleted node is left (D6)
    And nothing was allocated from the deleted node's devices (D6)
    And no device was ever allocated to two claims at once (D2)

  Scenario: A claim released while the controller manager was down is not reused early
    Given a Deployment web of 3 pods that each claim a device
    And within 60 seconds 3 pods of web are Running
    When I stop the controller manager
    And I delete a pod of web
    And I restart the scheduler
    And 3 seconds pass
    And I start the controller manager
    Then within 90 seconds 3 pods of web are Running (D7)
    And no device was ever allocated to two claims at once (D2, D7)
    And every pod was bound only after its claims were allocated for its node (D1, D7)
    And the driver never prepared a device for two claims at once on a node (D5, D7)
    And within 30 seconds every claim of a departed pod is released (D4, D7)
    And no claim was re-allocated or freed while in use (D3, D7)

  Scenario: A watch delay on the scheduler
    Given the pod watch of the scheduler is delayed by 2 seconds
    And a Deployment web of 3 pods that each claim a device
    Then within 60 seconds 3 pods of web are Running (D7)
    And no device was ever allocated to two claims at once (D2, D7)
    And every pod was bound only after its claims were allocated for its node (D1, D7)
