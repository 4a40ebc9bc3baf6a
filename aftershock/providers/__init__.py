"""Providers: what gives a running cluster. Each provider's own module registers it
(``base.register``: its name, how it opens a cluster, what it can do and checks first) and how
its records are undone (``processes.teardown``); the rest of aftershock asks ``base.get(name)``.
Importing this package imports the providers aftershock ships, in the one list below, and the
managed container engine, whose records `cluster gc` undoes too. A project's own provider
registers the same way in its own module, imported by its conftest.py (or ``-p``)."""

from aftershock.containers import managed  # noqa: F401  (its records' teardown)
from aftershock.providers import (  # noqa: F401  (each registers itself)
    existing,
    kind,
    local,
)
