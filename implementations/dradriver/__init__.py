"""DRA driver: a reference Dynamic Resource Allocation driver for the simulated (KWOK) nodes.

It plays both sides a real driver has. At start it picks the DRA API the cluster serves
(resource.k8s.io/v1, else v1beta2) and creates its DeviceClass. Controller side (slices.py): every
Node (optionally only those matching --node-selector) with N > 0 simulated devices (its label
aftershock.io/devices, set from the cluster shape) gets ONE ResourceSlice
`<node>-<driver, dots as dashes>`, owned by the Node (so the garbage collector removes it with the
node), one pool named after the node holding devices dev-0..dev-N-1, labelled
aftershock.io/namespace=<namespace>; a deleted slice of a live node is recreated, a slice of a
vanished node (or with other devices than the node has) is deleted. Node side (node.py, what the
kubelet plugin would do): when a pod is bound and not terminal, each of its ResourceClaims whose
allocation holds devices of this driver on the pod's node (and reserves the pod) is "prepared":
per node, device -> the claim it is prepared for. When the pod terminates or goes, the claim's
devices are "unprepared" once no other pod on the node uses the claim. Every prepare and unprepare
is one JSON line in --log (time, action, node, driver, pool, device, claim, claim_uid, pod).

The real kube-scheduler allocates the claims and the real resource-claim controller makes the
claims of templates; no kubelet ever calls this driver, it watches for itself.

faulty  — a pod that vanishes by force deletion (DELETED without having been seen terminating with
          a grace period: the API server shows a force-deleted pod for one event with a
          deletionTimestamp and deletionGracePeriodSeconds 0) is forgotten: its devices stay
          prepared; and the driver trusts the allocation, so a later claim allocated the same
          device on that node is prepared anyway — one device prepared for two claims (D5).
correct — unprepares on every termination and deletion, forced or not; a device still prepared
          for another claim is never prepared again: it waits (retried) and logs
          `waiting: device <d> on node/<n> still prepared for claim <uid>`.
"""
