"""The checks of the built documentation site (``test_offline_site.py``).

``nox -s docs`` builds the site, installs Chromium where it is missing and runs these
checks with ``NEML2_DOCS_SITE`` naming the site's folder. A run without it (the
``integration`` session, a bare ``pytest tests-integration``) has no site to check and
does not collect this folder. By hand, after a build::

    NEML2_DOCS_SITE=build/site .venv/bin/python -m pytest tests-integration/docs
"""

from __future__ import annotations

import os

collect_ignore_glob = [] if os.environ.get("NEML2_DOCS_SITE") else ["test_*.py"]
