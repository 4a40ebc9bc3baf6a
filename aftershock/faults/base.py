"""What a fault is: something applied now and always reverted, recorded on the timeline."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


class Fault(Protocol):
    @property
    def description(self) -> str: ...  # "node/node-1 failed (kubelet stopped)"

    def apply(self) -> None: ...

    def revert(self) -> None: ...


@dataclass
class FaultRecord:
    description: str
    started: float  # recorder clock
    ended: float | None = None
