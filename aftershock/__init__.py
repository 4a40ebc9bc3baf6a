"""aftershock: judge Kubernetes controllers, schedulers and drivers by their whole history."""

__version__ = "0.1.0"


def __getattr__(name: str):
    """`aftershock.Session` without importing the notebook layer for every engine user."""
    if name == "Session":
        from aftershock.notebook.session import Session

        return Session
    raise AttributeError(f"module 'aftershock' has no attribute {name!r}")
