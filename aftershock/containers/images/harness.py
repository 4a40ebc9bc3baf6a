"""``aftershock.local/aftershock:<version>``: aftershock itself in an image, to run `aftershock
explore` (or `run`) with the embedded provider inside a pod: one shard of a campaign per pod of
a Kubernetes Indexed Job (deploy/explore-indexed-job.yaml), on any cluster that can run it.

It builds FROM the python base (``python_base.py``) and adds:

- the aftershock wheel, built from this checkout, with every library it needs at the versions
  of constraints.txt (pip, wheels for the image's Python 3.11 and this machine's platform);
  ``aftershock`` on the PATH;
- the embedded provider's binaries (kube-apiserver, kube-controller-manager, kube-scheduler,
  etcd, kwok), the toolchain built here, under the image's cache (there is no Go in the image:
  `go.toolchain.find` takes them by their manifest);
- the project the checkout is, less its code: the in-house profiles, the workloads, the
  reference implementations written in Python, the cluster shapes, in /opt/aftershock (the
  working directory), so `--profile profiles/replicagroup-correct.yaml` means what it means
  here.

Nothing in it needs privileges: the embedded cluster listens on 127.0.0.1 at ports it picks,
writes its keys, logs and process records under the cache (AFTERSHOCK_CACHE, /var/cache/
aftershock, writable by anyone, sticky, as /tmp) and reads only /proc for the machine's
figures. It runs as user 65532 by default.

Cached by its inputs (a label on the image): the files copied in, the pins, the toolchain's
manifest and the base's own key.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

from aftershock.containers.images import python_base
from aftershock.containers.images.base import Say, say_to_stderr
from aftershock.containers.images.docker import Docker
from aftershock.errors import UserError
from aftershock.go import toolchain
from aftershock.machine.cache import cache_root

REPOSITORY = "aftershock.local/aftershock"
CHECKOUT = Path(__file__).resolve().parents[3]  # the repository this package runs from
REVISION = 1  # bump when what this module puts in the image changes
LABEL = python_base.LABEL
USER = 65532  # no name in the image: nobody's, as distroless images run
PROJECT = "/opt/aftershock"  # the checkout's profiles, workloads, implementations, shapes
CACHE = "/var/cache/aftershock"  # AFTERSHOCK_CACHE in the image: the toolchain, then scratch
SITE = f"/usr/local/lib/python{python_base.PYTHON}/dist-packages"
# what the wheel is built from (setup.py copies the shipped profiles and shapes into it)
WHEEL_SOURCES = ("pyproject.toml", "setup.py", "README.md", "constraints.txt", "aftershock",
                 "profiles", "clusters", "implementations/kube")
# the project in /opt/aftershock: in-house profiles (top-level files), their workloads, the
# reference implementations that are Python packages, the shapes
PROJECT_FILES = ("profiles/*.yaml", "workloads/*", "implementations/__init__.py",
                 "clusters/*.yaml")
SKIPPED = ("__pycache__", "*.pyc")
# bookworm's python3 is 3.11.2: a pin of constraints.txt whose release asks for a later 3.11 is
# left to pip, which takes the newest release that runs there
BOOKWORM_PYTHON = "3.11.2"
UNPINNED = ("soupsieve",)  # 4.1.2 asks for Python >= 3.11.5 (beautifulsoup4's, for nbconvert)
ENTRY = "#!/usr/bin/python3\nimport sys\n\nfrom aftershock.cli import main\n\nsys.exit(main())\n"


def version() -> str:
    return tomllib.loads((CHECKOUT / "pyproject.toml").read_text())["project"]["version"]


def tag() -> str:
    return f"{REPOSITORY}:{version()}"


def checkout() -> Path:
    """The checkout this package runs from; the image is built from one, not from a wheel."""
    if not (CHECKOUT / "setup.py").is_file() or not (CHECKOUT / "profiles").is_dir():
        raise UserError(f"the aftershock image is built from a checkout of aftershock; "
                        f"{CHECKOUT} is not one (no setup.py and profiles/)")
    return CHECKOUT


def python_packages(root: Path) -> list[Path]:
    """The reference implementations written in Python: implementations/<name>/ with an
    __init__.py and no go.mod."""
    folder = root / "implementations"
    return sorted(p for p in folder.iterdir()
                  if (p / "__init__.py").is_file() and not (p / "go.mod").is_file())


def project_files(root: Path) -> list[Path]:
    """Every file of the project part, relative to ``root``."""
    found = [path for pattern in PROJECT_FILES for path in root.glob(pattern) if path.is_file()]
    for package in python_packages(root):
        found += _files(package)
    return sorted({path.relative_to(root) for path in found})


def wheel_files(root: Path) -> list[Path]:
    found: list[Path] = []
    for name in WHEEL_SOURCES:
        path = root / name
        found += _files(path) if path.is_dir() else [path]
    return sorted(path.relative_to(root) for path in found)


def _files(folder: Path) -> list[Path]:
    return [path for path in folder.rglob("*") if path.is_file()
            and "__pycache__" not in path.parts and path.suffix != ".pyc"]


def key(root: Path, binaries: toolchain.Binaries) -> str:
    """A hash of every input: the files copied in (by content), the base's key, the toolchain's
    manifest, this module's revision."""
    digest = hashlib.sha256()
    for path in sorted({*wheel_files(root), *project_files(root)}):
        digest.update(str(path).encode() + b"\0" + (root / path).read_bytes() + b"\0")
    digest.update((binaries.directory / "manifest.json").read_bytes())
    digest.update(json.dumps([python_base.key(), REVISION, USER, PROJECT, CACHE]).encode())
    return digest.hexdigest()[:12]


