"""aftershock: judge Kubernetes controllers, schedulers and drivers by their whole history.

The engine is importable without pytest or Jupyter: ``aftershock.scenario`` (a scenario's
world), ``aftershock.properties`` (the property registry), ``aftershock.notebook`` (``Session``,
and the IPython extension)."""

__version__ = "0.1.0"
