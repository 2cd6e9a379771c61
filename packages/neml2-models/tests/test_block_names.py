"""Any ``[Models]`` block name works: a keyword (``[yield]``) or a name that is not a
Python identifier (``[my-model]``, ``[2nd]``) is registered under an attribute that is
one (torch.fx writes the attribute names into Python code), and messages keep the
block's own name."""

from __future__ import annotations

import keyword

import pytest
import torch

from neml2.models import load_string
from neml2.models._model import attribute_name
from neml2.models.model import register_submodule
from neml2.tensors import FatalError

#: block name -> the attribute it is registered under
NAMES = {
    "yield": "yield_",
    "lambda": "lambda_",
    "class": "class_",
    "None": "None_",
    "my-model": "my_model",
    "2nd": "model_2nd",
    "a.b": "a_b",
    "_order": "model__order",  # a private attribute ComposedModel sets after its children
    "elasticity": "elasticity",
}


def _composition(names: list[str], to: str | None = None) -> str:
    blocks = "".join(
        f"  [{n}]\n    type = ScalarLinearCombination\n    from = 'a{i}'\n"
        f"    to = '{to or f'c{i}'}'\n  []\n"
        for i, n in enumerate(names)
    )
    return (
        f"[Models]\n{blocks}  [top]\n    type = ComposedModel\n"
        f"    models = '{' '.join(names)}'\n  []\n[]\n"
    )


@pytest.mark.parametrize(("hit_name", "attribute"), NAMES.items())
def test_attribute_name(hit_name, attribute):
    assert attribute_name(hit_name) == attribute
    assert attribute.isidentifier() and not keyword.iskeyword(attribute)


@pytest.mark.parametrize("hit_name", [None, "", 3])
def test_no_attribute_name(hit_name):
    assert attribute_name(hit_name) is None


def test_composed_children_get_identifier_attributes():
    names = [*NAMES, "opts", "forward", "my_model"]  # an attribute taken; a clash
    m = load_string(_composition(names), "top")
    children = [n for n, _ in m.named_children()]
    assert children == [*NAMES.values(), "opts_1", "forward_1", "my_model_1"]
    assert [c.hit_name for _, c in m.named_children()] == names
    assert "yield_.w_0" in dict(m.named_buffers())
    x = {f"a{i}": torch.full((2,), float(i), dtype=torch.float64) for i in range(len(names))}
    out = m.forward(x)
    assert set(out) == {f"c{i}" for i in range(len(names))}
    torch.testing.assert_close(out["c1"], x["a1"])


def test_messages_name_the_blocks():
    """py-eager reports the block names of the input file, not the attributes."""
    with pytest.raises(FatalError, match=r"provided by more than one model \(yield, my-model\)"):
        load_string(_composition(["yield", "my-model"], to="c"), "top")


def test_register_submodule_takes_any_block_name():
    parent, child, other = torch.nn.Module(), torch.nn.Linear(1, 1), torch.nn.Linear(1, 1)
    child.hit_name = "lambda"
    other.hit_name = "lambda"  # taken: the fallback
    used: set[str] = set()
    assert register_submodule(parent, child, "first", used=used) == "lambda_"
    assert register_submodule(parent, other, "second", used=used) == "second"
    assert parent.lambda_ is child and used == {"lambda_", "second"}
