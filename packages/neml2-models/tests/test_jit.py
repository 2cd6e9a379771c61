"""py-jit: neml2.compile(model) against the eager model (values, derivatives, recompiles).

Each compiled model is built once per module (compiles are slow); the compile counter
backend counts the graphs, so "no recompile for a new batch size" is asserted on the
count, never on time. Batch 1 is always the first size evaluated.
"""

from __future__ import annotations

import math
import textwrap

import pytest
import torch
from torch._dynamo.testing import CompileCounterWithBackend

import neml2
from neml2.models import CompiledModel, Model, input, load_model, output
from neml2.tensors import SR2, ConvergenceError, FatalError, Scalar

F64 = torch.float64

ELASTICITY = """
[Models]
  [elasticity]
    type = LinearIsotropicElasticity
    coefficients = '200e3 0.3'
    coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'
  []
[]
"""

# J2 plasticity with linear isotropic hardening, solved by ImplicitUpdate (Newton).
J2 = """
[Models]
  [isoharden]
    type = LinearIsotropicHardening
    hardening_modulus = 1000
  []
  [elastic_strain]
    type = SR2LinearCombination
    from = 'E plastic_strain'
    to = 'elastic_strain'
    weights = '1 -1'
  []
  [elasticity]
    type = LinearIsotropicElasticity
    coefficients = '1e5 0.3'
    coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'
    strain = 'elastic_strain'
  []
  [mandel_stress]
    type = IsotropicMandelStress
    cauchy_stress = 'stress'
  []
  [vonmises]
    type = SR2Invariant
    invariant_type = 'VONMISES'
    tensor = 'mandel_stress'
    invariant = 'effective_stress'
  []
  [yield_surface]
    type = YieldFunction
    yield_stress = 100
    isotropic_hardening = 'isotropic_hardening'
  []
  [flow]
    type = ComposedModel
    models = 'vonmises yield_surface'
  []
  [normality]
    type = Normality
    model = 'flow'
    function = 'yield_function'
    from = 'mandel_stress isotropic_hardening'
    to = 'flow_direction isotropic_hardening_direction'
  []
  [eprate]
    type = AssociativeIsotropicPlasticHardening
  []
  [Eprate]
    type = AssociativePlasticFlow
  []
  [integrate_ep]
    type = ScalarBackwardEulerTimeIntegration
    variable = 'equivalent_plastic_strain'
  []
  [integrate_Ep]
    type = SR2BackwardEulerTimeIntegration
    variable = 'plastic_strain'
  []
  [consistency]
    type = MinMapComplementarity
    a = 'yield_function'
    a_inequality = 'LE'
    b = 'flow_rate'
  []
  [surface]
    type = ComposedModel
    models = 'isoharden elastic_strain elasticity mandel_stress vonmises yield_surface
              normality eprate Eprate consistency integrate_ep integrate_Ep'
  []
  [predictor]
    type = ConstantExtrapolationPredictor
    unknowns_SR2 = 'plastic_strain'
    unknowns_Scalar = 'equivalent_plastic_strain flow_rate'
  []
  [return_map]
    type = ImplicitUpdate
    equation_system = 'eq_sys'
    solver = 'newton'
    predictor = 'predictor'
  []
  [model]
    type = ComposedModel
    models = 'return_map elastic_strain elasticity'
    additional_outputs = 'plastic_strain equivalent_plastic_strain'
  []
[]
[EquationSystems]
  [eq_sys]
    type = NonlinearSystem
    model = 'surface'
    unknowns = 'plastic_strain equivalent_plastic_strain flow_rate'
    residuals = 'plastic_strain_residual equivalent_plastic_strain_residual complementarity'
  []
[]
[Solvers]
  [newton]
    type = Newton
    linear_solver = 'lu'
  []
  [lu]
    type = DenseLU
  []
[]
"""

SUM_SLIP = """
[Models]
  [model]
    type = SumSlipRates
  []
[]
"""


def _write(tmp_path_factory, name: str, text: str):
    p = tmp_path_factory.mktemp("jit") / f"{name}.i"
    p.write_text(textwrap.dedent(text).lstrip())
    return p


