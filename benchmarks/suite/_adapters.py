"""Route adapters seen by ``_measure.Stepper`` (torch only; both libraries fit them).

Both libraries' models share the surface used here: ``input_spec`` / ``output_spec``
(name -> typed-wrapper class with ``BASE_SHAPE``) and a typed positional forward for
the Python routes; ``input_names`` / ``output_names`` / ``input_base_shapes`` and a
name-keyed ``forward(dict)`` of raw tensors for the compiled (AOTI) routes.
"""

from __future__ import annotations


class TypedAdapter:
    """py-eager / py-jit: typed positional forward, as both TransientDrivers call it."""

    def __init__(self, model, fn=None):
        self.fn = fn if fn is not None else model
        self.input_names = list(model.input_spec)
        self.output_names = list(model.output_spec)
        self._types = {**dict(model.output_spec), **dict(model.input_spec)}

    def input_base_shape(self, name):
        return tuple(self._types[name].BASE_SHAPE)

    def wrap(self, raw, name, sub):
        return self._types[name](raw, sub_batch_ndim=sub)

    def call(self, values):
        out = self.fn(*[values[n] for n in self.input_names])
        out = out if isinstance(out, tuple) else (out,)
        return dict(zip(self.output_names, out, strict=True))


class RawAdapter:
    """py-aoti: name-keyed forward of raw ``(*B, *sub, *base)`` tensors."""

    def __init__(self, model):
        self.model = model
        self.input_names = list(model.input_names)
        self.output_names = list(model.output_names)
        shapes = model.input_base_shapes
        if isinstance(shapes, dict):
            self._base = {n: tuple(s) for n, s in shapes.items()}
        else:
            self._base = {n: tuple(s) for n, s in zip(self.input_names, shapes, strict=True)}

    def input_base_shape(self, name):
        return self._base[name]

    def wrap(self, raw, name, sub):
        return raw.contiguous()

    def call(self, values):
        return self.model.forward(values)
