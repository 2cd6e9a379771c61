"""``[Tensors] type = Python``: a tensor computed by a Python expression.

The class only describes the type (``neml2-syntax Python`` prints its docstring);
:meth:`neml2.models.InputFile.evaluate_python` checks and evaluates the expression,
in the namespace :func:`neml2.models._input_file._namespace` builds.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from neml2.models._registry import register
from neml2.models._schema import option

if TYPE_CHECKING:
    from neml2 import hit
    from neml2.models._input_file import InputFile


@register("Python")
class Python:
    """A tensor computed by the Python expression ``expr``.

    ``expr`` is one expression (``SR2.fill(1e-3, -3e-4, -3e-4)``), or assignments
    that end by assigning the value to ``result`` (``a = 2.0`` on one line,
    ``result = Scalar(a)`` on the next; use a ``'''...'''`` value for several lines).
    It is evaluated once, when something first uses the block, with torch's
    default dtype set to float64; a floating-point result (a typed tensor or a
    ``torch.Tensor``) is then converted to the dtype and device the input is loaded
    with (``load_model(..., dtype=torch.float32)``); any other value (a number, a
    numpy array) is kept as it is.

    The expression sees, without any import:

    - every name of ``neml2.tensors``: the types ``Scalar``, ``Vec``, ``SR2``, ``R2``,
      ``WR2``, ``SSR4``, ``MRP``, ``Quaternion``, ``MillerIndex``, ``Tensor`` with
      their constructors (``SR2.fill``, ``Scalar.full``, ``SR2.identity``,
      ``Vec.zeros``, ...) and the functions (``linspace``, ``logspace``, ``stack``,
      ``cat``, ``exp``, ``sqrt``, ``where``, ...); its ``abs`` and ``pow`` stand for
      the builtins (they take numbers too);
    - the modules ``torch``, ``math``, ``np`` and ``numpy``;
    - every other ``[Tensors]`` block, by its name (evaluated first; a cycle is an
      error);
    - these builtins only: abs, all, any, bool, dict, divmod, enumerate, filter,
      float, int, isinstance, len, list, map, max, min, pow, range, reversed, round,
      slice, sorted, sum, tuple, zip, and the literals ``True``, ``False``, ``None``.

    Anything else is refused before the expression runs: a name that starts with
    ``__``, an attribute that starts with ``_`` (``torch._C``), another builtin
    (``open``, ``eval``, ``getattr``, ...), and statements other than assignments.
    The check prevents accidents, it is no sandbox: run only input files you would
    run as a Python script.

    Shapes are what the expression builds: ``SR2.fill(...)`` is ``(6,)``,
    ``linspace(Scalar(0.0), Scalar(1.0), 5)`` is ``(5,)``. A TransientDriver wants
    the steps first (``prescribed_time`` ``(nstep, *B)``, a prescribed SR2
    ``(nstep, *B, 6)``); a parameter takes any batch shape that broadcasts with the
    model's inputs. A ``${...}`` substitution in ``expr`` is done before Python
    sees it. Errors name the ``expr`` line: a syntax error, a refused construct, or
    an exception raised while evaluating (``[Tensors/x] failed: NameError: ...``).
    """

    SECTION = "Tensors"
    fields = (
        option(
            "expr",
            str,
            doc="the Python expression, or assignments ending with 'result = ...'",
        ),
    )

    @classmethod
    def tensor_from_hit(cls, node: hit.Node, ctx: InputFile) -> Any:
        """The value of the ``[Tensors]`` block *node* (see the class docstring)."""
        return ctx.evaluate_python(node)