def _rand(*shape, seed=0, scale=1e-3):
    g = torch.Generator().manual_seed(seed)
    return scale * (torch.rand(*shape, generator=g, dtype=F64) - 0.5)


def _close(a, b, rtol=1e-12, atol=0.0):
    atol = max(atol, rtol * float(b.abs().max())) + 1e-300
    torch.testing.assert_close(a, b, rtol=rtol, atol=atol)


def _close_tree(a, b, **tol):
    la, lb = torch.utils._pytree.tree_flatten(a), torch.utils._pytree.tree_flatten(b)
    assert la[1] == lb[1]
    for x, y in zip(la[0], lb[0], strict=True):
        _close(x.detach(), y.detach(), **tol)


# ---------------------------------------------------------------------- elasticity (inductor)
@pytest.fixture(scope="module")
def elastic(tmp_path_factory):
    """(eager model, compiled model, compile counter) -- inductor, the default backend."""
    src = _write(tmp_path_factory, "elasticity", ELASTICITY)
    eager = load_model(src, "elasticity")
    counter = CompileCounterWithBackend("inductor")
    return eager, neml2.compile(load_model(src, "elasticity"), backend=counter), counter


def test_facade_and_type(elastic):
    _, jit, _ = elastic
    assert neml2.compile is neml2.models.compile
    assert isinstance(jit, CompiledModel) and isinstance(jit, torch.nn.Module)


def test_surface_mirrors_eager(elastic):
    eager, jit, _ = elastic
    assert jit.input_names == eager.input_names == ["strain"]
    assert jit.output_names == eager.output_names == ["stress"]
    assert jit.input_base_shapes == [(6,)] and jit.output_base_shapes == [(6,)]
    assert jit.dtype == F64 and jit.device.type == "cpu"
    assert [n for n, _ in jit.named_parameters()] == [n for n, _ in eager.named_parameters()]


def test_forward_one_graph_for_every_batch(elastic):
    eager, jit, counter = elastic
    before = counter.frame_count
    for batch in [(1,), (7,), (100,), (3, 4), ()]:
        x = {"strain": _rand(*batch, 6, seed=len(batch))}
        with torch.no_grad():
            y = jit.forward(x)
        assert y["stress"].shape == (*batch, 6)
        _close(y["stress"], eager.forward(x)["stress"].detach())
    # one graph for forward (no-grad mode), compiled at batch 1, reused for the others
    assert counter.frame_count - before == 1


def test_jacobian_and_jvp(elastic):
    eager, jit, counter = elastic
    with torch.no_grad():
        for n in (1, 7):
            x, t = {"strain": _rand(n, 6, seed=n)}, {"strain": _rand(n, 6, seed=n + 1)}
            _close_tree(jit.jacobian(x), eager.jacobian(x))
            _close_tree(jit.jvp(x, t), eager.jvp(x, t))
        before = counter.frame_count
        x, t = {"strain": _rand(33, 6, seed=3)}, {"strain": _rand(33, 6, seed=4)}
        _close_tree(jit.jacobian(x), eager.jacobian(x))
        _close_tree(jit.jvp(x, t), eager.jvp(x, t))
        assert counter.frame_count == before


def test_parameter_gradients_match_eager(elastic):
    """Autograd w.r.t. parameters through the compiled graph (calibration)."""
    eager, jit, _ = elastic
    x = {"strain": _rand(5, 6, seed=9)}
    grads = []
    for m in (eager, jit):
        m.zero_grad()
        _, J = m.jacobian(x)
        (m.forward(x)["stress"].square().sum() + J["stress"]["strain"].sum()).backward()
        grads.append({n: p.grad.clone() for n, p in m.named_parameters()})
    assert set(grads[0]) == {"E", "nu"}
    for n in grads[0]:
        _close(grads[1][n], grads[0][n])


