Feature: kube-controller-manager cleans up a deleted ResourceClaim on startup
  kubernetes/kubernetes#132334: with the controller manager stopped, an allocated claim
  reserved for one pod is deleted, then the pod; when the controller manager starts, it must
  release the reservation, drop the allocation and the finalizer, and the claim go. From 1.32
  (#127661) to 1.33.5 it never looks at the claim (its informer took every added claim for a
  deleted one): the claim stays for ever. Fixed by #132533 in 1.34.0, and in 1.33.6.

  Written only with the steps for any resource: the claim is allocated and reserved by the
  scenario itself, as the scheduler would (its status, through /status), so no driver runs.

  Scenario: A claim deleted while the controller manager was down is cleaned up when it starts
    Given a cluster with 3 nodes
    And I stop the controller manager
    And I apply:
      """
      apiVersion: resource.k8s.io/v1beta2
      kind: ResourceClaim
      metadata:
        name: gpu
        finalizers: [resource.kubernetes.io/delete-protection]
      spec:
        devices:
          requests:
          - name: gpu
            exactly: {deviceClassName: gpu.example.com}
      ---
      apiVersion: v1
      kind: Pod
      metadata:
        name: trainer
      spec:
        nodeName: node-1
        resourceClaims:
        - {name: gpu, resourceClaimName: gpu}
        containers:
        - name: train
          image: registry.k8s.io/pause:3.10
          resources:
            claims: [{name: gpu}]
      """
    And I patch resourceclaim/gpu:
      """
      status:
        allocation:
          devices:
            results:
            - {request: gpu, driver: gpu.example.com, pool: node-1, device: gpu-0}
        reservedFor:
        - {resource: pods, name: trainer, uid: 9d2c7c55-0000-4000-8000-000000000001}
      """
    When I delete resourceclaim/gpu
    And I delete pod/trainer
    Then within 30 seconds pod/trainer is gone
    And within 5 seconds resourceclaim/gpu matches:
      """
      metadata:
        deletionTimestamp: {}
        finalizers: [resource.kubernetes.io/delete-protection]
      status:
        reservedFor: [{name: trainer}]
      """
    When I start the controller manager
    Then within 30 seconds resourceclaim/gpu is gone
