"""StorageCluster: N storage members in a StatefulSet, one per node, each with node-local data.

The model (an operator that scales down by decommissioning members with "remove user data"):
a StorageCluster (aftershock.io/v1, spec.size, spec.retention, spec.autoscale) owns a StatefulSet
<name> (Parallel, one member per node by required pod anti-affinity) of pods <name>-<i>. KWOK runs
nothing, so the operator plays each member's node agent: when pod <name>-<i> is Ready on node X it
makes sure <data-root>/X/<namespace>/<name>/member-<i>/ exists (data.py has the layout). The probe
(probe.py) writes objects into the members' dirs, reads them back (ok / not_found / error, the last
being what a client sees as a 500) and lists the dirs.

Scaling down from N to M removes ordinals M..N-1; per spec.retention each removed member's dir is
kept (retain), removed index first so its objects read as a clean not_found (decommission), or
copied into a remaining member first (safe_decommission). Every destructive action is an Event on
the member's pod (Decommissioning, DataWiped, DataMigrated; Retained when kept).

faulty  — the incident: scales the StatefulSet down at once, and ~3 s later (the removed pods gone,
          so a Pending member may have landed on the freed node) wipes the whole cluster dir of
          every node that hosted a removed member, whatever the mode: every member dir there,
          bucket by bucket, index.json left in place, interrupted halfway — reads fail with errors.
          Autoscale counts only schedulable Ready nodes, so a cordon shrinks the cluster.
correct — decommissions each removed member per its mode first (only its own dir), records it in
          status.decommissioned, and only then scales the StatefulSet down (safe_decommission with
          no Ready remaining member steps down one member at a time, into a lower Ready member).
          Autoscale counts Ready nodes, cordoned or not.
"""
