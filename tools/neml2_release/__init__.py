"""Release tooling of the neml2 workspace (not part of any wheel; noxfile.py imports it).

* :mod:`.changelog`: per-package CHANGELOG.md (Keep a Changelog) read and rewritten;
* :mod:`.rule`: the changelog rule the lint session enforces on commits;
* :mod:`.release`: ``nox -s release -- PACKAGE VERSION [--dry-run]``;
* :mod:`.compat`: ``nox -s compat``, the deployment pair across releases;
* :mod:`.workspace`: versions, sibling ranges and their edits.

Settings: ``config.toml`` next to this file. docs/releasing.md is the user's guide.
"""

from __future__ import annotations

from . import changelog, compat, release, rule, workspace
from ._util import ToolError

__all__ = ["ToolError", "changelog", "compat", "release", "rule", "workspace"]
