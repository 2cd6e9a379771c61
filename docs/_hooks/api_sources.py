"""MkDocs hook: one ``neml2`` source tree for the API reference.

``neml2`` is one import namespace spread over six distributions (each
``packages/<p>/src/neml2``), merged at import time by ``pkgutil.extend_path``.
mkdocstrings reads sources statically and stops at the first ``neml2``
package it meets, so :func:`on_config` links every distribution's entries
into ``build/api-src/neml2`` (the path ``mkdocs.yml`` gives the handler).
It runs at start-up, before any plugin's configuration: the handler drops a
search path that does not exist when it is configured.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TREE = ROOT / "build" / "api-src" / "neml2"


def merge_sources(root: Path = ROOT, tree: Path = TREE) -> list[str]:
    """Link each ``packages/*/src/neml2/<entry>`` into *tree*; return the entry names.

    Raises:
        RuntimeError: two distributions ship an entry of the same name.
    """
    shutil.rmtree(tree, ignore_errors=True)
    tree.mkdir(parents=True)
    owner: dict[str, Path] = {}
    for src in sorted(root.glob("packages/*/src/neml2")):
        for entry in sorted(src.iterdir()):
            if entry.name == "__pycache__":
                continue
            if entry.name in owner:
                raise RuntimeError(
                    f"neml2/{entry.name} is shipped twice: {owner[entry.name]} and {entry}"
                )
            owner[entry.name] = entry
            os.symlink(entry, tree / entry.name)
    return sorted(owner)


def on_startup(command, dirty):
    merge_sources()
