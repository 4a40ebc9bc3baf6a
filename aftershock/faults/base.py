"""What a fault is: something applied now and always reverted, recorded on the timeline."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol


class Fault(Protocol):
    @property
    def description(self) -> str: ...  # "node/node-1 failed (kubelet stopped)"

    def apply(self) -> None: ...

    def revert(self) -> None: ...


@dataclass(eq=False)
class FaultRecord:
    """One application of a fault; two faults with the same description are two records, each
    with its own revert."""

    description: str
    started: float  # recorder clock
    ended: float | None = None
    revert: Callable[[], None] | None = field(default=None, repr=False)
    undo_key: str | None = None  # its entry in the cluster's record of what to undo
