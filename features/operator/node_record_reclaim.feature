Feature: N - per-node bookkeeping outlives its node
  A node manager left records of vanished nodes holding slots; its first fix treated slot 0 as
  "no slot" because 0 is falsy. Runs against any profile with the node_records concept
  (aftershock run features/operator --profile profiles/noderecords-correct.yaml).

  @concept:node_records @demo
  Scenario Outline: The record with <which> is reclaimed like any other
    Given a cluster with 3 nodes
    And the implementation under test is running
    And within 30 seconds every node holds a node record
    When I delete the node holding the node record with <which>
    Then within the staleness window that node record is released or reused (<properties>)
    And no node record was reclaimed early (N2)
    And at no point were there more node records than nodes plus 1 (N4)

    Examples:
      | which             | properties |
      | index 0           | N1, N5     |
      | index 1           | N1         |
      | the highest index | N1         |

  @concept:node_records
  Scenario Outline: A joining node gets the slot a vanished node held (<which>)
    Given a cluster with 3 nodes
    And the implementation under test is running
    And within 30 seconds every node holds a node record
    When I delete the node holding the node record with <which>
    And a node node-4 joins the cluster
    Then within 30 seconds node node-4 holds a node record (<properties>)
    And no node record was reclaimed early (N2)

    Examples:
      | which             | properties |
      | index 0           | N3, N5     |
      | the highest index | N3         |

  @concept:node_records
  Scenario: A node that fails but still exists keeps its record
    Given a cluster with 3 nodes
    And the implementation under test is running
    And within 30 seconds every node holds a node record
    When node node-1 fails
    And 12 seconds pass
    Then no node record was reclaimed early (N2)
    And for 3 seconds node node-1 holds a node record holds (N2)

  @concept:stateful_set @demo
  Scenario: Kubernetes form: a deleted node's pods, lease and slices go, ordinal 0 runs elsewhere
    Given a cluster with 3 nodes
    And the implementation under test is running
    And a stateful set web with 2 replicas, one per node
    And every node publishes a ResourceSlice
    And within 60 seconds 2 pods of web are Running
    When I delete the node running pod web-0 without draining it
    Then within 120 seconds nothing bound to the deleted node is left (N1)
    And within 60 seconds pod web-0 is Running elsewhere (N3)