def test_set_parameter(elastic):
    eager, jit, _ = elastic
    x = {"strain": _rand(4, 6, seed=11)}
    with torch.no_grad():
        jit.set_parameter("E", torch.tensor(150e3, dtype=F64))
        eager.set_parameter("E", torch.tensor(150e3, dtype=F64))
        _close(jit.forward(x)["stress"], eager.forward(x)["stress"])
        with pytest.raises(FatalError, match="no parameter 'G'"):
            jit.set_parameter("G", 1.0)


def test_typed_module_surface(elastic):
    eager, jit, _ = elastic
    e = SR2(_rand(6, 6, seed=12))
    with torch.no_grad():
        y = jit(e)
        assert isinstance(y, SR2)
        _close(y.data, eager(e).data)
        v = {"strain": {"d": SR2(_rand(1, 6, 6, seed=13))}}
        *outs, v_out = jit(e, v=v)
        *outs_e, v_out_e = eager(e, v=v)
        _close(outs[0].data, outs_e[0].data)
        _close(v_out["stress"]["d"].data, v_out_e["stress"]["d"].data)


def test_bad_inputs_are_fatal(elastic):
    _, jit, _ = elastic
    with pytest.raises(FatalError, match="missing input"):
        jit.forward({})
    with pytest.raises(FatalError, match="unknown input"):
        jit.forward({"strain": _rand(2, 6), "stress": _rand(2, 6)})
    with pytest.raises(FatalError, match="input 'strain' has shape"):
        jit.forward({"strain": _rand(2, 5)})
    with pytest.raises(FatalError, match="tangent for unknown input"):
        jit.jvp({"strain": _rand(2, 6)}, {"temperature": _rand(2)})


def _holding(data):
    """An SR2 holding *data* as it is (its constructor turns int tensors into floats)."""
    x = SR2(torch.zeros(data.shape, dtype=F64))
    x.data = data
    return x


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64, torch.complex128])
def test_input_of_another_dtype_is_rejected_before_compiling(elastic, dtype):
    """As py-eager (docs/routes.md, "Input dtype and device"); no graph is compiled for it."""
    _, jit, counter = elastic
    before = counter.frame_count
    bad, good = _rand(2, 6).to(dtype), _rand(2, 6)
    frag = f"input 'strain' has dtype {dtype} (on cpu) but the model computes in torch.float64"
    for call in (
        lambda: jit.forward({"strain": bad}),
        lambda: jit.jacobian({"strain": bad}),
        lambda: jit.jvp({"strain": bad}, {"strain": good}),
        lambda: jit(_holding(bad)),
    ):
        with pytest.raises(FatalError) as info:
            call()
        assert "input 'strain' has dtype" in str(info.value) and "torch.float64" in str(info.value)
    with pytest.raises(FatalError, match=frag.replace("(", r"\(").replace(")", r"\)")):
        jit.forward({"strain": bad})
    with pytest.raises(FatalError, match=f"tangent 'strain' has dtype {dtype}"):
        jit.jvp({"strain": good}, {"strain": bad})
    assert counter.frame_count == before


def test_input_on_another_device_and_misspelt_names(elastic):
    _, jit, counter = elastic
    before = counter.frame_count
    e, meta = _rand(2, 6), _rand(2, 6).to("meta")
    with pytest.raises(FatalError, match=r"input 'strain' is on meta \(dtype torch.float64\)"):
        jit.forward({"strain": meta})
    with pytest.raises(FatalError, match=r"tangent 'strain' is on meta"):
        jit.jvp({"strain": e}, {"strain": meta})
    with pytest.raises(FatalError, match=r"input 'strain' is on meta"):
        jit(SR2(meta))
    with pytest.raises(FatalError, match=r"unknown input 'strian' \(did you mean 'strain'\?\)"):
        jit.forward({"strian": e})
    with pytest.raises(
        FatalError, match=r"tangent for unknown input 'strian' \(did you mean 'strain'\?\)"
    ):
        jit.jvp({"strain": e}, {"strian": e})
    with pytest.raises(
        FatalError, match=r"v= tangent for unknown input 'strian' \(did you mean 'strain'\?\)"
    ):
        jit(SR2(e), v={"strian": {"d": SR2(_rand(1, 2, 6))}})
    assert counter.frame_count == before


