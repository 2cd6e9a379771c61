"""What a compile uses when it is not told otherwise, importable without torch: the
command line shows these in ``--help`` and checks its folders before torch loads."""

from __future__ import annotations

import os
from pathlib import Path

#: Batch size of the example inputs used for export (never 0 or 1: torch would specialise
#: on it). It is also the size hint AOT Inductor plans its loops with: below about 1000
#: points per kernel it emits serial kernels, which run on one core at any batch. On 2
#: cores, with a hint of 1024 instead of 8: elasticity at 1e6 points 6.8e7 -> 1.45e8
#: points/s; J2 radial return at 1e4-1e5 2.6-2.8e5 -> 4.0-4.4e5, Perzyna 4.5-4.7e4 ->
#: 7.3-7.6e4, Chaboche (2 back stresses) at 1e4 3.8e3 -> 6.6e3 (batch 1 is 15-25 %
#: slower: the OpenMP regions' fork/join).
EXAMPLE_BATCH = 1024


def default_cache_dir() -> Path:
    """Return the compile cache directory used when no ``cache_dir`` is given.

    Returns:
        ``$NEML2_COMPILE_CACHE`` if set, else ``$XDG_CACHE_HOME/neml2/compile``
            (``~/.cache/neml2/compile`` when ``XDG_CACHE_HOME`` is unset). The
            directory is not created.
    """
    env = os.environ.get("NEML2_COMPILE_CACHE")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "neml2" / "compile"
