"""``neml2-compile INPUT MODEL [options] [PATH=VALUE...]``: how the command line is read,
and the torch notices a compile hides. No compile runs here: ``compile_file`` is
replaced by a recorder, so these tests take milliseconds."""

from __future__ import annotations

import logging
import pickle
import warnings
from types import SimpleNamespace

import pytest

from neml2.compiler import _cli
from neml2.compiler._cli import main, split_model_and_overrides
from neml2.compiler._torch_notices import torch_notices_hidden

TWO_MODELS = """
[Models]
  [elasticity]
    type = LinearIsotropicElasticity
    coefficients      = '200e3          0.3'
    coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'
  []
  [stiff]
    type = LinearIsotropicElasticity
    coefficients      = '400e3          0.3'
    coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'
  []
[]
"""


@pytest.fixture
def two_models(tmp_path):
    p = tmp_path / "two.i"
    p.write_text(TWO_MODELS)
    return p


@pytest.fixture
def recorded(monkeypatch):
    """The calls main() makes to compile_file: (path, options, output_dir, overrides, kw)."""
    calls: list[tuple] = []

    def fake(path, options, output_dir=None, overrides=(), **kwargs):
        calls.append((str(path), options, output_dir, list(overrides), kwargs))
        return SimpleNamespace(graphs=[], cache_hits=0)

    monkeypatch.setattr(_cli, "compile_file", fake)
    return calls


# ------------------------------------------------------------------ the pure reader
@pytest.mark.parametrize(
    ("words", "option", "model", "overrides"),
    [
        (["elasticity"], None, "elasticity", []),
        (["elasticity", "A/b=1", "+C/d=2"], None, "elasticity", ["A/b=1", "+C/d=2"]),
        (["A/b=1", "elasticity"], None, "elasticity", ["A/b=1"]),  # MODEL after an override
        (["A/b=1"], "elasticity", "elasticity", ["A/b=1"]),  # --model, the older spelling
        (["elasticity"], "elasticity", "elasticity", []),  # the same name both ways
        (["A/b='1 2'"], None, None, ["A/b='1 2'"]),  # no model: main() reports it
        ([], None, None, []),
    ],
)
def test_split_model_and_overrides(words, option, model, overrides):
    assert split_model_and_overrides(words, option) == (model, overrides)


@pytest.mark.parametrize(
    ("words", "option", "message"),
    [
        (["a", "b"], None, "more than one MODEL: 'a', 'b'"),
        (["a", "X=1", "b"], None, "more than one MODEL: 'a', 'b'"),
        (["a"], "b", "MODEL 'a' and --model 'b' name different blocks"),
        ([""], None, "MODEL is empty"),
        ([], " ", "MODEL is empty"),
    ],
)
def test_split_rejects(words, option, message):
    with pytest.raises(ValueError, match=message):
        split_model_and_overrides(words, option)


# ------------------------------------------------------------------ main()
def test_model_positional_with_options_and_overrides_between(two_models, recorded):
    argv = [
        str(two_models),
        "stiff",
        "-d",
        "stress:strain",
        "Models/stiff/coefficients='1e5 0.3'",
        "-p",
        "E",
        "+Settings/x=1",
        "--no-cache",
        "-q",
    ]
    assert main(argv) == 0
    ((path, opts, out, overrides, kw),) = recorded
    assert path == str(two_models)
    assert opts.model == "stiff"
    assert [str(d) for d in opts.derivatives] == ["stress:strain"]
    assert opts.parameters == ["E"]
    assert overrides == ["Models/stiff/coefficients='1e5 0.3'", "+Settings/x=1"]
    assert out is None and kw["use_cache"] is False


def test_model_option_still_accepted(two_models, recorded):
    assert main([str(two_models), "--model", "elasticity", "A/b=1", "-q"]) == 0
    assert main(["--model", "stiff", str(two_models), "-q"]) == 0
    assert main([str(two_models), "stiff", "--model", "stiff", "-q"]) == 0  # same name
    assert [(c[1].model, c[3]) for c in recorded] == [
        ("elasticity", ["A/b=1"]),
        ("stiff", []),
        ("stiff", []),
    ]


def test_model_given_twice_differently(two_models, recorded, capsys):
    with pytest.raises(SystemExit) as e:
        main([str(two_models), "stiff", "--model", "elasticity"])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "MODEL 'stiff' and --model 'elasticity' name different blocks" in err
    assert not recorded


def test_two_model_names(two_models, recorded, capsys):
    with pytest.raises(SystemExit) as e:
        main([str(two_models), "stiff", "elasticity"])
    assert e.value.code == 2
    assert "more than one MODEL: 'stiff', 'elasticity'" in capsys.readouterr().err
    assert not recorded


def test_no_model_lists_the_inputs_models(two_models, recorded, capsys):
    with pytest.raises(SystemExit) as e:
        main([str(two_models), "Models/stiff/coefficients='1e5 0.3'"])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "MODEL is missing: neml2-compile INPUT MODEL" in err
    assert f"[Models] in {two_models}: elasticity, stiff" in err
    assert not recorded


