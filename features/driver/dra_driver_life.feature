@concept:device_driver
Feature: D - a driver's claims through a kubelet that stops and comes back
  What a DRA driver and the kubelet do with the claims of pods deleted while the node's kubelet
  was stopped (its containers running on, nothing there answering the API server): once it is
  back, each claim prepared there is unprepared once, within the kubelet's retry, and nothing
  is prepared for a pod that was placed there and deleted meanwhile
  (kubernetes/kubernetes#116411); no CDI spec stays for a claim the kubelet no longer holds,
  and no CDI device id is given to two claims. Judged from what the API server recorded and
  each node's kubelet checkpoint and CDI spec files (read on the node). These need real kubelets: on the embedded cluster
  they are skipped (aftershock run features/driver --cluster=kind --profile ...).

  Background:
    Given a cluster with 3 nodes
    And the implementation under test is running

  Scenario: Claims of pods deleted while the kubelet was down are unprepared once it is back
    Given a Deployment web of 2 pods that each claim a device
    And within 60 seconds 2 pods of web are Running
    When the kubelet of the node running a pod of web stops
    And a pod late that claims a device is placed on the node whose kubelet stopped
    And within 30 seconds pod/late has condition PodScheduled True
    And I delete pod/late
    And I force-delete the pod of web on the node whose kubelet stopped
    And 10 seconds pass
    And the kubelet starts again
    And within 120 seconds pod/late is gone
    Then within 120 seconds of its pods' going every claim prepared on a node was unprepared there once, and none was prepared for a pod deleted while its node's kubelet was down (D16)
    And within 120 seconds 2 pods of web are Running
    And no CDI spec stayed on a node for more than 30 seconds for a claim its kubelet did not hold, and no CDI device id was given to two claims (D17)
    And no claim was unprepared on a node while a pod there still used it (D11)
    And the driver never prepared a device for two claims at once on a node (D5)
