Feature: Typos in the steps for any resource
  Each is refused before its first step, naming the line and what is served.

  Scenario: a kind no cluster serves
    Given a cluster with 3 nodes
    Then within 10 seconds configmapp/settings is gone

  Scenario: a field the schema does not have
    Given a cluster with 3 nodes
    Then at no point did deployment/web have status.readyReplica > 2

  Scenario: a manifest file that is not there
    Given a cluster with 3 nodes
    And I apply the manifest manifests/absent.yaml

  Scenario: manifests that would make more pods than this machine holds
    Given a cluster with 3 nodes
    And I apply:
      """
      apiVersion: apps/v1
      kind: Deployment
      metadata: {name: huge}
      spec:
        replicas: 1000000
        selector: {matchLabels: {app: huge}}
        template:
          metadata: {labels: {app: huge}}
          spec: {containers: [{name: c, image: registry.k8s.io/pause:3.10}]}
      """

  Scenario: a selector on a key the items of the list do not have
    Given a cluster with 3 nodes
    Then at no point did deployment/web have status.conditions[tpye=Available].status == "False"

  Scenario: a manifest file that is not YAML
    Given a cluster with 3 nodes
    And I apply the manifest manifests/not-yaml.yaml
