"""The watch-delay proxy: a reverse proxy on loopback between one client and the API server
that holds watch events back by rules, can cut or expire a stream, and passes everything else
at once, in the encoding the client asked for.

``proxy`` (the rules, the streams, the control), ``handler`` (its HTTP side), ``streams`` and
``frames`` (what it holds and how a watch is framed), ``main`` (the sidecar's entry point,
standard library only), ``sidecar`` (the fault that puts it beside a pod on kind)."""

from aftershock.faults.watchdelay.proxy import Rule, Upstream, WatchDelay
from aftershock.faults.watchdelay.streams import Frame, Stream

__all__ = ["Frame", "Rule", "Stream", "Upstream", "WatchDelay"]
