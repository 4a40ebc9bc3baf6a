"""aftershock: judge Kubernetes controllers, schedulers and drivers by their whole history.

The engine is importable without pytest or Jupyter: ``aftershock.scenario`` (a scenario's
world), ``aftershock.properties`` (the property registry), ``aftershock.notebook`` (``Session``,
and the IPython extension).

PYTEST_DONT_REWRITE: `aftershock run` imports this package before pytest starts, and pytest
marks the package of a pytest11 plugin for assertion rewriting; the mark asks for this word, or
it warns, in every run of every project, that the package was imported first. Its modules
imported later are still rewritten."""

__version__ = "0.1.0"
