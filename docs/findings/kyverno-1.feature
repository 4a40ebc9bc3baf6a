# Found by aftershock explore on 2026-11-30: profile kyverno, seed 0, workload workloads/kyverno_generate.steps (a plan of kind unobserved: the namespace watch misses 3 s from its 6th ADDED event, then relists): the copy a namespaced Policy's generate rule makes was never made.
# A request made while Kyverno's admission controller has not seen its namespace is judged without that namespace's own Policies (see kyverno-1.md).
# Replay: aftershock run docs/findings/kyverno-1.feature --profile profiles/thirdparty/kyverno.yaml
# The fix tried on v1.19.1: aftershock run docs/findings/kyverno-1.feature --profile profiles/thirdparty/kyverno-1-fixed.yaml
@explore
Feature: kyverno-1: a request made before Kyverno's cache has its namespace skips that namespace's Policies

  Scenario: a generate rule's trigger made while the namespace watch of the implementation is behind
    Given a cluster with 3 nodes
    And the implementation under test is running
    And the namespace watch of the implementation misses 15 seconds of events from its 1st ADDED event, then relists
    And I apply the manifest ../../workloads/kyverno/policy.yaml
    And within 60 seconds policy/sync has condition Ready True
    When I apply the manifest ../../workloads/kyverno/source.yaml
    Then within 30 seconds configmap/source-copy matches:
      """
      data: {mode: a}
      """

  Scenario: a mutate rule's object made while the namespace watch of the implementation is behind
    Given a cluster with 3 nodes
    And the implementation under test is running
    And the namespace watch of the implementation misses 15 seconds of events from its 1st ADDED event, then relists
    And I apply the manifest ../../workloads/kyverno/label-policy.yaml
    And within 60 seconds policy/label has condition Ready True
    When I apply the manifest ../../workloads/kyverno/plain.yaml
    Then within 10 seconds configmap/plain matches:
      """
      metadata:
        labels: {team: a}
      """
