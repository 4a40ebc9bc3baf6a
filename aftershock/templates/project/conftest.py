"""This project's own steps and fixtures, beside aftershock's built-in ones (its pytest plugin
loads those)."""

import fixtures  # noqa: F401
import steps  # noqa: F401
