"""The few container-engine commands building a node image needs, each one line of errors."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from aftershock.errors import UserError


class Docker:
    def __init__(self, binary: str = "docker", host: str | None = None):
        self.binary = binary
        self.env = {**os.environ, **({"DOCKER_HOST": host} if host else {})}

    def run(self, *args: str, stdin: bytes | None = None, timeout: float = 900,
            check: bool = True) -> str:
        done = subprocess.run([self.binary, *args], input=stdin, capture_output=True,
                              timeout=timeout, env=self.env)
        if check and done.returncode != 0:
            raise UserError(f"{self.binary} {' '.join(args[:3])} failed: "
                            f"{done.stderr.decode(errors='replace').strip()[-800:]}")
        return done.stdout.decode(errors="replace").strip()

    def has_image(self, tag: str) -> bool:
        done = subprocess.run([self.binary, "image", "inspect", tag], capture_output=True,
                              env=self.env)
        return done.returncode == 0

    def import_tree(self, root: Path, tag: str, changes: list[str]) -> None:
        """A directory as an image (tar streamed, never written to disk)."""
        command = [self.binary, "import"]
        for change in changes:
            command += ["--change", change]
        tar = subprocess.Popen(["tar", "-C", str(root), "--numeric-owner", "-c", "."],
                               stdout=subprocess.PIPE)
        importer = subprocess.Popen([*command, "-", tag], stdin=tar.stdout,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=self.env)
        tar.stdout.close()  # only the importer reads it: if it quits, tar gets a broken pipe
        _, errors = importer.communicate()
        tar.wait()
        if importer.returncode != 0 or tar.returncode != 0:
            raise UserError(f"{self.binary} import failed: {errors.decode().strip()[-800:]}")

    def build(self, context: Path, dockerfile: str, tag: str) -> None:
        """A one-stage build FROM a local image, with the classic builder (BuildKit would
        look the base up in a registry)."""
        context.mkdir(parents=True, exist_ok=True)
        (context / "Dockerfile").write_text(dockerfile)
        done = subprocess.run([self.binary, "build", "-q", "-t", tag, str(context)],
                              env={**self.env, "DOCKER_BUILDKIT": "0"}, capture_output=True)
        if done.returncode != 0:
            raise UserError(f"{self.binary} build failed: {done.stderr.decode().strip()[-800:]}")
