@shape:one-node-fast-scheduler
Feature: Device taints - a tainted device goes to no claim that does not tolerate it, and a NoExecute taint evicts the pods that do not
  KEP-5055 (device taints and tolerations, GA in Kubernetes 1.37): a driver taints a device in
  its ResourceSlice (an unhealthy GPU). The scheduler allocates a device with a NoSchedule or
  NoExecute taint only to a claim whose request tolerates it (D14); kube-controller-manager
  evicts the pods whose claim holds a device that became NoExecute and does not tolerate it,
  and keeps those whose claim does (D15); an administrator taints devices with a
  DeviceTaintRule, which selects them by driver, pool and name. A toleration with no effect
  matches every effect, as for node taints. Written with the steps for any resource: the devices are published as a
  driver would publish them (one ResourceSlice on node-1, no driver running); the allocations
  and evictions are the cluster's own. A pod may be given its device through an extended
  resource a DeviceClass backs (KEP-5004): its claim, made by the scheduler, is named in the
  pod's status, and a NoExecute taint evicts it as well (kubernetes/kubernetes#141290: before
  1.37.2 the eviction controller read only the claims of a pod's spec, and kept it).

  Background:
    Given a cluster with 1 node

  Scenario: A device tainted NoSchedule goes only to a claim that tolerates it
    Given I apply the manifest manifests/tainted-devices.yaml
    When I apply the manifest manifests/untolerating-claims.yaml
    And 5 seconds pass
    And I apply the manifest manifests/tolerating-claim.yaml
    Then within 30 seconds pod/tolerant matches:
      """
      status: {phase: Running}
      """
    And no claim was allocated a device with a taint it does not tolerate (D14)

  Scenario: A NoExecute taint evicts the pods that do not tolerate it and keeps those that do
    Given I apply the manifest manifests/healthy-devices.yaml
    And I apply the manifest manifests/noexecute-claims.yaml
    And within 30 seconds pod/kept-any matches:
      """
      status: {phase: Running}
      """
    And within 30 seconds pod/kept-noexecute matches:
      """
      status: {phase: Running}
      """
    And within 30 seconds pod/a matches:
      """
      status: {phase: Running}
      """
    Then from now on pod/kept-noexecute never has metadata.deletionTimestamp exists (D15)
    And from now on pod/kept-any never has metadata.deletionTimestamp exists (D15)
    When I apply:
      """
      apiVersion: resource.k8s.io/v1
      kind: ResourceSlice
      metadata:
        name: "{name}"
      spec:
        driver: taint.example.com
        nodeName: node-1
        pool: {name: "{name}", generation: 1, resourceSliceCount: 1}
        devices:
        - name: dev-0
          attributes: {scenario: {string: "{name}"}}
          taints: [{key: example.com/unhealthy, value: "true", effect: NoExecute}]
        - name: dev-1
          attributes: {scenario: {string: "{name}"}}
          taints: [{key: example.com/unhealthy, value: "true", effect: NoExecute}]
        - name: dev-2
          attributes: {scenario: {string: "{name}"}}
          taints: [{key: example.com/unhealthy, value: "true", effect: NoExecute}]
      """
    And 15 seconds pass
    Then within 10 seconds of a NoExecute taint every pod on the tainted device that does not tolerate it was being deleted (D15)

  Scenario: An administrator's DeviceTaintRule evicts the pods on the devices it selects
    Given I apply the manifest manifests/healthy-devices.yaml
    And I apply the manifest manifests/noexecute-claims.yaml
    And within 30 seconds pod/kept-noexecute matches:
      """
      status: {phase: Running}
      """
    And within 30 seconds pod/a matches:
      """
      status: {phase: Running}
      """
    Then from now on pod/kept-noexecute never has metadata.deletionTimestamp exists (D15)
    When I apply:
      """
      apiVersion: resource.k8s.io/v1
      kind: DeviceTaintRule
      metadata:
        name: "{name}"
      spec:
        deviceSelector: {driver: taint.example.com, pool: "{name}"}
        taint: {key: example.com/unhealthy, value: "true", effect: NoExecute}
      """
    And 15 seconds pass
    Then within 10 seconds of a NoExecute taint every pod on the tainted device that does not tolerate it was being deleted (D15)

  Scenario: A pod given its device through an extended resource is evicted by a NoExecute taint
    Given I apply the manifest manifests/extended-resource-devices.yaml
    And within 30 seconds pod/extended matches:
      """
      status:
        phase: Running
        extendedResourceClaimStatus: {}
      """
    When I apply:
      """
      apiVersion: resource.k8s.io/v1
      kind: ResourceSlice
      metadata:
        name: "{name}"
      spec:
        driver: taint.example.com
        nodeName: node-1
        pool: {name: "{name}", generation: 1, resourceSliceCount: 1}
        devices:
        - name: dev-0
          attributes: {scenario: {string: "{name}"}}
          taints: [{key: example.com/unhealthy, value: "true", effect: NoExecute}]
        - name: dev-1
          attributes: {scenario: {string: "{name}"}}
          taints: [{key: example.com/unhealthy, value: "true", effect: NoExecute}]
        - name: dev-2
          attributes: {scenario: {string: "{name}"}}
          taints: [{key: example.com/unhealthy, value: "true", effect: NoExecute}]
      """
    And 15 seconds pass
    Then within 10 seconds of a NoExecute taint every pod on the tainted device that does not tolerate it was being deleted (D15)
