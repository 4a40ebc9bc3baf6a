"""``aftershock kind build-image``, ``build-chaos-mesh`` and ``build-aftershock-image``: what kind
clusters need, and the image that runs aftershock in a pod (deploy/explore-indexed-job.yaml),
built here with no registry."""

# Imports inside functions: start-up time, as in the rest of the command line (a subcommand
# imports what it uses).

from __future__ import annotations

import argparse
import sys


def cmd_build_image(args: argparse.Namespace) -> int:
    import aftershock.providers  # noqa: F401  (the managed engine, found when it runs)
    from aftershock.containers.images import node

    tag = node.build(args.kubernetes_version, force=args.force)
    print(tag)
    return 0


def cmd_build_chaos_mesh(args: argparse.Namespace) -> int:
    import aftershock.providers  # noqa: F401  (the managed engine, found when it runs)
    from aftershock.containers.images import chaosmesh

    print(chaosmesh.build(lambda line: print(line, file=sys.stderr, flush=True),
                          force=args.force))
    return 0


def cmd_build_aftershock_image(args: argparse.Namespace) -> int:
    import aftershock.providers  # noqa: F401  (the managed engine, found when it runs)
    from aftershock.containers import engine
    from aftershock.containers.images import harness
    from aftershock.containers.images.docker import Docker

    print(harness.ensure(Docker(engine.require()), kubernetes=args.kubernetes_version))
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:
    kind = sub.add_parser("kind", help="kind clusters' node image and Chaos Mesh, built on this "
                                       "machine")
    actions = kind.add_subparsers(dest="action", required=True)
    build = actions.add_parser(
        "build-image", help="build a kind node image from Debian packages and Go modules "
                            "(needs an engine: `aftershock engine up`); prints its tag")
    build.add_argument("--kubernetes-version", help="e.g. 1.35.4 (default: the pinned one)")
    build.add_argument("--force", action="store_true", help="rebuild even if cached")
    build.set_defaults(func=cmd_build_image)
    chaos = actions.add_parser(
        "build-chaos-mesh", help="build Chaos Mesh's controller, daemon and helm from their Go "
                                 "modules, before a run needs them (cold: several minutes); "
                                 "prints where they are")
    chaos.add_argument("--force", action="store_true", help="rebuild even if cached")
    chaos.set_defaults(func=cmd_build_chaos_mesh)
    harness = actions.add_parser(
        "build-aftershock-image", help="build the image that runs aftershock itself, with the "
                                       "embedded provider's binaries and this checkout's "
                                       "profiles (deploy/explore-indexed-job.yaml runs it); "
                                       "prints its tag")
    harness.add_argument("--kubernetes-version",
                         help="the embedded clusters' version (default: the pinned one)")
    harness.set_defaults(func=cmd_build_aftershock_image)


