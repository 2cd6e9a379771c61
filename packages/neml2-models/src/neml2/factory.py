"""``neml2.factory``: build objects from HIT input, and register the types it can build.

The loaders are those of :mod:`neml2.models` (the same functions, re-exported):

* :func:`load_model` ``(path, name, overrides=(), *, dtype, device, allow_python_code)``:
  model *name* of ``[Models]`` in the file *path* (``neml2.load_model``);
* :func:`load_string` ``(text, name=None, overrides=(), *, dtype, device,
  allow_python_code)``: the same from HIT text; errors name ``<string>:line:column``;
* :func:`load_nonlinear_system` ``(path, name, ...)``: the ``[EquationSystems]`` block
  *name* (what an ``ImplicitUpdate`` solves);
* :func:`load_input` ``(path, ...)``: the :class:`~neml2.models.InputFile` itself.

:func:`register_neml2_object` is :func:`neml2.models.register` under the reference
library's name (one registry): ``@register_neml2_object`` makes a class constructible as
``type = <class name>``.

``allow_python_code=True`` lets ``[Tensors] type = Python`` expressions run arbitrary
Python instead of the allow-list: such an input file can run code, so pass it only
for input files you would run as a Python script.
"""

from neml2.models import (
    InputFile,
    load_input,
    load_model,
    load_nonlinear_system,
    load_string,
    register_neml2_object,
)

__all__ = [
    "InputFile",
    "load_input",
    "load_model",
    "load_nonlinear_system",
    "load_string",
    "register_neml2_object",
]