# ---------------------------------------------------------------------- errors at compile
class _Untraceable(Model):
    """Branches in Python on a tensor value: a graph break, so a fullgraph compile fails."""

    fields = (input("x", Scalar), output("y", Scalar))

    def forward(self, x):
        if bool((x.data > 0).all()):
            return x * 2.0
        return x


def test_not_a_model_is_fatal():
    with pytest.raises(FatalError, match=r"expected a neml2\.models\.Model"):
        neml2.compile(torch.nn.Linear(2, 2))


def test_unknown_backend_is_fatal(elastic):
    with pytest.raises(FatalError, match="unknown backend 'nope'"):
        neml2.compile(elastic[0], backend="nope")


def test_bad_sub_batch_option_is_fatal(elastic):
    with pytest.raises(FatalError, match="sub_batch names unknown input"):
        neml2.compile(elastic[0], sub_batch={"strian": 1})


def test_untraceable_model_is_fatal():
    jit = neml2.compile(_Untraceable(), backend="eager")
    with pytest.raises(FatalError, match=r"_Untraceable.*\(forward\) cannot be compiled"):
        jit.forward({"x": torch.ones(3, dtype=F64)})


def _fake_inductor(monkeypatch, fail_with: str | None):
    """torch.compile in neml2.models._jit replaced by a recorder: a graph compiled with
    the default options raises *fail_with* (as Inductor would) on its first call; any
    other compile runs the body eagerly. Returns the recorded options."""
    import neml2.models._jit as jit_mod

    seen: list[dict | None] = []

    def fake_compile(fn, **kw):
        # the Inductor backend carries its options (MendedInductor.config)
        options = getattr(kw.get("backend"), "config", None) or kw.get("options")
        seen.append(options)
        if fail_with is not None and not (options or {}):

            def failing(*a, **k):
                raise torch._dynamo.exc.BackendCompilerFailed(
                    "inductor", RuntimeError(fail_with), None
                )

            return failing
        return fn

    monkeypatch.setattr(jit_mod.torch, "compile", fake_compile)
    return seen


def test_pattern_matcher_fallback(monkeypatch, tmp_path_factory):
    """The torch 2.13 FakeTensorUpdater failure recompiles that graph once without
    Inductor's pattern passes (with a warning); the result is the eager one."""
    src = _write(tmp_path_factory, "elasticity_fb", ELASTICITY)
    eager = load_model(src, "elasticity")
    seen = _fake_inductor(
        monkeypatch,
        "A subgraph argument other than striding has been modified; FakeTensorUpdater "
        "cannot update this argument!",
    )
    jit = neml2.compile(load_model(src, "elasticity"))
    x = {"strain": _rand(5, 6)}
    with pytest.warns(RuntimeWarning, match="without them"):
        y = jit.forward(x)
    _close(y["stress"], eager.forward(x)["stress"].detach())
    assert jit.recompiled_without_patterns == ["forward"]
    assert seen[-1] == {"pattern_matcher": False}
    jit.forward(x)  # the replacement stays: no second warning, no third compile
    assert jit.recompiled_without_patterns == ["forward"]


def test_other_compile_failures_are_not_retried(monkeypatch, tmp_path_factory):
    src = _write(tmp_path_factory, "elasticity_nofb", ELASTICITY)
    _fake_inductor(monkeypatch, "some other lowering error")
    jit = neml2.compile(load_model(src, "elasticity"))
    with pytest.raises(FatalError, match=r"\(forward\) cannot be compiled") as e:
        jit.forward({"strain": _rand(5, 6)})
    assert "some other lowering error" in str(e.value.__cause__)
    assert jit.recompiled_without_patterns == []


class _Constant(Model):
    """An output that depends on no input: its data has no batch axis."""

    fields = (input("x", Scalar), output("y", SR2))

    def forward(self, x):
        return SR2(torch.arange(6, dtype=x.dtype))


