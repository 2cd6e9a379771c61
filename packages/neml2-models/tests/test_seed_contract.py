"""The seed's authoring contract (neml2.models.model) at unit level: parameter and
buffer declaration from every accepted spec, the HitSchema field forms, the
chain-rule helpers on hand-made tangents."""

from __future__ import annotations

import textwrap

import pytest
import torch

from neml2.models import load_input
from neml2.models._chain_rule import apply_chain_rule, apply_chain_rule_2, propagate_tangents
from neml2.models.model import HitSchema, Model, NLParam, input, option, output
from neml2.tensors import SR2, FatalError, Scalar

F64 = torch.float64


class _Leaf(Model):
    """y = x (a host for declared parameters)."""

    hit = HitSchema(
        input("x", Scalar, "the argument", attr="x_name"),
        output("y", Scalar, "the value"),
        option("label", str, "a label", attr="label", default="none"),
    )

    def forward(self, x, *nl_params, v=None, v2=None, vh=None):
        if v is None:
            return x
        return x, *self.propagate_tangents(v, "y", {"x": lambda t: t}, output=x, v2=v2, vh=vh)


@pytest.fixture
def ctx(tmp_path):
    p = tmp_path / "f.i"
    p.write_text(
        textwrap.dedent(
            """
            [Tensors]
              [T1]
                type = Python
                expr = 'Scalar(torch.tensor([1.0, 2.0], dtype=torch.float64))'
              []
            []
            [Models]
              [src]
                type = ScalarLinearCombination
                from = 'a'
                to = 'b'
              []
              [two]
                type = SR2Invariant
                invariant_type = 'VONMISES'
                tensor = 's'
                invariant = 'vm'
              []
            []
            """
        )
    )
    return load_input(p)


def test_schema_attrs_and_names():
    m = _Leaf(x="u", label="hi")
    assert m.input_names == ["u"] and m.x_name == "u" and m.label == "hi"
    assert _Leaf.SECTION == "Models"
    assert HitSchema(input("x", Scalar, "d"), output("y", Scalar, "d")).input_spec == {"x": Scalar}
    with pytest.raises(TypeError, match="declared twice"):
        HitSchema(input("x", Scalar, "d"), output("x", Scalar, "d"))
    with pytest.raises(TypeError, match="priority"):
        output("y", Scalar, "d", priority="top")


@pytest.mark.parametrize(
    ("spec", "value"),
    [
        (2.5, 2.5),
        (3, 3.0),
        (torch.tensor(1.5, dtype=F64), 1.5),
        (Scalar(torch.tensor(0.5, dtype=F64)), 0.5),
        ("4.25", 4.25),
    ],
)
def test_declare_typed_parameter_constants(spec, value):
    m = _Leaf()
    m.declare_typed_parameter("p", spec, Scalar)
    assert float(m.param("p").data) == value
    assert "p" in dict(m.named_parameters())


def test_declare_typed_parameter_from_the_input_file(ctx):
    m = _Leaf()
    m.declare_typed_parameter("t", "T1", Scalar, factory=ctx)
    assert m.param("t").data.tolist() == [1.0, 2.0]
    m.declare_typed_parameter("c", "src", Scalar, factory=ctx, allow_nonlinear=True)
    m.declare_typed_parameter("d", "free_var", Scalar, factory=ctx, allow_nonlinear=True)
    m.declare_typed_parameter("e", "two.vm", Scalar, factory=ctx, allow_nonlinear=True)
    assert m.input_names == ["x", "b", "free_var", "vm"]
    nl = NLParam.of(m)
    assert nl["c"] == NLParam("b", 0, "src", "b")
    assert nl["d"] == NLParam("free_var", 1, None, "free_var")
    assert nl["e"].provider == "two" and nl["e"].tail_index == 2
    xs = [Scalar(torch.tensor([float(i)], dtype=F64)) for i in range(4)]
    assert float(m._get_param("d", tuple(xs[1:])).data) == 2.0


def test_declare_typed_parameter_errors(ctx):
    m = _Leaf()
    with pytest.raises(FatalError, match="parameter 'p' = 'nope' is neither numbers nor a"):
        m.declare_typed_parameter("p", "nope", Scalar, factory=ctx)
    with pytest.raises(FatalError, match="model 'src' has no output 'zz'"):
        m.declare_typed_parameter("p", "src.zz", Scalar, factory=ctx, allow_nonlinear=True)
    with pytest.raises(FatalError, match="not a Scalar"):
        m.declare_typed_parameter("p", "1 2", Scalar)


def test_typed_buffers(ctx):
    m = _Leaf()
    m.declare_typed_buffer("k", "0.75", Scalar)
    m.declare_typed_buffer("t", "T1", Scalar, factory=ctx)
    m.register_typed_buffer("w", SR2(torch.ones(6, dtype=F64)), persistent=False)
    m.register_typed_parameter("q", Scalar(torch.tensor(2.0, dtype=F64)))
    assert set(dict(m.named_buffers())) == {"k", "t", "w"}
    assert "w" not in m.state_dict() and "k" in m.state_dict()
    assert "q" in dict(m.named_parameters())
    with pytest.raises(FatalError, match="it may not name a variable"):
        m.declare_typed_buffer("b", "some_variable", Scalar, factory=ctx)