def dockerfile(toolchain_key: str, wanted: str) -> str:
    return "\n".join([
        f"FROM {python_base.TAG}",
        f"COPY site/ {SITE}/",
        "COPY aftershock /usr/local/bin/aftershock",
        # the cache folder itself from the context, so its mode (1777) is kept: a COPY of its
        # contents would make it root's 0755
        f"COPY cache/ {Path(CACHE).parent}/",
        f"COPY project/ {PROJECT}/",
        f"ENV AFTERSHOCK_CACHE={CACHE} HOME=/tmp",
        f"WORKDIR {PROJECT}",
        f"USER {USER}:{USER}",
        'ENTRYPOINT ["aftershock"]',
        f"LABEL {LABEL}={wanted} io.aftershock.toolchain={toolchain_key}",
        "",
    ])


def pip_command(wheel: Path, target: Path, constraints: Path) -> list[str]:
    """pip, installing the wheel and what it needs for the image's Python and platform (not
    this process's), at the versions constraints.txt pins; compiled, as the user the image
    runs as cannot write a module's cache beside it."""
    chosen = [word for one in python_base.platforms(platform.machine())
              for word in ("--platform", one)]
    return [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
            "--target", str(target), "--only-binary=:all:",
            "--python-version", BOOKWORM_PYTHON, "--implementation", "cp", "--abi",
            "cp" + python_base.PYTHON.replace(".", ""), *chosen, "-c", str(constraints),
            str(wheel)]


def image_constraints(constraints: str) -> str:
    """constraints.txt less the pins of UNPINNED."""
    return "".join(line for line in constraints.splitlines(keepends=True)
                   if line.split("==")[0].strip().lower() not in UNPINNED)


def ensure(docker: Docker, say: Say = say_to_stderr, kubernetes: str | None = None) -> str:
    """The image's tag, built unless the engine holds one made of the same inputs."""
    root = checkout()
    binaries = toolchain.require(kubernetes)
    wanted = key(root, binaries)
    image = tag()
    if docker.has_image(image) and docker.run(
            "image", "inspect", "-f", f'{{{{ index .Config.Labels "{LABEL}" }}}}', image,
            check=False) == wanted:
        return image
    # the image of other inputs this one replaces: 1.3 GB, removed once it is untagged
    stale = docker.run("image", "inspect", "-f", "{{.Id}}", image) \
        if docker.has_image(image) else ""
    python_base.ensure(docker, say)
    # named as the other image builds' scratch, which `cluster gc` removes if we were killed
    scratch_root = cache_root() / "kind"
    scratch_root.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f".tmp-pid{os.getpid()}-", dir=scratch_root))
    try:
        context = scratch / "context"
        wheel = _wheel(root, scratch, say, image)
        say(f"{image}: {wheel.name} and what it needs (pip, wheels for python "
            f"{python_base.PYTHON})")
        site = context / "site"
        constraints = scratch / "constraints.txt"
        constraints.write_text(image_constraints((root / "constraints.txt").read_text()))
        done = subprocess.run(pip_command(wheel, site, constraints),
                              capture_output=True, text=True)
        if done.returncode != 0:
            raise UserError(f"pip could not install aftershock for the image: "
                            f"{done.stderr.strip()[-800:]}")
        shutil.rmtree(site / "bin", ignore_errors=True)  # scripts naming this venv's python
        (context / "aftershock").write_text(ENTRY)
        (context / "aftershock").chmod(0o755)
        _toolchain(binaries, context / "cache" / Path(CACHE).name)
        for path in project_files(root):
            target = context / "project" / path
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(root / path, target)
        say(f"{image}: the image (toolchain {binaries.directory.name})")
        docker.build(context, dockerfile(binaries.directory.name, wanted), image)
        if stale:  # a container still using it keeps it
            docker.run("rmi", stale, check=False)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    say(f"{image}: built")
    return image


def _wheel(root: Path, scratch: Path, say: Say, image: str) -> Path:
    """The aftershock wheel, built from a copy of what it is made of (the build writes its
    build/ and egg-info beside the sources: never into the checkout)."""
    source = scratch / "source"
    for path in wheel_files(root):
        (source / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / path, source / path)
    say(f"{image}: the aftershock wheel")
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps",
                           "--disable-pip-version-check",
                           "--wheel-dir", str(scratch / "wheel"), str(source)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise UserError(f"the aftershock wheel did not build: {done.stderr.strip()[-800:]}")
    return next((scratch / "wheel").glob("aftershock-*.whl"))


def _toolchain(binaries: toolchain.Binaries, cache: Path) -> None:
    """The toolchain under the image's cache, as `toolchain.find` looks for it; the cache
    itself writable by anyone, sticky (the user the pod runs as writes its scratch there).
    Hard links where they can be (the binaries are 450 MB), else copies."""
    cache.mkdir(parents=True)
    cache.chmod(0o1777)
    cache.parent.chmod(0o755)
    target = cache / "bin" / binaries.directory.name
    target.mkdir(parents=True)
    (cache / "bin").chmod(0o755)
    target.chmod(0o755)
    for path in binaries.directory.iterdir():
        if path.is_file():
            try:
                os.link(path, target / path.name)
            except OSError:
                shutil.copy2(path, target / path.name)


def load(cluster, say: Say = say_to_stderr) -> str:
    """The image built (or found) in ``cluster``'s engine and loaded into its nodes
    (a cluster with the LOAD_IMAGE capability: kind). Returns its tag."""
    image = ensure(Docker(cluster.engine), say)
    say(f"{image}: loading into {cluster.info.name}'s nodes")
    cluster.load_image(image)
    return image
