"""neml2.aoti.cpp_eager: the cpp-eager class (libneml2_eager) driven from a Python host.

The C++ class joins this interpreter and calls the Python models, so its results must
equal py-eager's; the closed form checks elasticity independently. Needs neml2.models
(absent from the deployment pair: those tests are marked needs_sibling), except the checks that
``import neml2.aoti`` never loads it and that its former name ``neml2.aoti._eager``
still imports, with a DeprecationWarning naming the new one.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[3]
INPUTS = ROOT / "cpp" / "tests" / "eager"
F64 = torch.float64

_no_models = pytest.mark.skipif(
    importlib.util.find_spec("neml2.models") is None,
    reason="neml2.models is not installed (deployment pair): cpp-eager has no models to run",
)


def needs_models(test):
    """neml2.models is no dependency of this package: marked needs_sibling, the test is
    deselected in the package's isolated session and run by the integration session."""
    return pytest.mark.needs_sibling(_no_models(test))


def test_import_neml2_aoti_does_not_load_eager():
    names = ["neml2.aoti.cpp_eager", "neml2.aoti._cpp_eager", "neml2.aoti._eager"]
    code = f"import sys, neml2.aoti; print([n for n in {names!r} if n in sys.modules])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_former_name_warns_and_gives_the_same_class():
    from neml2.aoti import cpp_eager

    sys.modules.pop("neml2.aoti._eager", None)  # imported afresh: the warning is at import
    with pytest.warns(DeprecationWarning, match=r"neml2\.aoti\._eager .*neml2\.aoti\.cpp_eager"):
        old = importlib.import_module("neml2.aoti._eager")
    assert old.Model is cpp_eager.Model
    assert old.python_interpreter is cpp_eager.python_interpreter
    assert cpp_eager.Model.__module__ == "neml2.aoti.cpp_eager"


@pytest.fixture(scope="module")
def eager():
    from neml2.aoti import cpp_eager

    return cpp_eager


def stiffness(E: float, nu: float) -> torch.Tensor:
    """Isotropic elasticity in Mandel notation, (6, 6)."""
    lam = E * nu / ((1 + nu) * (1 - 2 * nu))
    mu = E / (2 * (1 + nu))
    C = 2 * mu * torch.eye(6, dtype=F64)
    C[:3, :3] += lam
    return C


@needs_models
def test_elasticity_closed_form(eager):
    m = eager.Model(str(INPUTS / "elasticity.i"), "model")
    assert m.input_names == ["strain"] and m.output_names == ["stress"]
    assert m.variable_types == {"strain": "SR2", "stress": "SR2"}
    assert (m.input_types, m.output_types) == ({"strain": "SR2"}, {"stress": "SR2"})
    assert m.input_base_shapes == [(6,)] and m.output_base_shapes == [(6,)]
    assert m.input_sub_batch_shapes == [()] and m.output_sub_batch_shapes == [()]
    assert m.input_sub_batch_ndim == {}
    assert m.derivatives == [("stress", "strain")]
    assert (m.device, m.dtype) == (torch.device("cpu"), F64)
    assert m.path == INPUTS / "elasticity.i"
    assert "host" in eager.python_interpreter()  # joined this interpreter, none embedded
    C = stiffness(100.0, 0.3)
    for batch in (1, 4):
        eps = torch.linspace(-0.01, 0.02, batch * 6, dtype=F64).reshape(batch, 6)
        sigma = eps @ C.T
        torch.testing.assert_close(m.forward({"strain": eps})["stress"], sigma)
        out, J = m.jacobian({"strain": eps})
        torch.testing.assert_close(out["stress"], sigma)
        torch.testing.assert_close(J["stress"]["strain"], C.expand(batch, 6, 6))
        t = torch.ones(batch, 6, dtype=F64)
        _, dy = m.jvp({"strain": eps}, {"strain": t})
        torch.testing.assert_close(dy["stress"], t @ C.T)


@needs_models
def test_parameters(eager):
    m = eager.Model(str(INPUTS / "elasticity.i"), "model")
    eps = torch.full((1, 6), 1e-3, dtype=F64)
    ref = m.forward({"strain": eps})["stress"]
    p = m.named_parameters()
    assert set(p) == {"E", "nu"}
    p["E"].fill_(200.0)  # shares storage with the model's parameter
    torch.testing.assert_close(m.forward({"strain": eps})["stress"], 2 * ref)
    m.set_parameter("E", torch.tensor(50.0, dtype=F64))
    torch.testing.assert_close(m.forward({"strain": eps})["stress"], 0.5 * ref)
    torch.testing.assert_close(m.named_parameters()["E"], torch.tensor(50.0, dtype=F64))


