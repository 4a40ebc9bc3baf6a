"""Registers the step and fixture modules for features/ (the pytest11 plugin does the same for
projects that install aftershock; registering twice is harmless)."""

pytest_plugins = ["fixtures.cluster", "fixtures.bdd"]
