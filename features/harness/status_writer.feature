Feature: A state reported once, or written in a loop
  A controller reports a ConfigMap's state. Checked at one moment, as a poll checks it, a state
  written in a loop (ready and busy in turn, 20 times a second) looks the same as one written
  once; judged at every recorded change from a step on, it does not. Runs against the reference
  status writer: --profile profiles/statuswriter-correct.yaml passes every scenario, and
  --profile profiles/statuswriter-faulty.yaml is VIOLATED on the judging step of each.

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

  Scenario: Once ready, never busy again
    Then from now on configmap/job never has data.state == busy
    When 2 seconds pass

  Scenario: Never busy until the job is done
    Then from now on configmap/job never has data.state == busy until configmap/job has data.phase == done
    When 1 seconds pass
    And I patch configmap/job:
      """
      data: {phase: done, state: busy}
      """

  Scenario: Never busy until I say so
    Then from now on configmap/job never has data.state == busy until I patch configmap/job
    When 1 seconds pass
    And I patch configmap/job:
      """
      data: {state: busy}
      """

  Scenario: Never busy while the job is on hold
    Given I apply:
      """
      apiVersion: v1
      kind: ConfigMap
      metadata:
        name: hold
      data: {hold: all}
      """
    When 1 seconds pass
    Then while configmap/hold has data.hold == all, configmap/job never has data.state == busy
