"""This repository's own steps, beside aftershock's built-in step library
(``aftershock.bdd.steps``). Its features use only built-in steps so far; a step defined here
with ``from aftershock.scenario import given, when, then`` joins them (conftest.py imports this
package), exactly as in a project made by ``aftershock init``."""
