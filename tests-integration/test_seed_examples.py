"""The Python code examples of the specification pages (``shared/seeds/000_*`` to
``003_*``), run as written except for the file paths they name.

* 000: the hello-world input file (``tutorials/models/running_your_first_model/input.i``
  there; ``input.i`` in a temporary directory here), loaded and evaluated on py-eager;
* 002: py-aoti, both entry points (the HIT stub through ``neml2.load_model`` and the
  bare ``neml2.aoti.Model`` on the per-device metadata path), forward / jvp / Jacobian
  and the mutable promoted-parameter map; the artifact is compiled from the 000 input
  with ``-d stress:strain -p E`` into ``aoti/`` (once per session, through the content
  cache in build/aoti-cache);
* 003: the forward contract's three call forms (``model(*inputs)``, ``v=``, ``v2=``) on
  the 000 model.

The C++ example of 001 is the ctest ``cpp/tests/test_eager_example.cpp``; the authoring
contract of 003 is exercised by ``seed_models/``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch

import neml2

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / "build" / "aoti-cache"

#: 000: the minimal hello-world input file, verbatim
HELLO = """# Minimal hello-world NEML2 input file.
# A single linear isotropic elastic model named "elasticity":
#   E  = 200 GPa
#   nu = 0.3
# Maps a symmetric strain tensor (SR2) to a symmetric stress tensor (SR2).
[Models]
  [elasticity]
    type = LinearIsotropicElasticity
    coefficients      = '200e3          0.3'
    coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'
  []
[]
"""


def _stress(strain: torch.Tensor, E: float = 200e3, nu: float = 0.3) -> torch.Tensor:
    """Linear isotropic elasticity on Mandel 6-vectors."""
    lam, mu = E * nu / ((1 + nu) * (1 - 2 * nu)), E / (2 * (1 + nu))
    tr = strain[..., :3].sum(-1, keepdim=True)
    return 2 * mu * strain + lam * tr * torch.tensor([1.0, 1, 1, 0, 0, 0], dtype=strain.dtype)


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    d = tmp_path_factory.mktemp("seeds")
    (d / "input.i").write_text(HELLO)
    return d


def test_000_hello_world(workdir):
    model = neml2.load_model(workdir / "input.i", "elasticity")
    strain = torch.rand(4, 6, dtype=torch.float64) * 1e-3
    torch.testing.assert_close(model.forward({"strain": strain})["stress"], _stress(strain))


def test_003_forward_contract(workdir):
    from neml2.tensors import SR2

    model = neml2.load_model(workdir / "input.i", "elasticity")
    inputs = (SR2(torch.rand(3, 6, dtype=torch.float64) * 1e-3),)
    sensitivity_matrix = SR2(torch.eye(6, dtype=torch.float64).unsqueeze(1))  # K = 6
    # Pure forward — returns outputs only.
    out = model(*inputs)
    # Forward + Jacobian pushforward —
    *vals, v_out = model(*inputs, v={"strain": {"leaf": sensitivity_matrix}})
    # Forward + first- and second-order Jacobian pushforward (opt-in) —
    v = {"strain": {"leaf": sensitivity_matrix}}
    v2 = {}
    *vals, v_out, v2_out = model(*inputs, v=v, v2=v2)
    torch.testing.assert_close(vals[0].data, out.data)
    assert v_out["stress"]["leaf"].data.shape == (6, 3, 6)
    assert v2_out["stress"] == {}  # linear: the second derivative is a structural zero
    torch.testing.assert_close(
        v_out["stress"]["leaf"].data[:, 0], _stress(torch.eye(6, dtype=torch.float64))
    )


@pytest.fixture(scope="module")
def aoti_dir(workdir):
    from neml2.compiler import CompileOptions, compile_file

    opts = CompileOptions.from_strings(
        "elasticity", derivatives=["stress:strain"], parameters=["E"]
    )
    compile_file(workdir / "input.i", opts, workdir / "aoti", cache_dir=CACHE)
    return workdir


def test_002_py_aoti(aoti_dir):
    cwd = os.getcwd()
    os.chdir(aoti_dir)
    try:
        strain = torch.rand(5, 6, dtype=torch.float64) * 1e-3
        tangent = torch.rand(5, 6, dtype=torch.float64)
        # To drive the artifact through the normal HIT machinery
        model = neml2.load_model("aoti/elasticity_aoti.i", "elasticity")
        torch.testing.assert_close(model.forward({"strain": strain})["stress"], _stress(strain))
        # the bare runtime, from a per-device metadata path
        from neml2.aoti import Model

        binding = Model("aoti/elasticity/cpu/elasticity_meta.json")
        # Forward.
        out = binding.forward({"strain": strain.data})
        # JVP
        out, jvp_out = binding.jvp({"strain": strain.data}, {"strain": tangent.data})
        # Jacobian as unflattened variable-pair blocks
        out, J = binding.jacobian({"strain": strain.data})
        torch.testing.assert_close(out["stress"], _stress(strain))
        torch.testing.assert_close(jvp_out["stress"], _stress(tangent))
        assert J["stress"]["strain"].shape == (5, 6, 6)
        # The promoted-parameter map is mutable; the next call sees the new value:
        binding.named_parameters()["E"].fill_(100e3)
        out = binding.forward({"strain": strain.data})
        torch.testing.assert_close(out["stress"], _stress(strain, E=100e3))
    finally:
        os.chdir(cwd)
