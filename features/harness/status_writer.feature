Feature: A state reported once, or written in a loop
  A controller reports a ConfigMap's state. Checked at one moment, as a poll checks it, a state
  written in a loop (ready and busy in turn, 20 times a second) looks the same as one written
  once; judged at every recorded change from a step on, it does not. Runs against the reference
  status writer: --profile profiles/statuswriter-correct.yaml passes both scenarios, and
  --profile profiles/statuswriter-faulty.yaml is VIOLATED on the last step of each.

  Background:
    Given a cluster with 3 nodes
    And the implementation under test is running
    And I apply:
      """
      apiVersion: v1
      kind: ConfigMap
      metadata:
        name: job
        labels: {aftershock.io/status-writer: "yes"}
      """
    And within 10 seconds configmap/job matches:
      """
      data: {state: ready}
      """

  Scenario: A reported state holds
    Then for 2 seconds configmap/job matches:
      """
      data: {state: ready}
      """

  Scenario: A reported state stays quiet
    Then configmap/job changed at most 1 times within 2 seconds
