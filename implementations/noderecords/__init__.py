"""NodeRecords: a node manager giving every Node a slot out of a fixed pool [0, slots), one
NodeRecord `slot-<i>` per slot; records of live nodes are touched, records of vanished nodes are
released once stale, and a node finding no free slot is refused (a NoFreeSlot Event).

faulty  — the incident's first fix: `if record_slot and stale:` reads slot 0 as "no slot", so the
          record holding slot 0 is never reclaimed; releases delete by name, unconditionally.
correct — any stale record is reclaimed, slot 0 included; releases delete with the uid and
          resourceVersion of the record it judged, so a record re-assigned or touched meanwhile
          is never clobbered (409 Conflict: skipped).
"""
