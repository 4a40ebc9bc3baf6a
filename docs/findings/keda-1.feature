# Found by aftershock explore on 2026-11-28: profile keda, seed 0, workload workloads/scaledjob.steps (its 3rd plan: the job watch misses 1 s from its 2nd ADDED event); the fault made longer here.
# A ScaledJob with maxReplicaCount 2, then four queue items: while the implementation's Job watch is stalled, every poll makes 2 more Jobs.
# The ScaledJob comes first, so its scale loop's restart at its second reconcile is over before there is anything to scale (see keda-1.md).
# Replay: aftershock run docs/findings/keda-1.feature --profile profiles/thirdparty/keda.yaml
# The fix tried on v2.21.0: aftershock run docs/findings/keda-1.feature --profile profiles/thirdparty/keda-1-fixed.yaml
@explore
Feature: keda-1: a ScaledJob runs more Jobs than its maxReplicaCount while its Job cache is behind

  Scenario: a ScaledJob while its Job watch stalls for 10 seconds
    Given a cluster with 3 nodes
    And the implementation under test is running
    And the job watch of the implementation stalls at its 1st ADDED event for 10 seconds
    And I apply the manifest ../../workloads/keda/scaledjob.yaml
    And within 60 seconds scaledjob/work has condition Ready True
    And 3 seconds pass
    When I apply the manifest ../../workloads/keda/queue.yaml
    And 14 seconds pass
    Then at no point did work have more than 2 live pods
