"""``[Tensors]`` read from CSV columns: ``CSVScalar``, ``CSVVec``, ``CSVSR2``, ``CSVWR2``.

``variable = 'stress'`` reads the columns ``stress`` (Scalar) or ``stress_<suffix>``
with the suffixes of the type (SR2: ``xx yy zz yz xz xy``, already Mandel; WR2:
``zy xz yx``; Vec: ``x y z``). Instead, ``column_names = 'a b c'`` lists the
columns explicitly, one per component in that order (exactly one of the two
options). Rows become the leading batch axis (time steps). ``csv_file`` is
relative to the input file's folder.
"""

from __future__ import annotations

import csv
from pathlib import Path

import torch

from neml2.hit._cli_support import file_problem
from neml2.models._registry import register
from neml2.models._schema import Schema, option
from neml2.tensors import SR2, WR2, FatalError, Scalar, Vec


class _CSVTensor:
    SECTION = "Tensors"
    VALUE_TYPE: type = Scalar
    SUFFIXES: tuple[str, ...] = ()
    fields = (
        option("csv_file", str, doc="CSV file, relative to the input file"),
        option(
            "variable",
            str,
            "",
            doc="column name (prefix for multi-component types); or give column_names",
        ),
        option(
            "column_names",
            str,
            (),
            many=True,
            doc="the columns, one per component in order (instead of variable)",
        ),
    )

    @classmethod
    def tensor_from_hit(cls, node, ctx):
        values = Schema.of(cls).read_hit(node, ctx)
        where = node.param("csv_file").location
        path = Path(values["csv_file"])
        if not path.is_absolute():
            path = Path(ctx.path).resolve().parent / path
        problem = file_problem(path, "CSV file")  # a directory or FIFO: no open, no hang
        if problem is not None:
            raise FatalError(f"{where}: {problem}")
        try:
            with path.open(newline="", encoding="utf-8") as f:
                rows = list(csv.reader(f))
        except UnicodeDecodeError as e:
            raise FatalError(
                f"{where}: CSV file {path} is not UTF-8 text ({e.reason} at byte {e.start})"
            ) from None
        except (OSError, csv.Error) as e:
            reason = getattr(e, "strerror", None) or e
            raise FatalError(f"{where}: cannot read CSV file {path}: {reason}") from None
        if not rows:
            raise FatalError(f"{where}: {path} is empty")
        header = [h.strip() for h in rows[0]]
        var, explicit = values.get("variable", "").strip(), list(values.get("column_names", ()))
        if bool(var) == bool(explicit):
            at = node.param("variable") or node.param("column_names")
            raise FatalError(
                f"{at.location if at else node.location}: [{node.fullpath}] takes exactly one "
                "of the options 'variable' and 'column_names'"
            )
        if explicit:
            cols, option_name = explicit, "column_names"
            count = max(1, len(cls.SUFFIXES))
            if len(cols) != count:
                raise FatalError(
                    f"{node.param(option_name).location}: option 'column_names' of a "
                    f"{cls.VALUE_TYPE.__name__} needs {count} column(s), got {len(cols)}"
                )
        else:
            option_name = "variable"
            cols = [var] if not cls.SUFFIXES else [f"{var}_{s}" for s in cls.SUFFIXES]
        missing = [c for c in cols if c not in header]
        if missing:
            raise FatalError(
                f"{node.param(option_name).location}: {path.name} has no column(s) "
                f"{', '.join(missing)} (columns: {', '.join(header)})"
            )
        idx = [header.index(c) for c in cols]
        data = []
        for i, row in enumerate(rows[1:], start=2):
            if not row:
                continue
            try:
                data.append([float(row[j]) for j in idx])
            except (ValueError, IndexError) as e:
                raise FatalError(f"{path}:{i}: bad number in columns {', '.join(cols)}") from e
        t = torch.tensor(data, dtype=ctx.dtype, device=ctx.device)
        if not cls.SUFFIXES:
            t = t[:, 0]
        return cls.VALUE_TYPE(t)


@register()
class CSVScalar(_CSVTensor):
    """A Scalar per CSV row from the column ``variable``."""


@register()
class CSVVec(_CSVTensor):
    """A Vec per CSV row from ``variable_x``, ``_y``, ``_z``."""

    VALUE_TYPE = Vec
    SUFFIXES = ("x", "y", "z")


@register()
class CSVSR2(_CSVTensor):
    """An SR2 per CSV row from ``variable_xx ... _xy`` (Mandel components)."""

    VALUE_TYPE = SR2
    SUFFIXES = ("xx", "yy", "zz", "yz", "xz", "xy")


@register()
class CSVWR2(_CSVTensor):
    """A WR2 per CSV row from ``variable_zy``, ``_xz``, ``_yx`` (axial vector)."""

    VALUE_TYPE = WR2
    SUFFIXES = ("zy", "xz", "yx")
