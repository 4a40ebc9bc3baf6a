"""The names the record uses for what is not an object's resource, for judges that say what
they read: the audit log, that a namespace had settled, an application's own state."""

from aftershock.timeline.entry import APP_STATES, AUDIT_LOG, QUIET, SINGULAR, singular_of

__all__ = ["APP_STATES", "AUDIT_LOG", "QUIET", "SINGULAR", "singular_of"]
