"""What pytest does not collect itself (data that tests run on purpose), and the order the
tests are handed to pytest-xdist (`tests/ordering.py`)."""

from __future__ import annotations

import pytest

from tests import ordering

collect_ignore = ["data"]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    workers = getattr(config, "workerinput", {}).get("workercount", 1)  # pytest-xdist's
    items[:] = ordering.deal(items, lambda item: item.nodeid,
                             lambda item: getattr(item, "fixturenames", ()), parts=workers)