@pytest.mark.parametrize("batch", [(1,), (5,), (6,), (2, 3)])
def test_output_that_depends_on_no_input_has_the_batch(batch):
    """Every output, its jvp and its blocks come back at (*B, ...), also when the batch
    size equals the output's first base axis (6 points of an SR2 once came back as (6,),
    the batch axes dropped)."""
    jit = neml2.compile(_Constant(), backend="eager")
    x = {"x": torch.ones(*batch, dtype=F64)}
    with torch.no_grad():
        y = jit.forward(x)["y"]
        (y2, J), (y3, d) = jit.jacobian(x), jit.jvp(x, {"x": torch.ones(*batch, dtype=F64)})
    assert y.shape == y2["y"].shape == y3["y"].shape == (*batch, 6)
    _close(y, torch.arange(6, dtype=F64).expand(*batch, 6))
    assert J["y"]["x"].shape == d["y"].shape == (*batch, 6)
    assert bool((J["y"]["x"] == 0).all()) and bool((d["y"] == 0).all())


# ---------------------------------------------------------------------- sub-batch
def test_sub_batch_raw_inputs(tmp_path_factory):
    """Per-slip inputs as raw (*B, nslip) tensors, declared with sub_batch=."""
    src = _write(tmp_path_factory, "sum_slip", SUM_SLIP)
    eager = load_model(src, "model")
    counter = CompileCounterWithBackend("inductor")
    jit = neml2.compile(load_model(src, "model"), backend=counter, sub_batch={"slip_rates": 1})
    with torch.no_grad():
        for n in (1, 7):
            r = _rand(n, 12, seed=n, scale=1.0)
            want = eager.forward({"slip_rates": Scalar(r, 1)})["sum_slip_rates"]
            got = jit.forward({"slip_rates": r})["sum_slip_rates"]
            assert got.shape == (n,)
            _close(got, want)
            _close(got, r.abs().sum(-1))
            _close_tree(
                jit.jacobian({"slip_rates": r}), eager.jacobian({"slip_rates": Scalar(r, 1)})
            )
    assert counter.frame_count == 2  # forward + jacobian, each once


# ---------------------------------------------------------------------- implicit (Newton)
@pytest.fixture(scope="module")
def j2(tmp_path_factory):
    """Backend "eager": Dynamo traces the Newton while_loop with a dynamic batch, without
    Inductor's codegen (minutes for an implicit model on a busy CPU); the route matrix
    (tests-integration/routes) checks Inductor on implicit models."""
    src = _write(tmp_path_factory, "j2", J2)
    counter = CompileCounterWithBackend("eager")
    jit = neml2.compile(load_model(src, "model"), backend=counter)
    return load_model(src, "model"), jit, counter


def _j2_inputs(n, seed=0):
    x = {
        "E": _rand(n, 6, seed=seed, scale=1e-2),
        "t": torch.ones(n, dtype=F64),
        "t~1": torch.zeros(n, dtype=F64),
        "plastic_strain~1": _rand(n, 6, seed=seed + 1, scale=1e-4),
        "equivalent_plastic_strain~1": _rand(n, seed=seed + 2, scale=1e-4).abs(),
        "flow_rate~1": torch.zeros(n, dtype=F64),
    }
    return x


def test_implicit_forward_and_jacobian(j2):
    eager, jit, counter = j2
    with torch.no_grad():
        for n in (1, 7, 50):
            x = _j2_inputs(n, seed=n)
            # Newton's stopping test sees different round-off: values agree to roundoff of
            # the converged solution, not bit for bit (e.g. a flow rate of 1e-19 vs 8e-19)
            _close_tree(jit.forward(x), eager.forward(x), rtol=1e-10, atol=1e-12)
            _close_tree(jit.jacobian(x), eager.jacobian(x), rtol=1e-10, atol=1e-12)
    assert counter.frame_count == 2  # one graph each, batch 1 included


def test_implicit_nonconvergence_is_recoverable(j2):
    _, jit, _ = j2
    x = _j2_inputs(3, seed=5)
    x["E"] = x["E"] * float("nan")
    with (
        torch.no_grad(),
        pytest.raises(ConvergenceError, match="did not converge at 3 of 3 points"),
    ):
        jit.forward(x)


