@api:scheduling.k8s.io/v1beta1
Feature: a scenario that needs the Workload API of Kubernetes 1.37

  Scenario: A Workload is served
    Given a cluster with 1 node
    And I apply:
      """
      apiVersion: scheduling.k8s.io/v1beta1
      kind: Workload
      metadata: {name: train}
      spec:
        podGroupTemplates:
        - name: workers
          schedulingPolicy:
            gang: {minCount: 2}
      """
    Then within 10 seconds workload/train exists
