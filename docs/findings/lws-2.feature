# Found by aftershock explore on 2026-11-27: profile lws, seed 0, workload workloads/replica_group_scale.steps,
# as plans pods-MODIFIED#18-4s, pods-MODIFIED#20-4s (a stall) and pods-ADDED#5-3s, pods-MODIFIED#4-3s (a miss).
# E2 violated: 51 to 60 StatefulSet creates where the reference runs made 5: worker StatefulSets made
# again and again for leaders the scale-down had removed. Here in its smallest form: the pod
# watch behind by 4 seconds throughout, and one scale-down.
# Replay: aftershock run docs/findings/lws-2.feature --profile profiles/thirdparty/lws.yaml
# The fix tried on v0.7.0: aftershock run docs/findings/lws-2.feature --profile profiles/thirdparty/lws-2-fixed.yaml
@explore
Feature: lws-2: worker StatefulSets made again for leaders a scale-down removed, while the pod cache is behind

  Scenario: replica_group_scale, the pod watch 4 seconds behind
    Given a cluster with 3 nodes
    And the implementation under test is running
    And the pod watch of the implementation is delayed by 4 seconds
    And a replica group web with 3 replicas
    And within 30 seconds the replica group web has 3 live pods
    And the namespace is quiet for 6 seconds
    When I scale the replica group web to 1
    And within 30 seconds the replica group web has 1 live pods
    And the namespace is quiet for 2 seconds
    Then the implementation's creates and deletes are as in the reference: controllerrevisions create 1, services create 1, statefulsets create 3 (E2)