def test_implicit_nonconvergence_names_the_points(j2):
    """py-jit returns every solve's per-point status from the graph: the error names the
    failed point, the iterations and a NaN worst residual, like py-eager."""
    eager, jit, _ = j2
    x = _j2_inputs(4, seed=6)
    x["E"][2, 1] = float("nan")
    with torch.no_grad(), pytest.raises(ConvergenceError) as e:
        jit.forward(x)
    err = e.value
    assert err.failed_indices == (2,)
    assert err.n_points == 4
    assert err.iterations is not None and 0 < err.iterations < 25
    assert math.isnan(err.worst_residual)
    assert "(py-jit): Newton did not converge at 1 of 4 points" in str(err)
    with torch.no_grad(), pytest.raises(ConvergenceError) as e2:
        eager.forward(x)
    assert e2.value.failed_indices == err.failed_indices


def test_implicit_jvp_with_a_tangent_on_one_input(j2):
    """A tangent's shape is checked against its own input, not the last one declared
    (a tangent on the SR2 ``E`` was once checked against a trailing Scalar)."""
    eager, jit, _ = j2
    assert len(next(reversed(jit.input_spec.values())).BASE_SHAPE) == 0
    with torch.no_grad():
        for n in (1, 5):
            x, t = _j2_inputs(n, seed=n), {"E": _rand(n, 6, seed=n + 7)}
            _close_tree(jit.jvp(x, t), eager.jvp(x, t), rtol=1e-10, atol=1e-12)


# A one-unknown implicit update, r = x - a - b: the smallest in-graph Newton solve.
SHIFT = """
[Models]
  [residual]
    type = ScalarLinearCombination
    from = 'x a b'
    to = 'x_residual'
    weights = '1 -1 -1'
  []
  [predictor]
    type = ConstantExtrapolationPredictor
    unknowns_Scalar = 'x'
  []
  [model]
    type = ImplicitUpdate
    equation_system = 'eq_sys'
    solver = 'newton'
    predictor = 'predictor'
  []
[]
[EquationSystems]
  [eq_sys]
    type = NonlinearSystem
    model = 'residual'
    unknowns = 'x'
  []
[]
[Solvers]
  [newton]
    type = Newton
    linear_solver = 'lu'
  []
  [lu]
    type = DenseLU
  []
[]
"""


def test_inputs_that_are_views_of_one_tensor(tmp_path_factory):
    """Inputs sliced from one tensor (a history's steps k and k-1) reach the graph as
    separate tensors: through AOTAutograd (aot_eager, what Inductor builds on) views of one
    storage became a synthetic base and the in-graph Newton loop refused them ("cond_fn
    might be aliasing the input or the output!"). The caller's tensors stay untouched."""
    src = _write(tmp_path_factory, "shift", SHIFT)
    jit = neml2.compile(load_model(src, "model"), backend="aot_eager")
    hist = _rand(2, 5, seed=3)
    x = {"a": hist[0], "b": hist[1], "x~1": torch.zeros(5, dtype=F64)}
    before = hist.clone()
    with torch.no_grad():
        out = jit.forward(x)
        typed = jit(Scalar(hist[0]), Scalar(hist[1]), Scalar(torch.zeros(5, dtype=F64)))
    want = hist[0] + hist[1]
    torch.testing.assert_close(out["x"], want, rtol=1e-12, atol=1e-14)
    torch.testing.assert_close(typed.data, want, rtol=1e-12, atol=1e-14)
    torch.testing.assert_close(hist, before, rtol=0, atol=0)


def test_batch_axis_gets_the_size_hint(elastic):
    """Inductor plans loops with the size hint: 1024 (parallel kernels) on the batch axis
    of a typed call, unless a tangent's static batch is compared with it."""
    from neml2.models._jit import BATCH_HINT

    eager, jit, _ = elastic
    e = SR2(_rand(6, 6, seed=21))
    with torch.no_grad():
        _close(jit(e).data, eager(e).data)
        assert e.data._dynamo_hint_overrides == {0: BATCH_HINT} == {0: 1024}
        jit(e, v={"strain": {"d": SR2(_rand(1, 6, 6, seed=22))}})
        assert e.data._dynamo_hint_overrides == {}


