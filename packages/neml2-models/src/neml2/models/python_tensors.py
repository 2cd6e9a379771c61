"""``[Tensors] type = Python``: a tensor computed by a Python expression.

The class only describes the type (``neml2-syntax Python`` prints its docstring,
with the allow-list generated from its tables);
:meth:`neml2.models.InputFile.evaluate_python` parses the expression and has
:mod:`neml2.models._expressions` evaluate it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from neml2.models._expression_vocabulary import describe
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

    The expression is not run by Python: an interpreter evaluates its syntax tree
    against an allow-list, so an input file cannot run code. It may use literals
    (numbers, strings, ``True``, ``False``, ``None``, tuples, lists, dicts),
    arithmetic, comparisons, ``and``/``or``/``not``, conditional expressions,
    subscripts and slices, lambdas, list comprehensions and generator expressions,
    and these names, without any import:

    - every typed-tensor type of ``neml2.tensors`` (``Scalar``, ``Vec``, ``SR2``,
      ``R2``, ``WR2``, ``SSR4``, ``MRP``, ``Quaternion``, ``MillerIndex``,
      ``Tensor``) with its constructors (``SR2.fill``, ``Scalar.full``,
      ``SR2.identity``, ``Vec.zeros``, ...) and its functions (``linspace``,
      ``logspace``, ``stack``, ``cat``, ``exp``, ``sqrt``, ``where``, ...); ``abs``
      and ``pow`` are those of ``neml2.tensors`` (they take numbers too);
    - the listed functions and constants of ``torch``, ``math``, ``np`` and ``numpy``
      by qualified name (``torch.linspace``, ``torch.tensor``, ``torch.float64``,
      ``torch.nn.functional.pad``, ``math.sqrt``, ``math.pi``, ``np.linspace``);
      a module itself is no value, and an unlisted name (``torch.save``,
      ``torch.load``, ``torch.os``) is refused;
    - every other ``[Tensors]`` block, by its name (evaluated first; a cycle is an
      error), and the names the expression assigns;
    - the builtins abs, all, any, bool, dict, divmod, enumerate, filter, float,
      int, isinstance, len, list, map, max, min, pow, range, reversed, round,
      slice, sorted, sum, tuple, zip.

    Values have only listed attributes (a typed tensor's ``.data``,
    ``.dynamic_batch``, ``.sub_batch``, ``.batch``, ``.base`` and methods such as
    ``.tr()``; a region's ``.expand``, ``.retag``; a ``torch.Tensor``'s
    ``.shape``, ``.reshape``, ``.unsqueeze``, ``.expand``, ``.item``, ...), never
    one starting with ``_``, and no string method (``str.format``). Sizes are
    bounded: at most 10,000,000 elements per tensor (and 50,000,000 made by all
    the expressions of a file), 1,000,000 items per list, tuple, string or
    ``range``, 4096-bit integers and 200,000 evaluation steps; a call whose size
    follows from its arguments (``torch.zeros(n)``, ``range(n)``, ``[0] * n``,
    broadcasting ``a * b``, ``2 ** n``) is refused before it runs.

    Everything else is refused, before anything runs where the syntax tells
    (``import``, ``def``, ``open``, ``eval``, ``getattr``, f-strings, names
    starting with ``__``), with one line naming the ``expr`` line, the block and
    what was refused and why; a failure while evaluating is an error at the
    ``expr`` line too (``[Tensors/x] failed: NameError: ...``).

    **Arbitrary Python, on request.** An input file that needs more (any function
    of torch or numpy, string formatting, unbounded sizes) can be evaluated by
    Python's ``eval`` instead when the user opts in: ``allow_python_code=True``
    when loading (``load_model``, ``load_input``, ``neml2.drivers.run``),
    ``--allow-python-code`` on ``neml2-run``, ``neml2-inspect`` and
    ``neml2-compile``, or the environment variable ``NEML2_ALLOW_PYTHON_CODE=1``.
    Such an input file can run code: use it only for input files you would run
    as a Python script. (Opted in, names starting with ``__``, attributes
    starting with ``_`` and other builtins are still refused, as a guard against
    accidents.)

    Shapes are what the expression builds: ``SR2.fill(...)`` is ``(6,)``,
    ``linspace(Scalar(0.0), Scalar(1.0), 5)`` is ``(5,)``. A TransientDriver wants
    the steps first (``prescribed_time`` ``(nstep, *B)``, a prescribed SR2
    ``(nstep, *B, 6)``); a parameter takes any batch shape that broadcasts with the
    model's inputs. A ``${...}`` substitution in ``expr`` is done before the
    expression is parsed.
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


Python.__doc__ = (Python.__doc__ or "") + describe()
