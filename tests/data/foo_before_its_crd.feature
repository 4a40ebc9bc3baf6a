Feature: A custom resource named before its CRD is installed
  Scenario: sample-controller keeps its Foo's Deployment at its replicas
    Given a cluster with 3 nodes
    And the implementation under test is running
    And I apply:
      """
      apiVersion: samplecontroller.k8s.io/v1alpha1
      kind: Foo
      metadata: {name: example}
      spec: {deploymentName: example-dep, replicas: 2}
      """
    Then within 60 seconds deployment/example-dep matches:
      """
      status: {readyReplicas: 2}
      """
    And within 30 seconds foo/example matches:
      """
      status: {availableReplicas: 2}
      """
    And at no point did foo/example have status.availableReplicas > 2
    And every change of deployment/example-dep kept spec.replicas == 2
