@concept:device_driver
Feature: D - a pod whose claims two drivers serve, one of them failing
  A pod's container uses a device of the driver under test and one of a second driver,
  aftershock's reference kubelet plugin run as nic.aftershock.io, which fails every
  preparation until its DaemonSet rolls out a variant that prepares. The kubelet asks each
  driver in turn and stops at the first that fails: while the second fails, nothing the first
  prepared for the pod should stay prepared (kubernetes/kubernetes#137819: the kubelet
  unprepares nothing when another driver fails, and the first driver's devices stay prepared
  while the pod cannot start); once both prepare, the kubelet prepares the pod's claims again,
  the first driver's included, and the pod runs. Judged from what the API server recorded and
  each node's kubelet checkpoint and CDI spec files (read on the node). These need real
  kubelets: on the embedded cluster they are skipped
  (aftershock run features/driver --cluster=kind --profile ...).

  Background:
    Given a cluster with 3 nodes
    And the implementation under test is running

  Scenario: A second driver fails to prepare a pod's claim, then prepares it
    Given a second driver whose prepare fails
    And a Deployment web of 2 pods that each claim a device of both drivers
    And within 60 seconds 2 pods of web are placed on nodes
    And 90 seconds pass
    When the second driver's prepare succeeds again
    Then no driver kept a claim prepared for more than 30 seconds while the second driver's prepare failed (D21)
    And within 120 seconds of the second driver's return every pod with a claim ran (D22)
    And no CDI spec stayed on a node for more than 30 seconds for a claim its kubelet did not hold, and no CDI device id was given to two claims (D17)
    And the driver never prepared a device for two claims at once on a node (D5)
