"""aftershock: judge Kubernetes controllers, schedulers and drivers by their whole history."""

__version__ = "0.1.0"
