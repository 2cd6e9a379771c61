"""neml2-compile on linear elasticity: the artifact layout, metadata, stub, cache and CLI."""

from __future__ import annotations

import json

import pytest
import torch

from neml2.compiler import SCHEMA_VERSION, CompileOptions, compile_file, compile_model, main
from neml2.tensors import FatalError


def test_artifact_layout(compiled):
    res, _ = compiled
    art = res.artifact_dir
    assert art.name == "elasticity"
    assert (art / "metadata.json").is_file()
    assert (art / "cpu" / "float64" / "forward.pt2").is_file()
    assert (art / "cpu" / "float64" / "jacobian.pt2").is_file()
    assert res.stub_path == art.parent / "elasticity_aoti.i"


def test_metadata(compiled):
    res, _ = compiled
    meta = json.loads(res.metadata_path.read_text())
    assert meta["schema_version"] == SCHEMA_VERSION
    assert meta["torch_version"] == torch.__version__
    assert meta["model"] == "elasticity"
    assert meta["inputs"] == [{"name": "strain", "type": "SR2", "base_shape": [6], "sub_batch": []}]
    assert meta["outputs"] == [
        {"name": "stress", "type": "SR2", "base_shape": [6], "sub_batch": []}
    ]
    assert meta["derivatives"] == [{"output": "stress", "input": "strain"}]
    # only the promoted parameter is a graph input; nu is a literal of the graphs
    assert meta["parameters"] == [
        {"name": "E", "shape": [], "value": [200e3], "exposed": True},
    ]
    assert meta["targets"] == [
        {
            "device": "cpu",
            "dtype": "float64",
            "graphs": {
                "forward": "cpu/float64/forward.pt2",
                "jacobian": "cpu/float64/jacobian.pt2",
            },
        }
    ]
    assert meta["solvers"] == []


def test_stub_is_relocatable(compiled):
    res, _ = compiled
    text = res.stub_path.read_text()
    assert "type = AOTIModel" in text
    assert "artifact_path = 'elasticity'" in text  # relative to the stub
    assert str(res.artifact_dir.parent) not in text


def test_progress_per_graph(compiled):
    res, lines = compiled
    text = "\n".join(lines)
    assert "cpu/float64/forward" in text and "cpu/float64/jacobian" in text
    assert "stub" in text
    assert len(res.graphs) == 2


def test_second_compile_is_a_cache_hit(compiled, elasticity_input, tmp_path, cache_dir):
    opts = CompileOptions.from_strings("elasticity", ["stress:strain"], ["E"])
    res = compile_file(elasticity_input, opts, tmp_path, cache_dir=cache_dir)
    assert [g.cache_hit for g in res.graphs] == [True, True]
    assert res.cache_hits == 2
    first, _ = compiled
    assert [g.key for g in res.graphs] == [g.key for g in first.graphs]
    assert "cache hit" in res.summary()


def test_unchanged_source_skips_the_export(compiled, elasticity_input, tmp_path, cache_dir):
    """The source key (rendered input, parameters, sources, options) finds the graph key
    without exporting; an override changes it and exports again."""
    opts = CompileOptions.from_strings("elasticity", ["stress:strain"], ["E"])
    lines: list[str] = []
    res = compile_file(elasticity_input, opts, tmp_path, cache_dir=cache_dir, progress=lines.append)
    assert res.cache_hits == 2
    assert sum("no export" in s for s in lines) == 2, lines
    assert not any("exporting" in s for s in lines)
    # another parameter value or another input text: another source key
    from neml2.compiler._compile import source_key
    from neml2.models import load_model

    text = elasticity_input.read_text()
    m = load_model(elasticity_input, "elasticity")
    m2 = load_model(elasticity_input, "elasticity", ["Models/elasticity/coefficients='210e3 0.3'"])
    k = source_key(text, m, {})
    assert k == source_key(text, m, {})
    assert k != source_key(text, m2, {})
    assert k != source_key(text + "#", m, {})
    assert k != source_key(text, m, {"dtype": "float32"})


def test_changed_model_changes_the_key(compiled, elasticity_input):
    """Another E gives other graph constants: the cache key differs (no false hit)."""
    from neml2.compiler._compile import export_graph, graph_key
    from neml2.compiler._graphs import ForwardGraph
    from neml2.models import load_model

    keys = []
    for e in ("200e3", "100e3"):
        m = load_model(
            elasticity_input, "elasticity", [f"Models/elasticity/coefficients='{e} 0.3'"]
        )
        xs = [torch.rand(8, 6, dtype=torch.float64)]
        keys.append(graph_key(export_graph(ForwardGraph(m, []), xs, []), {}))
    assert keys[0] != keys[1]


@pytest.mark.parametrize(
    ("derivs", "params", "message"),
    [
        (["stress:T"], [], "'T' is not an input; inputs: strain"),
        # a parameter, promoted or not: say how to get its derivatives
        (["stress:E"], ["E"], "'E' is a parameter, and derivatives are compiled w.r.t. inputs"),
        ([":elasticity.nu"], [], "'elasticity.nu' is a parameter, and derivatives are"),
        (["strss:"], [], "'strss' is not an output; outputs: stress"),
        ([], ["elasticity.G"], "has no parameter 'elasticity.G'; parameters: E, nu"),
    ],
)
def test_bad_options_fail_before_compiling(elasticity_input, tmp_path, derivs, params, message):
    from neml2.models import load_model

    m = load_model(elasticity_input, "elasticity")
    opts = CompileOptions.from_strings("elasticity", derivs, params)
    with pytest.raises(FatalError, match=message):
        compile_model(m, opts, tmp_path, cache_dir=tmp_path / "cache")
    assert not (tmp_path / "elasticity").exists()


