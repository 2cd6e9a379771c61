"""Any ``[Models]`` block name compiles: torch.fx writes the sub-models' attribute names
into the Python code of an exported graph (``self.model.yield.E`` was a SyntaxError when
AOT Inductor unlifted the graph), so a keyword or a name that is not an identifier is
registered under one (``yield_``, ``my_model``); messages keep the block names."""

from __future__ import annotations

import json

import pytest
import torch

from neml2.compiler import main
from neml2.compiler._compile import example_inputs, export_graph
from neml2.compiler._graphs import ForwardGraph, JacobianGraph
from neml2.models import load_string

NAMES = ["yield", "lambda", "class", "my-model", "2nd"]

COMPOSED = (
    "[Models]\n"
    "  [yield]\n    type = LinearIsotropicElasticity\n"
    "    coefficients = '200e3 0.3'\n"
    "    coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'\n  []\n"
    + "".join(
        f"  [{n}]\n    type = ScalarLinearCombination\n    from = 'a{i}'\n    to = 'c{i}'\n  []\n"
        for i, n in enumerate(NAMES[1:])
    )
    + f"  [material]\n    type = ComposedModel\n    models = '{' '.join(NAMES)}'\n  []\n[]\n"
)


def _inputs(m, n: int = 3) -> dict[str, torch.Tensor]:
    return dict(zip(m.input_spec, example_inputs(m, n, torch.float64, "cpu"), strict=True))


@pytest.mark.parametrize("graph", ["forward", "jacobian"])
def test_graphs_of_keyword_blocks_unlift(graph):
    """The step that failed, without AOT Inductor: export, then ``ep.module()`` (the fx
    code generation AOT Inductor starts with)."""
    m = load_string(COMPOSED, "material")
    pairs = [("stress", "strain")]
    g = ForwardGraph(m, []) if graph == "forward" else JacobianGraph(m, [], {}, pairs)
    ep = export_graph(g, example_inputs(m, 8, torch.float64, "cpu"), [])
    got = ep.module()(*_inputs(m).values())  # was: SyntaxError (self.model.yield.E)
    assert "p_model_yield__e" in ep.graph_module.code  # the attribute yield_
    want = m.forward(_inputs(m))
    for out, name in zip(got[: len(want)], m.output_spec, strict=True):
        torch.testing.assert_close(out, want[name])


def test_cli_compiles_a_keyword_block(tmp_path, cache_dir, capsys):
    """neml2-compile INPUT MODEL on elasticity composed under the block [yield]."""
    text = (
        "[Models]\n  [yield]\n    type = LinearIsotropicElasticity\n"
        "    coefficients = '200e3 0.3'\n"
        "    coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'\n  []\n"
        "  [class]\n    type = ComposedModel\n    models = 'yield'\n  []\n[]\n"
    )
    (tmp_path / "kw.i").write_text(text)
    argv = [str(tmp_path / "kw.i"), "class", "-o", str(tmp_path / "out")]
    assert main([*argv, "--cache-dir", str(cache_dir), "-q"]) == 0, capsys.readouterr().err
    meta = json.loads((tmp_path / "out" / "class" / "metadata.json").read_text())
    assert meta["model"] == "class"
    assert (tmp_path / "out" / "class" / "cpu" / "float64" / "forward.pt2").is_file()
