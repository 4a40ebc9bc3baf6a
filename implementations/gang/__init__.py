"""Gang: `groups` gang replicas of `size` pods each, a replica being useful only while at least
`minAvailable` of its pods are scheduled.

The model (a gang operator whose breach signal hid regressions): a Gang (aftershock.io/v1,
spec.groups, spec.size, spec.minAvailable, spec.terminationDelaySeconds, spec.memory) owns, per
gang replica g, `size` pods <gang>-<g>-<suffix> labelled aftershock.io/gang=<gang> and
aftershock.io/gang-group=<g>, each requesting spec.memory (one fits a small node), scheduled by
the real kube-scheduler. Deleted pods are replaced at once, also while a breach is pending; never
more than `size` live pods per replica. status.groups[g] holds scheduled, ready, healthy (it has
had scheduled >= minAvailable) and the MinAvailableBreached condition (decisions.py), whose
lastTransitionTime moves only when its status does. A breach True for terminationDelaySeconds
terminates that replica only: its pods are deleted (and recreated), a Warning Event
GangTerminated on the Gang, and the replica starts over (breach False/Terminated, healthy false:
a replica that never became healthy is not terminated, so one recycle per breach episode).
Each transition of a replica's scheduled count to 0 is one Warning Event ScheduledZero.

faulty  — the incident: 0 < scheduled < minAvailable reads as "still starting up" (False,
          Starting) even after the replica was healthy; only a drop to 0 is a breach, so a
          partial regression after a cordon is never terminated and the gang stays stuck.
correct — a replica that has been healthy and has scheduled < minAvailable is breached
          (True, BelowMinAvailable); one that never was is Starting; back at minAvailable it is
          Recovered.
"""
