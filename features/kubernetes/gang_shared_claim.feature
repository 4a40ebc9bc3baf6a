@shape:three-nodes @concept:gang_scheduler
Feature: kube-scheduler binds a gang whose pods share one claim whole, where the claim is
  Two incidents of gangs whose pods share one ResourceClaim, judged by B6 (a gang with room is
  bound), B1 (all or nothing) and D1 (a pod bound only where its claims are allocated).

  kubernetes/kubernetes#137617: such a gang was never scheduled. The first pod's allocation of
  the claim was in flight while it waited at the gang's Permit for the others, and each other
  pod was refused because the claim "is in the process of being allocated", so the gang never
  reached its minimum. Fixed in 1.36.0 (kubernetes#137647: a pod of the same group reuses the
  pending allocation); every 1.35 release has it.

  kubernetes/kubernetes#140087: a pod that reused that pending allocation was not checked
  against the node the allocation is for, and was bound to a node where the claim's device is
  not (or bound alone: a gang in part). In 1.36; fixed in 1.37.0 (kubernetes#140089). Its
  scenario holds each pod to another node: a node-local device cannot serve both, so no pod
  should ever be bound (the first scenario's D1 sees the same bug now and then: a pod bound to
  another node than the claim's).

  The devices are published as a driver would (one per node, no driver running), and the claim
  is one ResourceClaim every pod names; in the third scenario the group's PodGroup names it too
  (KEP-5729, beta in 1.37 behind DRAWorkloadResourceClaims), and the scheduler reserves it for
  the group instead of for each pod. Run each version with the profile of its gang API:
  kube-scheduler-gang-1.35 on 1.35, kube-scheduler-gang-1.36 on 1.36, kube-scheduler-gang on
  1.37.

  Scenario: Two pods of a gang that share one claim are bound together, on the claim's node
    Given a cluster with 3 nodes
    And the implementation under test is running
    And every node publishes a ResourceSlice
    And a pod group g of 2 pods with minMember 2, sharing one claim of a device
    When 20 seconds pass
    Then the gang scheduler bound the pod group g within 10 seconds whenever the nodes had room for it (B6)
    And the gang scheduler bound the pod group g all or nothing within 5 seconds (B1)
    And every pod was bound only after its claims were allocated for its node (D1)

  @concept:gang_scheduler.claims
  Scenario: A gang whose claim is reserved for its pod group is bound together, on the claim's node
    Given a cluster with 3 nodes
    And the implementation under test is running
    And every node publishes a ResourceSlice
    And a pod group g of 2 pods with minMember 2, sharing one claim of a device reserved for the group
    When 20 seconds pass
    Then the gang scheduler bound the pod group g within 10 seconds whenever the nodes had room for it (B6)
    And the gang scheduler bound the pod group g all or nothing within 5 seconds (B1)
    And every pod was bound only after its claims were allocated for its node (D1)

  Scenario: A gang whose pods share one claim but are held to different nodes is not bound
    Given a cluster with 3 nodes
    And the implementation under test is running
    And every node publishes a ResourceSlice
    And a pod group g of 2 pods with minMember 2, sharing one claim of a device, each pod held to a node of its own
    Then from now on pod/g-0 never has spec.nodeName exists
    And from now on pod/g-1 never has spec.nodeName exists
    When 20 seconds pass
    Then the gang scheduler bound the pod group g within 10 seconds whenever the nodes had room for it (B6)
