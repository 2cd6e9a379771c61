"""A compiled model with a sub-batch input, loaded through its HIT stub (the ``AOTIModel``
shim): raw name-keyed tensors are ``(*B, *sub, *base)``, as the runtime reads them.

One small explicit compile per test session (a mean over 4 grains).
"""

from __future__ import annotations

import pytest
import torch

import neml2
from neml2.compiler import compile_file
from neml2.compiler._options import CompileOptions
from neml2.tensors import Scalar

GRAINS = 4
MEAN = f"""
[Models]
  [mean]
    type = ScalarIntermediateMean
    from = 'x'
    to = 'xbar'
  []
[]

[Settings]
  [example_batch_shape]
    x = '(2; {GRAINS})'
  []
[]
"""


@pytest.fixture(scope="session")
def stub(tmp_path_factory, cache_dir):
    d = tmp_path_factory.mktemp("sub-batch")
    (d / "mean.i").write_text(MEAN)
    res = compile_file(d / "mean.i", CompileOptions.from_strings("mean"), d, cache_dir=cache_dir)
    assert res.metadata["inputs"][0]["sub_batch"] == [GRAINS]
    return res.stub_path


@pytest.mark.parametrize("n", [1, 3])
def test_raw_inputs_carry_the_artifacts_sub_batch(stub, n):
    m = neml2.load_model(stub, "mean")
    x = torch.rand(n, GRAINS, dtype=torch.float64)
    out = m.forward({"x": x})
    assert out["xbar"].shape == (n,)
    torch.testing.assert_close(out["xbar"], x.mean(-1), rtol=1e-14, atol=0)
    # typed with its sub-batch axis: the same
    typed = m.forward({"x": Scalar(x, 1)})
    torch.testing.assert_close(typed["xbar"], out["xbar"], rtol=0, atol=0)
