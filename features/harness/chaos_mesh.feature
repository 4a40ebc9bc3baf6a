Feature: Chaos Mesh's PodChaos on real kubelets
  Chaos Mesh's controller, built here from its Go module, kills a pod; the recorder sees who
  deleted it (the audit log) and the Deployment bring it back. Needs a provider that can install
  Chaos Mesh (kind: aftershock run features/harness/chaos_mesh.feature --cluster=kind); the
  embedded cluster skips it.

  Scenario: A PodChaos kills one pod and the Deployment replaces it
    Given a cluster with 3 nodes
    And Chaos Mesh is installed
    And a Deployment web with 3 replicas spread across nodes
    And within 60 seconds 3 pods of web are Running on 3 different nodes
    When Chaos Mesh kills one pod of web
    Then within 60 seconds 3 pods of web are Running
    And Chaos Mesh deleted exactly 1 pods of web
    And no pod of web was deleted by system:serviceaccount:kube-system:replicaset-controller
