Feature: Faults on the embedded cluster, each reverted when the scenario ends
  Node failure, node deletion, cordon, drain and control-plane restarts, judged on the real
  controllers' reactions.

  Background:
    Given a cluster with 3 nodes

  Scenario: A node whose kubelet stops turns NotReady, then Ready again when it recovers
    When node node-3 fails
    Then within 10 seconds node/node-3 is NotReady
    And within 10 seconds node/node-3 has condition Ready Unknown
    When node node-3 recovers
    Then within 15 seconds node/node-3 is Ready

  Scenario: A node deleted without a drain is gone
    When I delete node node-2 without draining it
    Then within 10 seconds node/node-2 is gone

  Scenario: A cordoned node gets no new pods
    When I cordon node node-1
    And a Deployment web with 3 replicas spread across nodes
    Then within 60 seconds 3 pods of web are Running, none on node/node-1
    When I uncordon node node-1
    And I scale the Deployment web to 6
    Then within 60 seconds 6 pods of web are Running on 3 different nodes

  Scenario: Draining a node with a pod that has no controller is refused
    Given a pod lonely on node node-1
    And within 30 seconds pod/lonely has condition Ready True
    Then draining node node-1 is refused
    And for 2 seconds pod/lonely exists holds

  Scenario: While the controller manager is stopped, nothing replaces a deleted pod
    Given a Deployment web with 2 replicas
    And within 60 seconds 2 pods of web are Running
    When I stop the controller manager
    And I delete a pod of web
    Then for 3 seconds 1 pods of web are live holds
    When I start the controller manager
    Then within 60 seconds 2 pods of web are Running

  Scenario: A restarted scheduler binds new pods
    Given a Deployment web with 2 replicas
    And within 60 seconds 2 pods of web are Running
    When I restart the scheduler
    And I scale the Deployment web to 3
    Then within 60 seconds 3 pods of web are Running

  Scenario: The real ReplicaSet controller does not over-create under a stale pod cache
    Given a Deployment web with 3 replicas
    And within 60 seconds 3 pods of web are Running
    When the pod watch of the controller manager is delayed by 2 seconds
    And I delete a pod of web
    Then within 30 seconds 3 pods of web are Running
    And at no point did web have more than 3 live pods (R1)

  Scenario: Scheduled watch delays on the scheduler start late, overlap, and end by themselves
    When for 3 seconds the pod watch of the scheduler is delayed by 1 seconds
    And after 1 seconds, for 3 seconds the node watch of the controller manager is delayed by 1 seconds
    And a Deployment web with 2 replicas
    Then within 30 seconds 2 pods of web are Running
