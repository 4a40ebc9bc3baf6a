Feature: Harness smoke test on the embedded cluster
  The embedded cluster runs the real scheduler and controllers: a drained node's pods are
  evicted and the Deployment's ReplicaSet brings them back on the other nodes.

  Scenario: A drained node's pods come back on the other nodes
    Given a cluster with 3 nodes
    And a Deployment web with 3 replicas spread across nodes
    Then within 60 seconds 3 pods of web are Running on 3 different nodes
    When I cordon and drain the node running a pod of web
    Then within 60 seconds 3 pods of web are Running, none on the drained node
