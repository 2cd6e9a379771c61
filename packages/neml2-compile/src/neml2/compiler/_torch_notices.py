"""Keep torch's internal notices out of a compile's output.

``torch.export`` and AOT Inductor print warnings and log lines about torch's own
internals while neml2-compile runs them. None of them is something the person
compiling a model can act on, and they read like errors. Seen with torch 2.13:

* ``FutureWarning: `isinstance(treespec, LeafSpec)` is deprecated`` (from
  ``copyreg``): torch pickles its own pytree specs while exporting;
* ``torch/_inductor/ir.py] aten._linalg_solve_ex.default is missing a c-shim
  implementation, using proxy executor as fallback``: how Inductor calls one kernel
  of an implicit model's Newton solve; the artifact works the same;
* ``torch/utils/cpp_extension.py] No CUDA runtime is found, using CUDA_HOME=...``:
  printed when Inductor loads its C++ toolchain on a machine that has a CUDA toolkit
  but no GPU. Hidden only when no CUDA target was asked for; with ``--device cuda``
  it explains the failure that follows.

:func:`torch_notices_hidden` hides exactly these, matched by category and message
(warnings) or by logger and message (log lines). Every other warning, and every
other line of those loggers, still shows. ``neml2-compile --verbose`` does not
use it.
"""

from __future__ import annotations

import contextlib
import logging
import warnings
from collections.abc import Iterator, Sequence

#: ``(category, message regex)`` of the Python warnings hidden (the regex matches the
#: start of the message, as ``warnings.filterwarnings`` does)
HIDDEN_WARNINGS: tuple[tuple[type[Warning], str], ...] = (
    (FutureWarning, r"`isinstance\(treespec, LeafSpec\)` is deprecated"),
)

#: ``(logger name, text the message contains)`` of the log lines always hidden
HIDDEN_LOG_LINES: tuple[tuple[str, str], ...] = (
    ("torch._inductor.ir", "is missing a c-shim implementation, using proxy executor"),
)

#: the same, hidden only when no target device is ``cuda``
HIDDEN_LOG_LINES_WITHOUT_CUDA: tuple[tuple[str, str], ...] = (
    ("torch.utils.cpp_extension", "No CUDA runtime is found"),
)


class _DropMessage(logging.Filter):
    """A logger filter that drops the records whose message contains *text*."""

    def __init__(self, text: str):
        super().__init__()
        self.text = text

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a malformed record: let logging report it as usual
            return True
        return self.text not in message


@contextlib.contextmanager
def torch_notices_hidden(devices: Sequence[str] = ("cpu",)) -> Iterator[None]:
    """Hide torch's internal notices (see the module docstring) inside the block.

    Args:
        devices: the compile's target devices (``"cpu"``, ``"cuda"``); with ``"cuda"``
            among them, the "No CUDA runtime is found" line still shows.

    The warning filters are those of ``warnings.catch_warnings`` (restored on exit);
    the log filters are added to the named loggers and removed on exit.
    """
    lines = list(HIDDEN_LOG_LINES)
    if "cuda" not in devices:
        lines += HIDDEN_LOG_LINES_WITHOUT_CUDA
    added: list[tuple[logging.Logger, logging.Filter]] = []
    with warnings.catch_warnings():
        for category, message in HIDDEN_WARNINGS:
            warnings.filterwarnings("ignore", message=message, category=category)
        try:
            for name, text in lines:
                logger, drop = logging.getLogger(name), _DropMessage(text)
                logger.addFilter(drop)
                added.append((logger, drop))
            yield
        finally:
            for logger, drop in added:
                logger.removeFilter(drop)
