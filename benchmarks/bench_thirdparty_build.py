"""How long the third-party profiles take to build, cold and warm.

For each profile in profiles/thirdparty (or those named): *cold* builds with an empty Go build
cache and an empty implementation cache (the module cache is shared: downloads are the
network's figure, not ours), *rebuild* builds again with the Go build cache warm but no binary
cached, and *warm* is what a run pays once the binary is cached (a lookup). Each build runs
under `timeout`, one at a time (2 cores).

    .venv/bin/python benchmarks/bench_thirdparty_build.py [profiles/thirdparty/x.yaml ...]
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ONE_BUILD = """
import sys, time
from aftershock.go.builds import GoBuild, ensure
began = time.monotonic()
ensure(GoBuild.parse(sys.argv[1]), progress=lambda m: None)
print(f"{time.monotonic() - began:.2f}")
"""


def _build(go: str, env: dict[str, str]) -> float:
    done = subprocess.run(["timeout", "1800", sys.executable, "-c", ONE_BUILD, go], env=env,
                          capture_output=True, text=True, cwd=REPO)
    if done.returncode != 0:
        raise SystemExit(f"building {go} failed:\n{done.stderr[-2000:]}")
    return float(done.stdout.strip().splitlines()[-1])


def measure(profile: Path) -> tuple[str, float, float, float]:
    from aftershock.profile.load import load_profile

    build = load_profile(profile).build
    assert build is not None, f"{profile} builds nothing"
    with tempfile.TemporaryDirectory(prefix="bench-build-") as scratch:
        env = {**os.environ, "GOCACHE": f"{scratch}/gocache", "XDG_CACHE_HOME": scratch}
        cold = _build(build.pinned, env)
        warm = _build(build.pinned, env)
        for cached in Path(scratch, "aftershock", "impl").iterdir():
            subprocess.run(["rm", "-rf", str(cached)], check=True)
        rebuild = _build(build.pinned, env)
    return build.pinned, cold, rebuild, warm


def main(argv: list[str]) -> None:
    profiles = [Path(a) for a in argv] or sorted((REPO / "profiles/thirdparty").glob("*.yaml"))
    print(f"{'module':58} {'cold':>8} {'rebuild':>8} {'warm':>8}")
    began = time.monotonic()
    for profile in profiles:
        pinned, cold, rebuild, warm = measure(profile)
        print(f"{pinned:58} {cold:7.0f}s {rebuild:7.1f}s {warm:7.2f}s", flush=True)
    print(f"(cold: empty Go build cache; rebuild: Go build cache warm, binary not cached; "
          f"warm: binary cached. {time.monotonic() - began:.0f}s in all)")


if __name__ == "__main__":
    main(sys.argv[1:])
