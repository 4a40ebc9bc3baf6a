"""The storage cluster concept: members of a workload with node-local data, the data probe the
profile names, and the S properties judged over the history and the probe's answers."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aftershock.concepts import ConceptView, get_path
from aftershock.history import History
from aftershock.history.names import APP_STATES
from aftershock.history.state import State, is_ready
from aftershock.profile.placeholders import fill, fill_all

PROBE_TIMEOUT = 60


class ProbeFailed(RuntimeError):
    pass


@dataclass(frozen=True)
class StorageCluster(ConceptView):
    """One storage cluster of the scenario, as the profile maps it."""

    CONCEPT = "storage_cluster"

    @property
    def workload(self) -> str:
        return fill(self.mapping["workload"]["name"], {"name": self.name})

    def pod(self, ordinal: int) -> str:
        return fill(self.mapping["member_pod"], {"name": self.name, "ordinal": ordinal})

    def ordinal(self, pod: str) -> int | None:
        """The member a pod name stands for, or None if it is not one of this cluster's."""
        pattern = re.escape(self.mapping["member_pod"]).replace(re.escape("{name}"),
                                                               re.escape(self.name))
        found = re.fullmatch(pattern.replace(re.escape("{ordinal}"), r"(\d+)"), pod)
        return int(found.group(1)) if found else None

    def ready_members(self, state: State) -> list[int]:
        ready = []
        for pod in state.select("pods", self.namespace):
            ordinal = self.ordinal(pod["metadata"]["name"])
            if ordinal is not None and is_ready(pod):
                ready.append(ordinal)
        return sorted(ready)

    def obj(self, state: State) -> dict[str, Any] | None:
        return state.get(self.resource, self.namespace, self.name)

    @property
    def from_app(self) -> bool:
        """Its members and finished removals are what the application says of itself (a probe
        of it: `app_state`), not fields of the resource."""
        return bool(self.mapping.get("app_state"))

    @property
    def members_known(self) -> bool:
        return self.from_app or bool(self.mapping.get("members_path"))

    @property
    def finish_known(self) -> bool:
        return self.from_app or bool(self.mapping.get("terminal_path"))

    @property
    def state_resource(self) -> str:
        """What its members and finished removals are read from."""
        return APP_STATES if self.from_app else self.resource

    def app(self, state: State) -> dict[str, Any] | None:
        return state.get(APP_STATES, self.namespace, self.name)

    def listed_members(self, state: State) -> list[int] | None:
        if self.from_app:
            said = self.app(state)
            return sorted(said.get("members") or []) if said else None
        if not self.mapping.get("members_path"):
            return None
        obj = self.obj(state)
        members = get_path(obj, self.mapping["members_path"]) if obj else None
        return sorted(members) if members is not None else None

    def finished(self, state: State) -> set[int]:
        if self.from_app:
            said = self.app(state)
            return set(said.get("finished") or []) if said else set()
        if not self.mapping.get("terminal_path"):
            return set()
        obj = self.obj(state)
        return set(get_path(obj, self.mapping["terminal_path"]) or []) if obj else set()

    def moved(self, state: State) -> set[int]:
        """The members in maintenance whose data the application says it moved to the others
        (``moved`` in what `app_state` reads)."""
        said = self.app(state) if self.from_app else None
        return set(said.get("moved") or []) if said else set()

    def members_seen(self, history: History) -> set[int]:
        """The members whose pods the history recorded at any time."""
        return {ordinal for life in history.lives_of("pods", self.namespace)
                if (ordinal := self.ordinal(life.name)) is not None}

    def workload_replicas(self, state: State) -> int | None:
        workload = state.get("statefulsets", self.namespace, self.workload)
        return get_path(workload, "spec.replicas") if workload else None


def run_probe(command: list[str], values: dict[str, str], *args: str,
              cwd: Path | None = None, what: str = "data probe") -> dict[str, Any]:
    """Run the profile's data probe with a verb, or another of its commands (``what``), in
    ``cwd``, where the implementation's own commands run; its one JSON document on stdout."""
    argv = fill_all(command, {"python": sys.executable, **values}) + list(args)
    result = subprocess.run(argv, capture_output=True, text=True, timeout=PROBE_TIMEOUT,
                            cwd=cwd)
    if result.returncode != 0:
        raise ProbeFailed(f"{' '.join([what, *args])} exited {result.returncode}: "
                          f"{(result.stderr or result.stdout)[-800:]}")
    try:
        return json.loads(result.stdout)
    except json.JSONDecodeError as exc:
        raise ProbeFailed(f"{' '.join([what, *args])} printed no JSON: {exc}") from None


def brief(document: dict[str, Any], limit: int = 200) -> str:
    """A probe's answer in a line for the timeline."""
    text = json.dumps(document, separators=(",", ":"))
    return text if len(text) <= limit else text[:limit - 1] + "…"


# --- judgements ---------------------------------------------------------------------------


def save_json(path: Path, document: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=1))
    return path
