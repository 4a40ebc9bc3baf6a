Feature: Chaos Mesh's PodChaos and NetworkChaos on real kubelets
  Chaos Mesh's controller and daemon, built here from its Go module. A PodChaos kills a pod: the
  recorder sees who deleted it (the audit log) and the Deployment bring it back. A NetworkChaos
  partition cuts what a Deployment's pods send: the kubelet's readiness probes go unanswered,
  every pod turns unready, and Ready again once the experiment ends. Needs a provider that can
  install Chaos Mesh (kind: aftershock run features/harness/chaos_mesh.feature --cluster=kind);
  the embedded cluster skips it.

  Scenario: A PodChaos kills one pod and the Deployment replaces it
    Given a cluster with 3 nodes
    And Chaos Mesh is installed
    And a Deployment web with 3 replicas spread across nodes
    And within 60 seconds 3 pods of web are Running on 3 different nodes
    When Chaos Mesh kills one pod of web
    Then within 60 seconds 3 pods of web are Running
    And Chaos Mesh deleted exactly 1 pods of web
    And no pod of web was deleted by system:serviceaccount:kube-system:replicaset-controller

  Scenario: A NetworkChaos cut makes the pods of a Deployment unready until it ends
    Given a cluster with 3 nodes
    And Chaos Mesh is installed
    And a Deployment web with 3 replicas spread across nodes that answer on port 8080
    And within 60 seconds 3 pods of web are Ready
    When Chaos Mesh cuts the network of web for 20 seconds
    Then within 30 seconds no pod of web is Ready
    And for 8 seconds no pod of web is Ready holds
    And within 60 seconds 3 pods of web are Ready
    And no pod of web was deleted by system:serviceaccount:kube-system:replicaset-controller
