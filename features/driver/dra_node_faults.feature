@concept:device_driver
Feature: D - the driver contract on the node, under node faults
  What a DRA driver and the kubelet keep on a node when the node reboots, when the kubelet
  restarts, and when the driver's plugin is down for a while, judged from what the API server
  recorded and what each node's kubelet checkpointed (read on the node), never from what the
  driver says of itself (and, for what its ResourceSlices list, how many devices its profile
  says a node has). These need real kubelets: on the embedded cluster they are skipped
  (aftershock run features/driver --cluster=kind --profile profiles/thirdparty/dra-example-driver.yaml).

  Background:
    Given a cluster with 3 nodes
    And the implementation under test is running

  Scenario: After a node reboot, a pod whose claim was prepared runs again
    Given a Deployment web of 2 pods that each claim a device
    And within 60 seconds 2 pods of web are Running
    When the node running a pod of web reboots
    Then within 180 seconds every pod that was on the rebooted node runs again (D8)
    And within 60 seconds of its return the node lists its devices in the driver's ResourceSlices again (D12)
    And the driver's ResourceSlices never listed more devices than a node has (D12)
    And no claim listed a device or CDI device id twice on a node (D9)
    And the driver never prepared a device for two claims at once on a node (D5)

  Scenario: After a kubelet restart, a claim prepared again lists no device twice
    Given a pod first that uses the claim shared
    And within 60 seconds pod/first matches:
      """
      status: {phase: Running}
      """
    When the kubelet of the node running pod first restarts
    And 10 seconds pass
    And a pod second that uses the claim shared too
    And within 60 seconds pod/second matches:
      """
      status: {phase: Running}
      """
    Then no claim listed a device or CDI device id twice on a node (D9)
    And within 60 seconds of its return the node lists its devices in the driver's ResourceSlices again (D12)
    And the driver's ResourceSlices never listed more devices than a node has (D12)
    And the driver never prepared a device for two claims at once on a node (D5)

  Scenario: A claim deleted while the driver's plugin was down is unprepared once it is back
    Given a Deployment web of 2 pods that each claim a device
    And within 60 seconds 2 pods of web are Running
    When the driver's plugin on the node running a pod of web stops
    And I force-delete the pod of web on the node the driver's plugin left
    And 10 seconds pass
    And the driver's plugin starts again
    And a pod third that claims a device is placed on the node the driver's plugin left
    Then within 120 seconds of the plugin's return every claim whose pods left is unprepared on its node (D10)
    And within 120 seconds 2 pods of web are Running
    And within 120 seconds pod/third matches:
      """
      status: {phase: Running}
      """
    And within 60 seconds of its return the node lists its devices in the driver's ResourceSlices again (D12)
    And no claim was unprepared on a node while a pod there still used it (D11)
    And the driver never prepared a device for two claims at once on a node (D5)

  Scenario: Deleting a pod the claim was never prepared for leaves it prepared for the pod using it
    Given a pod first that uses the claim shared
    And within 60 seconds pod/first matches:
      """
      status: {phase: Running}
      """
    And a pod second on the node of pod/first that names the claim shared and a claim absent that does not exist
    And 10 seconds pass
    When I delete pod/second
    And 15 seconds pass
    And I delete pod/first
    And within 60 seconds pod/first is gone
    And 5 seconds pass
    Then no claim was unprepared on a node while a pod there still used it (D11)
    And the driver never prepared a device for two claims at once on a node (D5)