def test_chain_rule_helpers():
    m = _Leaf()
    x = Scalar(torch.tensor([1.0, 2.0], dtype=F64))
    v = {
        "x": {
            "a": Scalar(torch.ones(1, 2, dtype=F64)),
            "b": Scalar(2 * torch.ones(1, 2, dtype=F64)),
        }
    }
    out = apply_chain_rule(m, v, "y", {"x": lambda t: 3.0 * t})
    assert out["y"]["a"].data.tolist() == [[3.0, 3.0]] and out["y"]["b"].data.tolist() == [
        [6.0, 6.0]
    ]
    # y = x^2: y'' = 2; v2 only (linear action applied) plus the pairs of v
    two = apply_chain_rule_2(
        m, v, {}, "y", {"x": lambda t: 2.0 * x * t}, {("x", "x"): lambda a, b: 2.0 * a * b}
    )
    assert two["y"]["a"]["b"].data.shape == (1, 1, 2)
    assert two["y"]["a"]["b"].data.flatten().tolist() == [4.0, 4.0]
    vh = {"x": {"h": Scalar(torch.ones(1, 2, dtype=F64))}}
    r = propagate_tangents(
        m,
        v,
        "y",
        {"x": lambda t: 2.0 * x * t},
        actions_2={("x", "x"): lambda a, b: 2.0 * a * b},
        vh=vh,
    )
    assert len(r) == 3 and set(r[1]["y"]["a"]) == {"h"} and set(r[2]["y"]) == {"h"}
    assert len(propagate_tangents(m, v, "y", {"x": lambda t: t})) == 1
    assert len(propagate_tangents(m, v, "y", {"x": lambda t: t}, v2={})) == 2


def test_vh_on_a_leaf_written_on_the_typed_algebra():
    """vh= on a built-in (typed-algebra) leaf: only the v x vh pairs of the second
    derivative, equal to those of a v2= call over the union of the seeds, plus y'(v2)."""
    from neml2.factory import load_string

    m = load_string(
        "[Models]\n  [vm]\n    type = SR2Invariant\n    invariant_type = 'VONMISES'\n"
        "    tensor = 's'\n    invariant = 'q'\n  []\n[]\n"
    )
    g = torch.Generator().manual_seed(5)
    s = SR2(torch.rand(3, 6, generator=g, dtype=F64))
    da = SR2(torch.rand(1, 3, 6, generator=g, dtype=F64))
    db = SR2(torch.rand(2, 3, 6, generator=g, dtype=F64))
    d2 = SR2(torch.rand(1, 1, 3, 6, generator=g, dtype=F64))
    _, v_out, v2_out, vh_out = m(
        s, v={"s": {"a": da}}, v2={"s": {"a": {"a": d2}}}, vh={"s": {"b": db}}
    )
    assert set(v2_out["q"]) == {"a"} and set(v2_out["q"]["a"]) == {"b", "a"}
    assert set(vh_out["q"]) == {"b"} and set(v_out["q"]) == {"a"}
    _, full1, full2 = m(s, v={"s": {"a": da, "b": db}}, v2={})
    torch.testing.assert_close(v2_out["q"]["a"]["b"].data, full2["q"]["a"]["b"].data)
    torch.testing.assert_close(vh_out["q"]["b"].data, full1["q"]["b"].data)
    # y'(v2[a][a]) alone (no v x v Hessian term): the first-order map applied to d2
    _, lin = m(s, v={"s": {"c": SR2(d2.data[0])}})
    torch.testing.assert_close(v2_out["q"]["a"]["a"].data[0], lin["q"]["c"].data)


def test_a_positional_v_is_an_input_not_the_tangents():
    """Only a keyword-only ``v`` (after ``*nl_params``) marks a leaf that propagates its
    own tangents; ``forward(self, u, v)`` (a velocity ``v``) is a typed-algebra leaf."""

    class _Flux(Model):
        """f = u v"""

        hit = HitSchema(
            input("u", Scalar, "the field"),
            input("v", Scalar, "the velocity"),
            output("f", Scalar, "the flux"),
        )

        def forward(self, u, v):
            return u * v

    assert _Flux.SUPPORTS_SECOND_ORDER and not _Flux.forward._neml2_explicit
    assert _Leaf.forward._neml2_explicit and not _Leaf.SUPPORTS_SECOND_ORDER
    m = _Flux()
    u, w = (Scalar(torch.tensor([2.0, 3.0], dtype=F64)) for _ in range(2))
    _, v_out = m(u, w, v={"v": {"a": Scalar(torch.ones(1, 2, dtype=F64))}})
    assert v_out["f"]["a"].data.tolist() == [[2.0, 3.0]]


def test_a_first_order_leaf_may_declare_v_alone():
    """``forward(self, x, *nl_params, v=None)``: first-order calls work; a second-order
    request names the missing keyword instead of a bare TypeError."""

    class _FirstOrder(Model):
        """y = 3 x"""

        hit = HitSchema(input("x", Scalar, "the argument"), output("y", Scalar, "the value"))

        def forward(self, x, *nl_params, v=None):
            y = 3.0 * x
            if v is None:
                return y
            return y, *self.propagate_tangents(v, "y", {"x": lambda t: 3.0 * t}, output=y)

    m = _FirstOrder()
    x = torch.tensor([1.0, 2.0], dtype=F64)  # a batch of two Scalars
    _, J = m.jacobian({"x": x})
    torch.testing.assert_close(J["y"]["x"], torch.full((2,), 3.0, dtype=F64))
    seed = {"x": {"a": Scalar(torch.ones(1, 2, dtype=F64))}}
    with pytest.raises(FatalError, match=r"second-order tangents \(v2=\).*takes no v2="):
        m(Scalar(x), v=seed, v2={})
