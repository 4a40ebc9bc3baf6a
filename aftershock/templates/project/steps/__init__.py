"""This project's own steps: every module in this directory is loaded (a new step module is one
file). Declare steps as aftershock's are, with a pattern in `parse` format; the first argument
is the scenario every step acts on. `aftershock steps` lists these beside the built-in ones, a
typo in a feature names the closest of them all, and words two steps both match are refused."""

from aftershock.grammar import load_step_modules

MODULES = load_step_modules(__name__)