def test_example_batch_must_not_specialise(elasticity_input, tmp_path):
    from neml2.models import load_model

    m = load_model(elasticity_input, "elasticity")
    with pytest.raises(FatalError, match="at least 2"):
        compile_model(m, CompileOptions("elasticity"), tmp_path, example_batch=1)


def test_cli_cache_hit_and_errors(compiled, elasticity_input, tmp_path, capsys, cache_dir):
    rc = main(
        [
            str(elasticity_input),
            "elasticity",  # MODEL, positional (test_cli_grammar.py: the whole grammar)
            "-d",
            "stress:strain",
            "-p",
            "elasticity.E",
            "-o",
            str(tmp_path),
            "--cache-dir",
            str(cache_dir),
        ]
    )
    out = capsys.readouterr().out
    assert rc == 0
    assert "2 graph(s), 2 from the cache" in out
    assert (tmp_path / "elasticity_aoti.i").is_file()

    rc = main([str(elasticity_input), "--model", "elastic", "-o", str(tmp_path)])
    err = capsys.readouterr().err
    assert rc == 1
    assert "no block named 'elastic'" in err

    rc = main([str(elasticity_input), "--model", "elasticity", "-d", "stress"])
    assert rc == 1
    assert "expected OUT:IN" in capsys.readouterr().err


def test_models_get_parallel_kernels(compiled):
    """A model is exported at a batch of 1024: Inductor's size hint, so its kernels get
    an OpenMP region (at 8 they were serial: one core at any batch)."""
    import zipfile

    from neml2.compiler._compile import EXAMPLE_BATCH

    res, _ = compiled
    assert res.metadata["batch"]["example"] == EXAMPLE_BATCH == 1024
    pt2 = res.artifact_dir / "cpu" / "float64" / "forward.pt2"
    with zipfile.ZipFile(pt2) as z:
        kernels = [z.read(n).decode() for n in z.namelist() if n.endswith("kernel.cpp")]
    assert kernels and any("#pragma omp parallel" in k for k in kernels)
    # the 6 components are one masked vector step, not a scalar loop (5x the speed)
    assert any("::loadu(" in k for k in kernels)
    # nu (not promoted) is folded into the code's constants: the kernels read the strain
    # and E (in_ptr0, in_ptr1), no third value through a pointer
    assert all("in_ptr2" not in k for k in kernels)


def test_write_into_graph_stores_in_place(compiled, elasticity_input, tmp_path, cache_dir):
    """--write-into adds forward_into: the forward outputs stored into tensors given after
    the parameters (the kernel writes them; the returned tensor is the given one). The
    other graphs are the same as without it (cache hits)."""
    first, _ = compiled
    opts = CompileOptions.from_strings("elasticity", ["stress:strain"], ["E"], write_into=True)
    res = compile_file(elasticity_input, opts, tmp_path, cache_dir=cache_dir)
    meta = res.metadata
    assert meta["graphs"]["forward_into"] == {
        "file": "forward_into.pt2",
        "outputs": ["stress"],
        "status": False,
    }
    assert meta["targets"][0]["graphs"]["forward_into"] == "cpu/float64/forward_into.pt2"
    hits = {g.name: g.cache_hit for g in res.graphs}
    assert hits["forward"] and hits["jacobian"]
    assert {g.name: g.key for g in res.graphs if g.name != "forward_into"} == {
        g.name: g.key for g in first.graphs
    }
    runner = torch._inductor.aoti_load_package(
        str(res.artifact_dir / "cpu" / "float64" / "forward_into.pt2")
    )
    plain = torch._inductor.aoti_load_package(
        str(res.artifact_dir / "cpu" / "float64" / "forward.pt2")
    )
    for n in (1, 5):
        strain = torch.rand(n, 6, dtype=torch.float64)
        E = torch.tensor(200e3, dtype=torch.float64)  # promoted; nu is a literal
        out = torch.full((n, 6), float("nan"), dtype=torch.float64)
        (got,) = runner(strain, E, out)
        assert got.data_ptr() == out.data_ptr()
        torch.testing.assert_close(out, plain(strain, E)[0], rtol=0, atol=0)


def test_cli_write_into(elasticity_input, tmp_path, cache_dir):
    """The same graphs as the test above (cache hits after it)."""
    args = [str(elasticity_input), "elasticity", "-d", "stress:strain", "-p", "E"]
    assert main([*args, "--write-into", "-o", str(tmp_path), "--cache-dir", str(cache_dir)]) == 0
    meta = json.loads((tmp_path / "elasticity" / "metadata.json").read_text())
    assert set(meta["graphs"]) == {"forward", "forward_into", "jacobian"}


def test_the_aoti_model_shim_comes_from_the_runtime():
    """``type = AOTIModel`` is registered by neml2-aoti-runtime (it owns the artifact); the
    old module path still imports, with a DeprecationWarning naming the new one."""
    import importlib
    import sys

    from neml2.models._registry import lookup

    assert lookup("AOTIModel").__module__ == "neml2.aoti._aoti_model"
    sys.modules.pop("neml2.compiler._aoti_model", None)
    with pytest.warns(DeprecationWarning, match="moved to neml2.aoti._aoti_model"):
        old = importlib.import_module("neml2.compiler._aoti_model")
    assert old.AOTIModel is lookup("AOTIModel")
