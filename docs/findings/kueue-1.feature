# Found by aftershock explore on 2026-11-30: profile kueue, seed 0, workload workloads/kueue_jobs.steps (a plan of kind unobserved: the namespace watch misses 3 s from its 1st ADDED event, then relists); reproduced 3 of 3, and the Jobs' step made the judgement here.
# Jobs made while Kueue's Namespace cache has not seen their namespace are never given a Workload: they stay suspended (see kueue-1.md).
# Replay: aftershock run docs/findings/kueue-1.feature --profile profiles/thirdparty/kueue.yaml
# The fix tried on v0.17.0: aftershock run docs/findings/kueue-1.feature --profile profiles/thirdparty/kueue-1-fixed.yaml
@explore
Feature: kueue-1: a Job made before Kueue's cache has its namespace stays suspended, never given a Workload

  Scenario: two Jobs queued while the namespace watch of the implementation is 3 seconds behind
    Given a cluster with 3 nodes
    And the implementation under test is running
    And the namespace watch of the implementation misses 3 seconds of events from its 1st ADDED event, then relists
    And I apply the manifest ../../workloads/kueue/queue.yaml
    And within 60 seconds localqueue/work has condition Active True
    When I apply the manifest ../../workloads/kueue/jobs.yaml
    Then within 30 seconds 2 pods of work are Running