@needs_models
def test_crystal_sub_batch_matches_py_eager(eager):
    import neml2
    from neml2.tensors import Scalar

    path = INPUTS / "crystal.i"
    m = eager.Model(str(path), "model")
    assert m.input_sub_batch_ndim == {"dislocation_density~1": 1}
    # one axis of a size only the call fixes (-1): the input's, and that of its output
    subs = dict(zip(m.input_names, m.input_sub_batch_shapes, strict=True))
    assert subs == {n: (-1,) if n == "dislocation_density~1" else () for n in m.input_names}
    subs = dict(zip(m.output_names, m.output_sub_batch_shapes, strict=True))
    assert subs == {n: (-1,) if n == "dislocation_density" else () for n in m.output_names}
    ref = neml2.load_model(path, "model")
    g = torch.Generator().manual_seed(3)
    x = {
        "deformation_rate": torch.tensor([[0.1, -0.05, -0.05, 0.0, 0.01, 0.0]], dtype=F64),
        "vorticity": torch.tensor([[0.1, -0.05, -0.05]], dtype=F64),
        "dislocation_density~1": 10.0 + torch.rand(1, 12, generator=g, dtype=F64),
        "t": torch.full((1,), 0.1, dtype=F64),
        "t~1": torch.zeros(1, dtype=F64),
        "elastic_strain~1": torch.zeros(1, 6, dtype=F64),
        "orientation~1": 0.1 * torch.rand(1, 3, generator=g, dtype=F64),
    }
    typed = {**x, "dislocation_density~1": Scalar(x["dislocation_density~1"], 1)}
    t = {"deformation_rate": torch.ones(1, 6, dtype=F64)}
    # cpp-eager calls with autograd off; with it on, py-eager's ImplicitUpdate adds one
    # recorded Newton step (for parameter gradients), which moves values by ~1e-9.
    with torch.no_grad():
        y_ref = ref.forward(typed)
        dy_ref = ref.jvp(typed, t)[1]
    y = m.forward(x)
    assert y["dislocation_density"].shape == (1, 12)
    for n, v in y_ref.items():
        torch.testing.assert_close(y[n], v, rtol=1e-12, atol=1e-14)
    _, dy = m.jvp(x, t)
    for n, v in dy_ref.items():
        torch.testing.assert_close(dy[n], v, rtol=1e-12, atol=1e-14)


@needs_models
def test_errors(eager):
    from neml2.tensors import ConvergenceError, FatalError

    with pytest.raises(FatalError, match=r"no_such_file\.i"):
        eager.Model(str(INPUTS / "no_such_file.i"), "model")
    with pytest.raises(FatalError, match="'nope'"):
        eager.Model(str(INPUTS / "elasticity.i"), "nope")
    m = eager.Model(str(INPUTS / "elasticity.i"), "model")
    with pytest.raises(FatalError, match="stran"):
        m.forward({"strain": torch.zeros(1, 6, dtype=F64), "stran": torch.zeros(1, 6, dtype=F64)})
    with pytest.raises(FatalError, match=r"'strain'.*\(1, 5\)"):
        m.forward({"strain": torch.zeros(1, 5, dtype=F64)})

    j2 = eager.Model(str(INPUTS / "j2_noconverge.i"), "model")
    x = {
        n: torch.zeros(1, *s, dtype=F64)
        for n, s in zip(j2.input_names, j2.input_base_shapes, strict=True)
    }
    x["t"] += 1.0
    x["E"][0, 0] = 0.05  # far past yield: one Newton iteration cannot converge
    with pytest.raises(ConvergenceError) as e:
        j2.forward(x)
    assert e.value.recoverable


CONFORMANCE = Path(
    os.environ.get("NEML2_CONFORMANCE_DIR", ROOT / "tests-integration" / "conformance" / "data")
)
TAYLOR = (
    CONFORMANCE / "regression" / "solid_mechanics" / "crystal_plasticity" / "taylor" / "model.i"
)


@needs_models
@pytest.mark.skipif(not TAYLOR.is_file(), reason="the conformance data is not available")
def test_taylor_grains_given_as_sub_batch(eager):
    """Grains as a sub-batch axis named at load (the file declares none): = py-eager."""
    import neml2

    grains = {"slip_hardening": 1, "elastic_strain": 1, "orientation": 1}
    m = eager.Model(str(TAYLOR), "model", sub_batch_ndim=grains)
    assert m.input_sub_batch_ndim == {f"{n}~1": 1 for n in grains}
    ref = neml2.load_model(TAYLOR, "model")
    g = torch.Generator().manual_seed(5)
    x = {
        "control": torch.tensor([[1.0, 0, 0, 0, 0, 0]], dtype=F64),
        "prescribed": torch.tensor([[1e-3, 0, 0, 0, 0, 0]], dtype=F64),
        "vorticity": torch.zeros(1, 3, dtype=F64),
        "slip_hardening~1": torch.zeros(1, 5, dtype=F64),
        "t": torch.full((1,), 0.5, dtype=F64),
        "t~1": torch.zeros(1, dtype=F64),
        "elastic_strain~1": torch.zeros(1, 5, 6, dtype=F64),
        "orientation~1": 0.5 * torch.rand(1, 5, 3, generator=g, dtype=F64),
        "deformation_rate~1": torch.zeros(1, 6, dtype=F64),
        "target_cauchy_stress~1": torch.zeros(1, 6, dtype=F64),
    }
    typed = {n: ref.input_spec[n](v, 1) if n.split("~")[0] in grains else v for n, v in x.items()}
    with torch.no_grad():
        y_ref, J_ref = ref.jacobian(typed)
    y, J = m.jacobian(x)
    assert y["orientation"].shape == (1, 5, 3)
    for n, v in y_ref.items():
        torch.testing.assert_close(y[n], v, rtol=1e-12, atol=1e-14)
    for o, row in J_ref.items():
        for i, b in row.items():
            torch.testing.assert_close(J[o][i], b, rtol=1e-12, atol=1e-14)


@needs_models
def test_set_parameter_is_checked(eager):
    """cpp-eager's set_parameter is py-eager's (a tensor reaches it as given): a value
    that is not finite or not floating-point is refused naming the parameter, and the
    model keeps its value."""
    from neml2.tensors import FatalError

    m = eager.Model(str(INPUTS / "elasticity.i"), "model")
    E = float(m.named_parameters()["E"])
    with pytest.raises(FatalError, match=r"parameter 'E' has the non-finite value nan"):
        m.set_parameter("E", torch.tensor(float("nan"), dtype=F64))
    with pytest.raises(FatalError, match=r"the value has dtype torch\.int64, which is not float"):
        m.set_parameter("E", torch.tensor(3))
    assert float(m.named_parameters()["E"]) == E
