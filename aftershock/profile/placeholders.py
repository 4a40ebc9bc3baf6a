"""One placeholder syntax for a profile and every file it names: ``{name}``, for the names the
harness fills in ({name}, {replicas}, {namespace}, {kubeconfig}, {python}, {workdir},
{module_dir}, {image}, {service_account}, ...). Nothing else is touched: a ``$`` in a container
command, a YAML flow mapping such as ``{app: web}``, or a ``{placeholder}`` the harness does
not fill stays as written."""

from __future__ import annotations

import re
from collections.abc import Mapping

PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


def fill(text: str, values: Mapping[str, object]) -> str:
    """``text`` with each ``{key}`` of ``values`` replaced by its value."""
    return PLACEHOLDER.sub(lambda found: str(values[found.group(1)])
                           if found.group(1) in values else found.group(0), text)


def fill_all(texts, values: Mapping[str, object]) -> list[str]:
    return [fill(text, values) for text in texts]
