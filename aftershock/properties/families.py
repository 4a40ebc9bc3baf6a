"""Every family of properties: importing this registers them all."""

from aftershock.properties import dra, gang, harness, records, replica, storage  # noqa: F401
