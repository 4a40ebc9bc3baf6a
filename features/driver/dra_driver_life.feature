@concept:device_driver
Feature: D - a driver's claims through a kubelet that stops and comes back
  What a DRA driver and the kubelet do with the claims of pods deleted while the node's kubelet
  was stopped (its containers running on, nothing there answering the API server): once it is
  back, each claim prepared there is unprepared once, within the kubelet's retry, and nothing
  is prepared for a pod that was placed there and deleted meanwhile
  (kubernetes/kubernetes#116411); no CDI spec stays for a claim the kubelet no longer holds,
  and no CDI device id is given to two claims. The kubelet also stops or restarts inside a
  plugin call: a proxy of aftershock's, registered with the kubelet as a newer instance of the
  driver's plugin, holds the plugin's answer to a NodePrepareResources or
  NodeUnprepareResources call while the kubelet goes, so that it never hears it; once back it
  must unprepare, or prepare again, what the plugin did meanwhile. Judged from what the API
  server recorded and each node's kubelet checkpoint and CDI spec files (read on the node).
  These need real kubelets: on the embedded cluster they are skipped (aftershock run
  features/driver --cluster=kind --profile ...).

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

  Scenario: A pod deleted after the driver's plugin prepared its claim and before the kubelet heard the answer
    Given the kubelet of node node-1 calls the driver's plugin through a proxy
    When the kubelet stops as the driver's plugin answers its next NodePrepareResources call
    And a pod late that claims a device is placed on the node of the proxy
    And within 60 seconds the driver's plugin answered that call
    And I delete pod/late
    And 10 seconds pass
    And the kubelet starts again
    And within 120 seconds pod/late is gone
    Then within 120 seconds of its pods' going every claim prepared on a node was unprepared there once, and none was prepared for a pod deleted while its node's kubelet was down (D16)
    And no CDI spec stayed on a node for more than 30 seconds for a claim its kubelet did not hold, and no CDI device id was given to two claims (D17)

  Scenario: The kubelet restarts as the driver's plugin answers a prepare, and asks again
    Given the kubelet of node node-1 calls the driver's plugin through a proxy
    When the kubelet restarts as the driver's plugin answers its next NodePrepareResources call
    And a pod late that claims a device is placed on the node of the proxy
    And within 60 seconds the driver's plugin answered that call
    And within 120 seconds pod/late matches:
      """
      status: {phase: Running}
      """
    And I delete pod/late
    And within 120 seconds pod/late is gone
    Then no claim listed a device or CDI device id twice on a node (D9)
    And within 120 seconds of its pods' going every claim prepared on a node was unprepared there once, and none was prepared for a pod deleted while its node's kubelet was down (D16)
    And no CDI spec stayed on a node for more than 30 seconds for a claim its kubelet did not hold, and no CDI device id was given to two claims (D17)
    And the driver never prepared a device for two claims at once on a node (D5)

  Scenario: The kubelet restarts as the driver's plugin answers an unprepare, and asks again
    Given the kubelet of node node-1 calls the driver's plugin through a proxy
    When a pod first that claims a device is placed on the node of the proxy
    And within 120 seconds pod/first matches:
      """
      status: {phase: Running}
      """
    And the kubelet restarts as the driver's plugin answers its next NodeUnprepareResources call
    And I delete pod/first
    And within 60 seconds the driver's plugin answered that call
    And within 120 seconds pod/first is gone
    Then within 120 seconds of its pods' going every claim prepared on a node was unprepared there once, and none was prepared for a pod deleted while its node's kubelet was down (D16)
    And no CDI spec stayed on a node for more than 30 seconds for a claim its kubelet did not hold, and no CDI device id was given to two claims (D17)
    And no claim was unprepared on a node while a pod there still used it (D11)
    And the driver never prepared a device for two claims at once on a node (D5)
