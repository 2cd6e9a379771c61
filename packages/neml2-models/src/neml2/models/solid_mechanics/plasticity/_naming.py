"""Output names that default to an input's name plus a suffix (``X`` -> ``X_rate``)."""

from __future__ import annotations

from neml2.models._model import Model


def default_output_name(model: Model, option: str, source: str, suffix: str) -> None:
    """Rename output *option* (declared with an empty default) to ``<source var><suffix>``.

    Call from ``setup()``; *source* is the option of the input the name derives from.
    """
    if model.opts[option]:
        return
    typ = model.output_spec.pop("")
    name = model.var[source] + suffix
    model.declare_output(name, typ)
    model.var[option] = name
