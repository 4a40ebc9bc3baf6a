@concept:device_driver.seen_in_container
Feature: D13 - a container sees exactly the devices of the claims it uses
  Secure accelerator access (the AI-conformance program's one automated MUST): a container whose
  resources name a claim sees the devices its claim holds, as the driver shows them in it (an
  environment variable, a device node, as the profile's device_driver.seen_in_container says);
  a container beside it that names no claim, and a pod with no claim, see none. Read from inside
  each container (it writes its environment and /dev to its log as it starts), against the
  claims and allocations the API server recorded. On kind only: the embedded cluster runs no
  containers (aftershock run features/driver --cluster=kind --profile profiles/incluster/drakubelet-correct.yaml).

  Background:
    Given a cluster with 3 nodes
    And the implementation under test is running

  Scenario: A container sees its claim's devices, and one beside it and one without a claim see none
    Given a pod gpu whose container user uses a claimed device and whose container bystander does not
    And a pod plain that uses no claim
    And within 60 seconds pod/gpu matches:
      """
      status: {phase: Running}
      """
    And within 60 seconds pod/plain matches:
      """
      status: {phase: Running}
      """
    Then every container of the scenario's pods sees exactly the devices of the claims it uses (D13)

  Scenario: After a kubelet restart, a container prepared again sees exactly its claim's devices
    Given a pod gpu whose container user uses a claimed device and whose container bystander does not
    And within 60 seconds pod/gpu matches:
      """
      status: {phase: Running}
      """
    When the kubelet of the node running pod gpu restarts
    And 10 seconds pass
    And a pod later whose container user uses a claimed device and whose container bystander does not
    And a pod plain that uses no claim
    And within 60 seconds pod/later matches:
      """
      status: {phase: Running}
      """
    And within 60 seconds pod/plain matches:
      """
      status: {phase: Running}
      """
    Then every container of the scenario's pods sees exactly the devices of the claims it uses (D13)

  Scenario: After a node reboot, a container that runs again sees exactly its claim's devices
    Given a pod gpu whose container user uses a claimed device and whose container bystander does not
    And within 60 seconds pod/gpu matches:
      """
      status: {phase: Running}
      """
    When the node running a pod of gpu reboots
    Then within 180 seconds every pod that was on the rebooted node runs again (D8)
    And every container of the scenario's pods sees exactly the devices of the claims it uses (D13)
