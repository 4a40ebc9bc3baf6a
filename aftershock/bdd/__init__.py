"""aftershock for pytest-bdd: the built-in step library (``aftershock.bdd.steps``), the pytest
fixtures (``fixtures``), the step runner (``runner``) and the report wiring (``reporting``).
The pytest11 plugin (``aftershock.pytest_plugin``) loads them; a project's own steps use the
same decorators (``from aftershock.scenario import given, when, then``) in its own ``steps/``,
imported by its ``conftest.py``."""
