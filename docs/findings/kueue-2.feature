# Found by aftershock explore on 2026-11-30: profile kueue-pods, seed 0, workload workloads/kueue_pod_group.steps (a plan of kind unobserved: the namespace watch misses 3 s from its 1st ADDED event, then relists): explore counted it an error, the API server refusing the workload's pods ("admission webhook "mpod.kb.io" denied the request: Namespace ... not found").
# A pod made while Kueue's Namespace cache has not seen its namespace is refused by Kueue's pod webhook, though it names no queue (see kueue-2.md).
# Replay: aftershock run docs/findings/kueue-2.feature --profile profiles/thirdparty/kueue-pods.yaml
# The fix tried on v0.17.0: aftershock run docs/findings/kueue-2.feature --profile profiles/thirdparty/kueue-2-fixed.yaml
@explore
Feature: kueue-2: a pod made before Kueue's cache has its namespace is refused by Kueue's pod webhook

  Scenario: a pod with no queue made while the namespace watch of the implementation is 3 seconds behind
    Given a cluster with 3 nodes
    And the implementation under test is running
    And the namespace watch of the implementation misses 3 seconds of events from its 1st ADDED event, then relists
    And I apply the manifest ../../workloads/kueue/queue.yaml
    And within 60 seconds localqueue/work has condition Active True
    When I apply the manifest ../../workloads/kueue/pod-plain.yaml
    Then within 30 seconds 1 pods of plain are Running
