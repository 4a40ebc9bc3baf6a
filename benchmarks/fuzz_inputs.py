"""Bad input at length: tests/unit/test_input_fuzz.py with many more examples (mutated shapes,
profiles, features, workloads and kubeconfigs through the loaders, and through `aftershock run
--collect-only`), then the figures: inputs tried, loaded, refused, refused at a line, distinct
refusals, and tracebacks and hangs (the goal: 0 of each; any is a test failure).

    .venv/bin/python benchmarks/fuzz_inputs.py [--loaders 10000] [--cli 50]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--loaders", type=int, default=10000, help="examples per kind")
    parser.add_argument("--cli", type=int, default=50, help="command-line examples per kind")
    args = parser.parse_args()
    env = {**os.environ, "AFTERSHOCK_INPUT_FUZZ": str(args.loaders),
           "AFTERSHOCK_CLI_FUZZ": str(args.cli)}
    began = time.monotonic()
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider",
                          "tests/unit/test_input_fuzz.py"], cwd=REPO, env=env,
                         capture_output=True, text=True)
    for line in out.stdout.splitlines():
        if " inputs, " in line or "passed" in line or "failed" in line:
            print(line.lstrip("."))
    cli = 4 * args.cli
    print(f"command line: {cli} mutated files through `aftershock run --collect-only`")
    print(f"tracebacks and hangs: {'0' if out.returncode == 0 else 'SOME (see above)'}; "
          f"{time.monotonic() - began:.0f}s")
    if out.returncode:
        print(out.stdout[-4000:])
        raise SystemExit(1)


if __name__ == "__main__":
    main()
