@concept:device_driver
Feature: D - a driver's plugin upgraded in place
  A DRA driver's plugin is upgraded as its DaemonSet rolls out a new revision, node by node:
  with surge (each node's new pod Ready before its old one stops: kubernetes/kubernetes#128964,
  a seamless kubelet plugin upgrade) or by deleting each old pod before its new one is made.
  Pods with claims are started while it rolls out and run before the old ones go, and the
  claims the old plugin pods prepared are unprepared by the new ones; then two start on the
  upgraded plugin. Through it and after, none of the driver's ResourceSlices is
  deleted (and made again), every pod with a claim starts, no plugin socket (a registration,
  or the service it names) stays on a node with nobody serving it (kubernetes/kubernetes#128696), each claim prepared is unprepared
  once, and no CDI spec outlives its claim on a node. Judged from what the API server recorded
  and each node's kubelet checkpoint, CDI spec files and plugin registry (read on the node).
  These need real kubelets: on the embedded cluster they are skipped
  (aftershock run features/driver --cluster=kind --profile ...).

  Background:
    Given a cluster with 3 nodes
    And the implementation under test is running
    And a Deployment web of 2 pods that each claim a device
    And within 60 seconds 2 pods of web are Running

  Scenario: An upgrade with surge keeps the slices and the pods
    When the driver's plugin begins an upgrade with surge
    And I patch deployment/web:
      """
      spec: {replicas: 4}
      """
    And the driver's plugin finishes its upgrade within 180 seconds
    Then within 120 seconds of its placement every pod with a claim ran through the upgrade, and none failed (D19)
    When I patch deployment/web:
      """
      spec: {replicas: 0}
      """
    And within 60 seconds 0 pods of web are live
    And I patch deployment/web:
      """
      spec: {replicas: 2}
      """
    Then within 120 seconds of its pods' going every claim prepared on a node was unprepared there once, and none was prepared for a pod deleted while its node's kubelet was down (D16)
    And no CDI spec stayed on a node for more than 30 seconds for a claim its kubelet did not hold, and no CDI device id was given to two claims (D17)
    And within 120 seconds of its placement every pod with a claim ran through the upgrade, and none failed (D19)
    And no ResourceSlice of the driver was deleted once its plugin began its upgrade (D18)
    And no plugin socket on a node stayed refused for more than 10 seconds once served (D20)

  Scenario: An upgrade that deletes each old pod first keeps the slices and the pods
    When the driver's plugin begins an upgrade by deleting and recreating its pods
    And I patch deployment/web:
      """
      spec: {replicas: 4}
      """
    And the driver's plugin finishes its upgrade within 180 seconds
    Then within 120 seconds of its placement every pod with a claim ran through the upgrade, and none failed (D19)
    When I patch deployment/web:
      """
      spec: {replicas: 0}
      """
    And within 60 seconds 0 pods of web are live
    And I patch deployment/web:
      """
      spec: {replicas: 2}
      """
    Then within 120 seconds of its pods' going every claim prepared on a node was unprepared there once, and none was prepared for a pod deleted while its node's kubelet was down (D16)
    And no CDI spec stayed on a node for more than 30 seconds for a claim its kubelet did not hold, and no CDI device id was given to two claims (D17)
    And within 120 seconds of its placement every pod with a claim ran through the upgrade, and none failed (D19)
    And no ResourceSlice of the driver was deleted once its plugin began its upgrade (D18)
    And no plugin socket on a node stayed refused for more than 10 seconds once served (D20)
