@concept:device_driver
Feature: D - a driver's device tainted by an administrator
  KEP-5055 (device taints and tolerations, GA in Kubernetes 1.37) on a real driver: an
  administrator takes a device out with a DeviceTaintRule that selects it by the driver, its
  pool and its name (here the device a pod's claim was allocated). With NoExecute,
  kube-controller-manager evicts the pods whose claims do not tolerate it (D15), their kubelet
  has the driver unprepare the claims (D16, D17), and the replacement pods get other devices
  (D14); a pod whose claim tolerates the taint keeps its device (D15). Judged from what the
  API server recorded and each node's kubelet checkpoint and CDI spec files (read on the node).
  These need real kubelets: on the embedded cluster they are skipped (aftershock run
  features/driver --cluster=kind --profile ...).

  Background:
    Given a cluster with 3 nodes
    And the implementation under test is running

  Scenario: The pods on a device an administrator taints NoExecute leave it
    Given a Deployment web of 2 pods that each claim a device
    And within 60 seconds 2 pods of web are Running
    When an administrator taints the device of a pod of web NoExecute
    And 15 seconds pass
    Then within 10 seconds of a NoExecute taint every pod on the tainted device that does not tolerate it was being deleted (D15)
    And within 120 seconds 2 pods of web are Running
    And no claim was allocated a device with a taint it does not tolerate (D14)
    And within 120 seconds of its pods' going every claim prepared on a node was unprepared there once, and none was prepared for a pod deleted while its node's kubelet was down (D16)
    And no CDI spec stayed on a node for more than 30 seconds for a claim its kubelet did not hold, and no CDI device id was given to two claims (D17)
    And the driver never prepared a device for two claims at once on a node (D5)

  Scenario: A pod whose claim tolerates the taint keeps its device
    Given a pod kept that claims a device that tolerates every NoExecute device taint
    And within 60 seconds pod/kept matches:
      """
      status: {phase: Running}
      """
    Then from now on pod/kept never has metadata.deletionTimestamp exists (D15)
    When an administrator taints the device of pod/kept NoExecute
    And 20 seconds pass
    Then no claim was allocated a device with a taint it does not tolerate (D14)
    And the driver never prepared a device for two claims at once on a node (D5)