def test_no_model_in_a_file_without_models(tmp_path, recorded, capsys):
    p = tmp_path / "empty.i"
    p.write_text("[Tensors]\n[]\n")
    with pytest.raises(SystemExit):
        main([str(p)])
    assert f"{p} has no [Models] block" in capsys.readouterr().err


def test_no_model_in_a_broken_file_says_why(tmp_path, recorded, capsys):
    p = tmp_path / "broken.i"
    p.write_text("[Models]\n  [a\n")
    with pytest.raises(SystemExit):
        main([str(p)])
    err = capsys.readouterr().err
    assert "MODEL is missing" in err and f"could not list the models of {p}" in err


def test_input_problem_comes_before_the_model_check(tmp_path, recorded, capsys):
    """A directory as INPUT is the fatal 'not a regular file' (exit 1), with or without
    MODEL; never a parse attempt."""
    (tmp_path / "d").mkdir()
    assert main([str(tmp_path / "d")]) == 1
    assert "is not a regular file (a directory)" in capsys.readouterr().err


def test_help_explains_the_grammar(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    assert "usage: neml2-compile [-h] [--version] INPUT MODEL [options] [PATH=VALUE ...]" in out
    assert "The one argument without '=' is MODEL" in out
    assert "--model NAME" in out and "--verbose" in out


def test_verbose_skips_the_notice_filters(two_models, monkeypatch, recorded):
    """Without --verbose the compile runs inside torch_notices_hidden(devices); with it,
    not at all."""
    entered: list[tuple] = []

    class Spy:
        def __init__(self, devices):
            self.devices = tuple(devices)

        def __enter__(self):
            entered.append(self.devices)

        def __exit__(self, *exc):
            return False

    monkeypatch.setattr(_cli, "torch_notices_hidden", Spy)
    assert main([str(two_models), "stiff", "-q", "--device", "cpu"]) == 0
    assert main([str(two_models), "stiff", "-q", "--verbose"]) == 0
    assert entered == [("cpu",)]
    assert len(recorded) == 2


# ------------------------------------------------------------------ the notice filters
def _leaf_spec_roundtrip() -> None:
    """What torch.export does to its pytree specs: pickle one (torch 2.13 warns)."""
    from torch.utils import _pytree

    pickle.loads(pickle.dumps(_pytree.treespec_leaf()))


def test_torch_deprecation_inside_export_is_hidden():
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        _leaf_spec_roundtrip()
    from_torch = [w for w in seen if "LeafSpec" in str(w.message)]
    if not from_torch:
        pytest.skip("this torch does not warn about LeafSpec (the filter has nothing to do)")
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        with torch_notices_hidden(["cpu"]):
            _leaf_spec_roundtrip()
            warnings.warn("a user's own FutureWarning", FutureWarning, stacklevel=1)
            warnings.warn(
                "`isinstance(treespec, LeafSpec)` is deprecated", UserWarning, stacklevel=1
            )
    assert [(w.category, str(w.message)) for w in seen] == [
        (FutureWarning, "a user's own FutureWarning"),
        (UserWarning, "`isinstance(treespec, LeafSpec)` is deprecated"),  # not the category
    ]


def test_inductor_and_cuda_home_lines_are_hidden(caplog):
    ir = logging.getLogger("torch._inductor.ir")
    ext = logging.getLogger("torch.utils.cpp_extension")
    shim = (
        "aten._linalg_solve_ex.default is missing a c-shim implementation, using proxy "
        "executor as fallback"
    )
    with caplog.at_level(logging.WARNING):
        with torch_notices_hidden(["cpu"]):
            ir.warning(
                "%s is missing a c-shim implementation, using proxy executor as fallback",
                "aten._linalg_solve_ex.default",
            )
            ir.warning("some other Inductor warning")
            ext.warning("No CUDA runtime is found, using CUDA_HOME='%s'", "/usr/local")
        with torch_notices_hidden(["cpu", "cuda"]):  # a CUDA target: that line matters
            ext.warning("No CUDA runtime is found, using CUDA_HOME='%s'", "/usr/local")
        ir.warning(shim)  # outside: everything shows again
    messages = [r.getMessage() for r in caplog.records]
    assert messages == [
        "some other Inductor warning",
        "No CUDA runtime is found, using CUDA_HOME='/usr/local'",
        shim,
    ]
    assert not ir.filters and not ext.filters  # the filters were removed


def test_a_static_batch_request_is_noted_not_ignored(tmp_path, monkeypatch):
    """[Settings] dynamic_batch = false (the reference's) compiles a dynamic artifact,
    and the compile says so."""
    from neml2.compiler import CompileOptions

    src = tmp_path / "m.i"
    src.write_text(
        "[Models]\n  [m]\n    type = ScalarLinearCombination\n    from = 'a'\n    to = 'b'\n"
        "  []\n[]\n[Settings]\n  dynamic_batch = false\n[]\n"
    )
    monkeypatch.setattr(_cli, "compile_model", lambda *a, **k: "compiled")
    lines: list[str] = []
    out = _cli.compile_file(src, CompileOptions(model="m"), progress=lines.append)
    assert out == "compiled"
    assert len(lines) == 1 and "dynamic_batch = false is read as true" in lines[0]
    assert str(src) in lines[0]
