@shape:one-node-fast-scheduler
Feature: kube-scheduler never allocates one device to two claims
  kubernetes/kubernetes#136269: when many pods with claims are scheduled very fast,
  kube-scheduler's DRA plugin could see a device as free for a moment while the allocation
  that took it moved from its in-flight map into its cache of claims (the two were read one
  after the other, and the cache delivered events from two goroutines at once), and allocate
  it to a second claim. In 1.35.0 and 1.34.3; fixed in 1.35.1 and 1.34.4 (and 1.36.0).

  Written only with the steps for any resource: the devices are published as a driver would
  publish them (one pool of 256 devices, no driver running), the claims come from a template,
  and the allocations are the real scheduler's, its client as fast as the API server allows
  and its log at verbosity 6 (the shape), which slows the handlers of its claim cache. Each
  burst is held back by a cordon until its pods are made and let go while their claims are
  still being made. Two faults hold the race open: the controller manager's writes of claims
  each wait half a second (its claims are made one by one for seconds after the pods, each an
  event the scheduler's claim cache delivers while it schedules), and the scheduler's own
  writes of claims each wait a second (many allocations in flight at once, each moved into the
  cache as the next pods are scheduled). And 200 pods wait all along for a claim nobody makes:
  each event of a claim the cache delivers asks each of them whether it may now be scheduled,
  so a delivery takes long, and an allocation whose event another goroutine is still
  delivering has already left the in-flight map. On one node every missed device is the first
  free one the next pod gets. Judged from the ResourceClaims' status as the API server
  recorded it. A race: run it repeated (--repeat 10, benchmarks/bench_136269.py) to tell the
  versions apart.

  Scenario: Five bursts of 240 claiming pods never share a device
    Given a cluster with 1 node
    And the resourceclaim writes of the controller manager are delayed by 500 milliseconds
    And the resourceclaim writes of the scheduler are delayed by 1000 milliseconds
    And I apply the manifest manifests/one-node-256-devices.yaml
    And I apply the manifest manifests/waiting-pods.yaml
    And within 120 seconds 200 pods of waiting are live
    When I cordon every node
    And I apply the manifest manifests/claiming-pods.yaml
    And within 120 seconds 240 pods of burst are live
    And I uncordon every node
    Then within 120 seconds 240 pods of burst are Running
    When I patch deployment/burst:
      """
      spec: {replicas: 0}
      """
    Then within 120 seconds 0 pods of burst are live
    When I cordon every node
    And I patch deployment/burst:
      """
      spec: {replicas: 240}
      """
    And within 120 seconds 240 pods of burst are live
    And I uncordon every node
    Then within 120 seconds 240 pods of burst are Running
    When I patch deployment/burst:
      """
      spec: {replicas: 0}
      """
    Then within 120 seconds 0 pods of burst are live
    When I cordon every node
    And I patch deployment/burst:
      """
      spec: {replicas: 240}
      """
    And within 120 seconds 240 pods of burst are live
    And I uncordon every node
    Then within 120 seconds 240 pods of burst are Running
    When I patch deployment/burst:
      """
      spec: {replicas: 0}
      """
    Then within 120 seconds 0 pods of burst are live
    When I cordon every node
    And I patch deployment/burst:
      """
      spec: {replicas: 240}
      """
    And within 120 seconds 240 pods of burst are live
    And I uncordon every node
    Then within 120 seconds 240 pods of burst are Running
    When I patch deployment/burst:
      """
      spec: {replicas: 0}
      """
    Then within 120 seconds 0 pods of burst are live
    When I cordon every node
    And I patch deployment/burst:
      """
      spec: {replicas: 240}
      """
    And within 120 seconds 240 pods of burst are live
    And I uncordon every node
    Then within 120 seconds 240 pods of burst are Running
    And no device was ever allocated to two claims at once (D2)