# A backward-Euler reaction whose rate coefficient is another model's output, so the
# Newton body evaluates a leaf with a promoted parameter (ContractingGeometry's coef).
PROMOTED_IN_NEWTON = """
[Models]
  [coef]
    type = ArrheniusParameter
    reference_value = 0.04
    activation_energy = 2e4
    ideal_gas_constant = 8.314
    temperature = 'T'
  []
  [rate]
    type = ContractingGeometry
    coef = 'coef'
    order = 1.5
    conversion_degree = 'alpha'
    reaction_rate = 'alpha_rate'
  []
  [integrate]
    type = ScalarBackwardEulerTimeIntegration
    variable = 'alpha'
  []
  [reaction]
    type = ComposedModel
    models = 'coef rate integrate'
  []
[]
[EquationSystems]
  [eq]
    type = NonlinearSystem
    model = 'reaction'
    unknowns = 'alpha'
  []
[]
[Solvers]
  [newton]
    type = Newton
    linear_solver = 'lu'
  []
  [lu]
    type = DenseLU
  []
[]
[Models]
  [model]
    type = ImplicitUpdate
    equation_system = 'eq'
    solver = 'newton'
  []
[]
"""


def test_promoted_parameter_inside_the_newton_body(tmp_path_factory):
    """A promoted parameter's value reaches the leaf's forward without being written onto
    the model: inside the traced while_loop of the Newton solve, such a write is a side
    effect Dynamo refuses ("HOP: Unsafe side effect ... ContractingGeometry")."""
    src = _write(tmp_path_factory, "promoted_newton", PROMOTED_IN_NEWTON)
    eager = load_model(src, "model")
    jit = neml2.compile(load_model(src, "model"), backend="eager")
    g = torch.Generator().manual_seed(3)
    for n in (1, 6):
        x = {
            "T": 600.0 + 300.0 * torch.rand(n, generator=g, dtype=F64),
            "alpha~1": 0.5 * torch.rand(n, generator=g, dtype=F64),
            "t": torch.full((n,), 100.0, dtype=F64),
            "t~1": torch.zeros(n, dtype=F64),
        }
        with torch.no_grad():
            _close_tree(jit.forward(x), eager.forward(x), rtol=1e-10, atol=1e-12)
            _close_tree(jit.jacobian(x), eager.jacobian(x), rtol=1e-10, atol=1e-12)


def test_promoted_parameter_has_no_value_outside_forward(tmp_path_factory):
    model = load_model(_write(tmp_path_factory, "promoted_newton", PROMOTED_IN_NEWTON), "model")
    m = next(x for x in model.modules() if type(x).__name__ == "ContractingGeometry")
    assert m.input_names == ["alpha", "coef"]
    with pytest.raises(RuntimeError, match="parameter 'coef' is given by variable 'coef'"):
        m.param("coef")
    assert float(m.param("order").data) == 1.5


def test_each_compiled_model_has_its_own_dynamo_identity(tmp_path_factory):
    """Dynamo keys what it learns about a frame's arguments (automatic dynamic shapes
    and ints) by the code's file, first line and name, not by the code object: two
    CompiledModels whose graph functions shared a name shared that state, and a per-slip
    crystal model compiled after a J2 model failed in Inductor (one process, default CI:
    tests-integration/routes/test_jit_one_process.py). Each copy has its own name."""
    from torch._dynamo.pgo import CodeId

    src = _write(tmp_path_factory, "elasticity_ids", ELASTICITY)
    a, b = (neml2.compile(load_model(src, "elasticity"), backend="eager") for _ in range(2))
    ids = set()
    for jit in (a, b):
        for op, fn in jit._compiled.items():
            code = fn._torchdynamo_orig_callable.__code__
            assert code.co_name.startswith(f"_{op}_graph_")
            ids.add(CodeId.make(code))
    assert len(ids) == 2 * len(a._compiled)
    x = {"strain": _rand(3, 6)}
    torch.testing.assert_close(a.forward(x)["stress"], b.forward(x)["stress"])
