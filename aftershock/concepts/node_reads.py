"""What a read loop on a node prints, and how it is read back: a copy of a file, stamped with
the node's own clock, each time it changed (a failed read said as such), and a heartbeat line
at least every HEARTBEAT_SECONDS when nothing changed. Without the heartbeat a loop that stalls
(a hung read, a frozen node) would look like a file that did not change: a stretch longer than
SILENT_SECONDS with no line from a node is a stretch nobody saw.

Apart from `node_state` (which starts the loops through a provider) so that the judges can
read these figures without importing a provider."""

from __future__ import annotations

import re
from typing import Any

READ_SECONDS = 0.2
HEARTBEAT_SECONDS = 2  # whole seconds: the loop compares `date +%s`
# A heartbeat is due every HEARTBEAT_SECONDS and comes at most about one second late (whole
# seconds, a read's time): a silence three times as long is a loop that did not read.
SILENT_SECONDS = 3 * HEARTBEAT_SECONDS
MAX_SECONDS = 3 * 3600  # no scenario runs longer; a loop orphaned on a kept node ends by then
MARK = "@@aftershock-read "
FAILED = "@@aftershock-failed "
BEAT = "@@aftershock-beat "
END = "@@aftershock-end"


# What a CDI spec directory holds, read as one file: a line per spec file, its path, a tab and
# its content on one line (the directories CDI looks in by default, /etc/cdi and /var/run/cdi)
CDI_DIRS = ("/etc/cdi", "/var/run/cdi")
CDI_LISTING = ("for f in " + " ".join(f"{d}/*" for d in CDI_DIRS) + "; do "
               '[ -f "$f" ] || continue; printf "%s\\t%s\\n" "$f" "$(tr "\\n\\t" "  " < "$f")"; '
               "done")

# What a kubelet's plugin sockets are, read as one file: a line per socket in its plugin registry
# (a driver's registration, which the kubelet's plugin watcher registers) and in each plugin's
# directory (the service a registration names), "live" or "dead" and its path: dead when a
# connection to it is refused, so that nobody serves it (a stale socket: a registration the
# kubelet keeps for a plugin that is gone, kubernetes#128696). socat is in the node image.
REGISTRY_DIR = "/var/lib/kubelet/plugins_registry"
PLUGINS_DIR = "/var/lib/kubelet/plugins"
REGISTRY_LISTING = (f"for s in {REGISTRY_DIR}/* {PLUGINS_DIR}/*/*; do "
                    '[ -S "$s" ] || continue; '
                    'if socat -u OPEN:/dev/null UNIX-CONNECT:"$s" 2>/dev/null; '
                    'then echo "live $s"; else echo "dead $s"; fi; done')


def loop(path: str, name: str = "aftershock-node-state", read: str | None = None) -> list[str]:
    """The loop run on a node: a copy of ``path`` (or what the shell command ``read`` prints)
    after a MARK line with the node's time each time it changed (a FAILED line with the error
    when it could not be read), then END; a BEAT line with the node's time when nothing changed
    for HEARTBEAT_SECONDS."""
    command = read or 'cat "$1"'
    script = (f'end=$(( $(date +%s) + {MAX_SECONDS} )); old=""; beat=0; '
              f'while [ "$(date +%s)" -lt "$end" ]; do t=$(date +%s.%N); now=${{t%.*}}; '
              f'if new=$({command} 2>&1); then mark="{MARK}"; else mark="{FAILED}"; fi; '
              f'if [ "$mark$new" != "$old" ]; then '
              f'printf "%s%s\\n%s\\n{END}\\n" "$mark" "$t" "$new"; old="$mark$new"; beat=$now; '
              f'elif [ $(( now - beat )) -ge {HEARTBEAT_SECONDS} ]; then '
              f'printf "{BEAT}%s\\n" "$t"; beat=$now; fi; '
              f'sleep {READ_SECONDS}; done')
    return ["sh", "-c", script, name, path]


COPY = re.compile(rf"^({re.escape(MARK)}|{re.escape(FAILED)})(\d+\.\d+)\n(.*?)\n"
                  rf"{re.escape(END)}$", re.M | re.S)
HEARTBEAT = re.compile(rf"^{re.escape(BEAT)}(\d+\.\d+)$", re.M)


def parse(node: str, text: str) -> list[dict[str, Any]]:
    """The lines one loop wrote, in time order: {"time", "node", "text"} for a copy, "error"
    for a failed read, "beat": True for a heartbeat (the file read as its last copy said). A
    copy still being written (no END yet) is left out. A log written before heartbeats were
    (copies only) reads as it did."""
    lines = []
    for found in COPY.finditer(text):
        copy: dict[str, Any] = {"time": float(found.group(2)), "node": node}
        copy["text" if found.group(1) == MARK else "error"] = found.group(3)
        lines.append(copy)
    lines += [{"time": float(found.group(1)), "node": node, "beat": True}
              for found in HEARTBEAT.finditer(text)]
    return sorted(lines, key=lambda line: line["time"])
