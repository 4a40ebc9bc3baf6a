#!/bin/bash
# Chaos Mesh's daemon runs its tools in a target's namespaces through /usr/local/bin/nsexec:
#   nsexec [-l] [-k] -n|-p|-m|-i|-c PATH ... -- COMMAND [ARG...]
# (-n net, -p pid, -m mount, -i ipc, -c cgroup; PATH is /proc/PID/ns/...). Its published
# program is a release download; util-linux's nsenter does the same here. -l ("run the
# daemon's own program inside the target's mount namespace") needs a preloaded library that
# enters the namespace after the program is loaded: it is refused, loudly.
set -u
options=()
mount=0
local=0
while (($#)); do
  case "$1" in
    -n|--net) options+=("--net=$2"); shift 2 ;;
    -p|--pid) options+=("--pid=$2"); shift 2 ;;
    -i|--ipc) options+=("--ipc=$2"); shift 2 ;;
    -c|--cgroup) options+=("--cgroup=$2"); shift 2 ;;
    -m|--mnt) options+=("--mount=$2"); mount=1; shift 2 ;;
    -l|--local) local=1; shift ;;
    -k|--keep-fd) shift ;;
    --) shift; break ;;
    *) echo "nsexec: unknown option '$1'" >&2; exit 2 ;;
  esac
done
if ((mount && local)); then
  echo "nsexec: -l (a program of the daemon's image inside the target's mount namespace) is" \
       "not supported by this build of the daemon image" >&2
  exit 2
fi
if (($# == 0)); then
  echo "nsexec: no command after --" >&2
  exit 2
fi
exec nsenter "${options[@]}" -- "$@"
