"""This repository's own steps and fixtures, beside aftershock's built-in ones (the pytest11
plugin loads those)."""

import fixtures  # noqa: F401
import steps  # noqa: F401
