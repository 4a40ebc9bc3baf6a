"""Providers: what gives a running cluster (local, kind, existing), and what they need on this
machine (the toolchain, the container engine, the record of every process a run starts).

Each provider registers how its records are undone (``processes.teardown``); importing this
package imports them all, in the one list below, so `cluster gc` and `cluster down` undo every
kind of record wherever they run."""

from aftershock.providers import (  # noqa: F401
    existing,
    kind,
    local,
    managed_engine,
)
