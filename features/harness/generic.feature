Feature: Steps for any resource
  Apply, patch and delete any object, and judge it over its whole recorded history: what
  Chainsaw and KUTTL check at the moment they poll, judged here at every recorded change.
  Kinds are named as kubectl names them and found by discovery before the first step.

  Scenario: A ConfigMap applied, patched and deleted keeps what it was asked to keep
    Given a cluster with 3 nodes
    And I apply:
      """
      apiVersion: v1
      kind: ConfigMap
      metadata:
        name: settings
        labels: {app: "{name}"}
      data:
        replicas: "3"
        mode: fast
      """
    Then within 10 seconds configmap/settings matches:
      """
      data:
        mode: fast
      """
    When I patch configmap/settings:
      """
      data:
        mode: safe
      """
    Then within 10 seconds configmap/settings matches:
      """
      data: {mode: safe, replicas: "3"}
      """
    And every change of configmap/settings kept data.replicas == "3"
    And at no point did configmap/settings have data.mode == slow
    When I delete configmap/settings
    Then within 10 seconds configmap/settings is gone

  Scenario: A Deployment's status, judged at every change the recorder saw
    Given a cluster with 3 nodes
    And I apply the manifest manifests/web.yaml
    Then within 60 seconds deployment/web matches:
      """
      status:
        readyReplicas: 2
        conditions[type=Available]: {status: "True"}
      """
    And at no point did deployment/web have status.readyReplicas > 2
    And every change of deployment/web kept spec.template.spec.containers[name=web].image == registry.k8s.io/pause:3.10

  @expect-violation:never_had
  Scenario: A value that held between two polls is caught
    Given a cluster with 3 nodes
    And I apply:
      """
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: flag}
      data: {mode: fast}
      """
    When I patch configmap/flag:
      """
      data: {mode: slow}
      """
    And I patch configmap/flag:
      """
      data: {mode: fast}
      """
    Then within 10 seconds configmap/flag matches:
      """
      data: {mode: fast}
      """
    And at no point did configmap/flag have data.mode == slow

  Scenario: A Deployment that has settled keeps its state and stays quiet
    Given a cluster with 3 nodes
    And I apply the manifest manifests/web.yaml
    And within 60 seconds deployment/web matches:
      """
      status: {readyReplicas: 2}
      """
    Then for 3 seconds deployment/web matches:
      """
      status:
        readyReplicas: 2
        conditions[type=Available]: {status: "True"}
      """
    And deployment/web changed at most 0 times within 3 seconds

  # A rolling update paced by minReadySeconds: each new pod counts as available 2 s after it is
  # ready, so the Deployment's status is written again at each step, seconds after the patch,
  # however fast or slow the machine (a first rollout's writes can all land before the window).
  @expect-violation:changed_at_most
  Scenario: An object still being written is caught changing more often than allowed
    Given a cluster with 3 nodes
    And I apply:
      """
      apiVersion: apps/v1
      kind: Deployment
      metadata: {name: paced}
      spec:
        replicas: 3
        minReadySeconds: 2
        strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 1, maxUnavailable: 0}}
        selector: {matchLabels: {app: paced}}
        template:
          metadata: {labels: {app: paced}}
          spec:
            containers: [{name: web, image: registry.k8s.io/pause:3.10}]
      """
    And within 60 seconds deployment/paced matches:
      """
      status: {availableReplicas: 3, updatedReplicas: 3}
      """
    When I patch deployment/paced:
      """
      spec:
        template:
          metadata: {annotations: {revision: "2"}}
      """
    Then deployment/paced changed at most 1 times within 20 seconds

  # The embedded cluster's kwok completes a Job's pod at once, unless the pod carries
  # aftershock.io/keep-running (a Job that runs long: a JobSet's workers); the twin below is the
  # same Job without it, completed.
  Scenario: A Job's pod marked to keep running keeps running
    Given a cluster with 3 nodes
    And I apply:
      """
      apiVersion: batch/v1
      kind: Job
      metadata: {name: long}
      spec:
        backoffLimit: 0
        template:
          metadata: {annotations: {aftershock.io/keep-running: "true"}}
          spec:
            restartPolicy: Never
            containers: [{name: main, image: registry.k8s.io/pause:3.10}]
      """
    And within 30 seconds job/long matches:
      """
      status: {active: 1, ready: 1}
      """
    Then for 5 seconds job/long matches:
      """
      status: {active: 1}
      """
    And at no point did job/long have status.succeeded > 0

  # As kubectl deletes: its dependents in the background (the API's own default for a batch/v1
  # Job orphans its pods, which would keep running).
  Scenario: A Job deleted takes its pod with it
    Given a cluster with 3 nodes
    And I apply:
      """
      apiVersion: batch/v1
      kind: Job
      metadata: {name: long}
      spec:
        backoffLimit: 0
        template:
          metadata:
            labels: {app.kubernetes.io/name: long}
            annotations: {aftershock.io/keep-running: "true"}
          spec:
            restartPolicy: Never
            containers: [{name: main, image: registry.k8s.io/pause:3.10}]
      """
    And within 30 seconds 1 pods of long are Running
    When I delete job/long
    Then within 30 seconds 0 pods of long are Running

  @expect-violation:never_had
  Scenario: A Job's pod not marked to keep running completes
    Given a cluster with 3 nodes
    And I apply:
      """
      apiVersion: batch/v1
      kind: Job
      metadata: {name: short}
      spec:
        backoffLimit: 0
        template:
          spec:
            restartPolicy: Never
            containers: [{name: main, image: registry.k8s.io/pause:3.10}]
      """
    And within 30 seconds job/short matches:
      """
      status: {succeeded: 1}
      """
    Then at no point did job/short have status.succeeded > 0
