"""Every family of properties: importing this registers them all."""

from aftershock.properties import (  # noqa: F401
    dra,
    explore,
    gang,
    harness,
    records,
    replica,
    storage,
)
