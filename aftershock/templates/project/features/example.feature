Feature: An example: a Deployment keeps its pods
  Runs on an embedded cluster (real kube-apiserver, controller-manager and scheduler; nodes
  simulated by kwok). `aftershock run features` runs it.

  Scenario: A Deployment of 2 never has more than 2 live pods
    Given a ConfigMap settings holding mode=strict
    And a Deployment web with 2 replicas
    Then within 60 seconds 2 pods of web are Running
    And at no point did web have more than 2 live pods
