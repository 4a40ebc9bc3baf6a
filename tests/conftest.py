"""What pytest does not collect itself (data that tests run on purpose), and the order the
tests are handed to pytest-xdist (`tests/ordering.py`)."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from tests import ordering

collect_ignore = ["data"]


def pytest_configure(config: pytest.Config) -> None:
    _share_the_go_build_cache()


def _share_the_go_build_cache() -> None:
    """Tests that point XDG_CACHE_HOME at a temp dir (aftershock's cache kept apart) would move
    Go's build cache with it and compile the standard library again in each, a minute apiece
    on two cores. Go's cache is keyed by content: sharing the machine's changes no result."""
    go = shutil.which("go")
    if "GOCACHE" in os.environ or not go:
        return
    found = subprocess.run([go, "env", "GOCACHE"], capture_output=True, text=True)
    if found.returncode == 0 and found.stdout.strip():
        os.environ["GOCACHE"] = found.stdout.strip()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    workers = getattr(config, "workerinput", {}).get("workercount", 1)  # pytest-xdist's
    items[:] = ordering.deal(items, lambda item: item.nodeid,
                             lambda item: getattr(item, "fixturenames", ()), parts=workers)
