"""A compiled model with a sub-batch input, loaded through its HIT stub (the ``AOTIModel``
shim): raw name-keyed tensors are ``(*B, *sub, *base)``, as the runtime reads them.

One small explicit compile per test session (a mean over 4 grains).
"""

from __future__ import annotations

from types import SimpleNamespace

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


@pytest.mark.parametrize("where", ["file", "override"])
def test_the_documented_n_form_declares_the_sub_batch(tmp_path, monkeypatch, where, capsys):
    """``x = '(N; 4)'`` (docs/aoti.md: N is the batch, of any size) declares the sub-batch
    shape (4,) as ``'(2; 4)'`` does, in the file or as a ``+Settings/...`` override. The
    compile itself is replaced by a recorder."""
    from neml2.compiler import _compile, main

    seen = []

    def record(model, opts, *args, **kwargs):
        seen.append(opts)
        return SimpleNamespace(graphs=[], cache_hits=0)

    monkeypatch.setattr(_compile, "compile_model", record)
    text = MEAN.replace(f"'(2; {GRAINS})'", f"'(N; {GRAINS})'")
    override = []
    if where == "override":
        text = text[: text.index("[Settings]")]
        override = [f"+Settings/example_batch_shape/x='(N; {GRAINS})'"]
    (tmp_path / "mean.i").write_text(text)
    argv = [str(tmp_path / "mean.i"), "mean", "-o", str(tmp_path), "--no-cache", "-q"]
    assert main([*argv, *override]) == 0
    (opts,) = seen
    assert opts.sub_batch == {"x": (GRAINS,)}
    # a size that is neither N nor a number: one line that shows the form
    (tmp_path / "bad.i").write_text(MEAN.replace(f"'(2; {GRAINS})'", "'(B; 4)'"))
    assert main([str(tmp_path / "bad.i"), "mean", "--no-cache", "-q"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("neml2-compile: error: ") and len(err.splitlines()) == 1
    assert "'B' in the batch of '(B; 4)' is not a size; the form is '(N; 12)'" in err
