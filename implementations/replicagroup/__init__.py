"""ReplicaGroup: keeps N pods of a template (and optionally one head pod).

faulty  — desired minus the pods in its informer cache, pods by generateName, surplus deleted
          at random: under a stale cache it over-creates, then deletes pods at random.
correct — creation/deletion expectations (as the ReplicaSet controller): it does not act again
          until it has observed what it did, or the expectations time out.
"""
