"""Gang scheduler: binds the pods of a PodGroup (aftershock.io/v1, spec.minMember,
spec.staleSeconds, spec.queue) that name it (schedulerName aftershock-gang-scheduler, label
aftershock.io/pod-group=<group>), all or nothing, onto nodes with room for their requests.

The model (a gang scheduler as KAI-scheduler is one): a group is bound only when at least
minMember of its pods, with those already bound, can be placed at once; a node that is cordoned,
tainted against the pod (NoSchedule, NoExecute) or not Ready takes nothing. A group that had
its minimum and has fallen below it (pods bound and not finished, plus Succeeded ones) for
staleSeconds is stale: it is evicted whole (every pod of it deleted), once per fall. A group
whose Queue (aftershock.io/v1, cluster-wide, spec.limits.cpu) has not the CPU left for the pods
it would bind waits; a group whose queue does not exist has no limit. A pod of no group is
bound where it fits; one that does not fit, of a higher priority than the groups on a node that
would take it, has those groups evicted whole, and is bound once their room is free.

faulty  — five bugs of the kind gang schedulers have had: it binds every pod that fits at once,
          so a group can stand bound in part; it places pods on cordoned, tainted and NotReady
          nodes; it counts only running pods towards the minimum (KAI-scheduler #1968: its
          informer dropped Succeeded pods, so a gang completing was evicted as stale); it evicts
          only one pod of a stale group, leaving the rest in their places; and it never looks at
          a queue's limit (and of a group in a preemptor's way it evicts only the pods on that
          node).
correct — as the model says.
holds-room, holds-devices, preempts-in-vain, passes-over — correct but for one bug each
          (decisions.py).
"""
