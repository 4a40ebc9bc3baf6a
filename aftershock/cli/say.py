"""What a command says to the person running it: on stderr, so that stdout stays the
command's answer (a kubeconfig path, a DOCKER_HOST, a table)."""

import sys


def say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)
