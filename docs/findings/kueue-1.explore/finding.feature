# Found by aftershock explore on 2026-11-30: profile kueue, seed 0, workload workloads/kueue_jobs.steps.
# Plan: Given the namespace watch of the implementation misses 3 seconds of events from its 1st ADDED event, then relists
# E1 violated: 1 workloads at the end, the reference had 2
# E2 violated: the implementation made 1 workloads create (reference: 3)
# eventually violated: 2 pods of work are Running did not happen within 30s
# Replay: aftershock run docs/findings/kueue-1.explore/finding.feature --profile profiles/thirdparty/kueue.yaml
@explore
Feature: explore finding 1: E1, E2, eventually under a unobserved fault (namespaces-ADDED#1)

  Scenario: kueue_jobs, namespaces-ADDED#1
    Given a cluster with 3 nodes
    And the implementation under test is running
    And the namespace watch of the implementation misses 3 seconds of events from its 1st ADDED event, then relists
    And I apply the manifest ../../../workloads/kueue/queue.yaml
    And within 60 seconds localqueue/work has condition Active True
    And I apply the manifest ../../../workloads/kueue/jobs.yaml
    And within 30 seconds 2 pods of work are Running
    And I apply the manifest ../../../workloads/kueue/job-c.yaml
    And 5 seconds pass
    When I delete job/a
    And 8 seconds pass
    And the namespace is quiet for 2 seconds
    Then the objects the implementation owns end as in the reference docs/findings/kueue-1.explore/reference.json (E1)
    And the implementation's creates and deletes are as in the reference: workloads create 3 (E2)
