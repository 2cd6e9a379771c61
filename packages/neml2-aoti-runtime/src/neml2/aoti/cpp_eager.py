"""``neml2.aoti.cpp_eager``: the cpp-eager route (``neml2::eager::Model``) from Python.

The C++ class of ``libneml2_eager`` evaluates a neml2 input file through the Python
models, from C++; this module exposes that same class to a Python host, for testing the
route next to the others (the route matrix) and for comparing it with py-eager::

    from neml2.aoti.cpp_eager import Model
    m = Model("model.i", "model", sub_batch_ndim={"dislocation_density": 1})
    out = m.forward({"strain": strain})  # {"stress": (*B, 6)}

``Model(input_file, model_name, device="", dtype="", overrides=[], sub_batch_ndim={})``
has the surface every neml2 C++ model class shares (``forward``, ``jvp``, ``jacobian``,
``input_names``, ``input_base_shapes``, ``input_sub_batch_shapes``, ``device``, ...;
see docs/cpp-eager.md), plus ``input_sub_batch_ndim``. The sub-batch sizes of cpp-eager
are fixed by each call's tensors: its sub-batch shapes hold ``-1`` for every axis.
:func:`python_interpreter` says which interpreter the C++ class runs (here: this one).

``import neml2.aoti`` never imports this module: it needs ``neml2-models``, which the
deployment pair (``neml2-tensors`` + ``neml2-aoti-runtime``) does not have.
"""

from __future__ import annotations

from neml2.aoti._cpp_eager import Model, python_interpreter

Model.__module__ = __name__

__all__ = ["Model", "python_interpreter"]
