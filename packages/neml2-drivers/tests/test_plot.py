"""--plot and --plot-vars: panels 'y' and 'x:y', step 0, legend and labels, and the
errors a bad spelling gets; neml2-inspect's parameters and buffers."""

from __future__ import annotations

import textwrap

import pytest
import torch

from neml2.drivers._cli import EXIT_FATAL, inspect_main, run_main
from neml2.drivers.plot import check_variables, label, parse_panels, plot
from neml2.drivers.results import TransientResult
from neml2.drivers.transient import TransientDriver
from neml2.tensors import FatalError

INPUT = """
[Tensors]
  [times]
    type = Python
    expr = 'Scalar(torch.linspace(0, 1, 4).unsqueeze(-1).expand(4, 2))'
  []
  [strains]
    type = Python
    expr = '''
      SR2(torch.linspace(0, 1, 4).reshape(4, 1, 1)
          * torch.tensor([[1e-3, 0, 0, 0, 0, 0], [2e-3, 0, 0, 0, 0, 0]]))
    '''
  []
[]
[Drivers]
  [driver]
    type = TransientDriver
    model = 'model'
    prescribed_time = 'times'
    prescribed_SR2_names = 'strain'
    prescribed_SR2_values = 'strains'
  []
[]
[Models]
  [elasticity]
    type = LinearIsotropicElasticity
    coefficients = '1e5 0.25'
    coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'
  []
  [double]
    type = SR2LinearCombination
    from = 'stress'
    to = 'twice'
    weights = '2'
  []
  [model]
    type = ComposedModel
    models = 'elasticity double'
    additional_outputs = 'stress'
  []
[]
"""

MODEL = {"outputs": {"stress": (6,), "twice": (6,)}, "inputs": {"strain": (6,), "t": ()}}


@pytest.fixture
def input_file(tmp_path):
    p = tmp_path / "t.i"
    p.write_text(textwrap.dedent(INPUT))
    return p


@pytest.fixture
def figures(monkeypatch):
    """The figures plot() saves, kept open for inspection."""
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure

    saved = []
    real = Figure.savefig

    def savefig(self, *args, **kwargs):
        saved.append(self)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", savefig)
    return saved


def test_pairs_draw_step_0_with_legend_and_labels(input_file, tmp_path, figures, capsys):
    png = tmp_path / "p.png"
    argv = [str(input_file), "driver", "--quiet", "--plot", str(png)]
    argv += ["--plot-vars", "strain[0]:stress[0], output.twice[1]"]
    assert run_main(argv) == 0
    assert f"plot written to {png}" in capsys.readouterr().out
    assert png.stat().st_size > 1000
    (fig,) = figures
    pair, against_time = fig.axes
    assert pair.get_xlabel() == "strain[0] (xx)" and pair.get_ylabel() == "stress[0] (xx)"
    assert against_time.get_xlabel() == "t" and against_time.get_ylabel() == "output.twice[1] (yy)"
    # two batch points, each a curve over the 4 entries from step 0, named in the legend
    assert [t.get_text() for t in pair.get_legend().get_texts()] == ["point 0", "point 1"]
    first, second = pair.get_lines()
    # E = 1e5, nu = 0.25: sigma_xx = (lambda + 2 mu) eps_xx = 1.2e5 eps_xx
    for line, scale in ((first, 1e-3), (second, 2e-3)):
        x, y = (torch.tensor(line.get_xdata()), torch.tensor(line.get_ydata()))
        expected_x = scale * torch.linspace(0, 1, 4, dtype=torch.float64)
        torch.testing.assert_close(x, expected_x)
        torch.testing.assert_close(y, 1.2e5 * expected_x)
    (time_line, _) = against_time.get_lines()
    torch.testing.assert_close(
        torch.tensor(time_line.get_xdata()), torch.linspace(0, 1, 4, dtype=torch.float64)
    )
    # twice[1] = 2 sigma_yy = 2 lambda eps_xx = 8e4 eps_xx
    torch.testing.assert_close(
        torch.tensor(time_line.get_ydata()), 8e4 * 1e-3 * torch.linspace(0, 1, 4).double()
    )


def test_the_former_option_name_still_works(input_file, tmp_path, figures):
    argv = [str(input_file), "driver", "--quiet", "--plot", str(tmp_path / "p.svg")]
    assert run_main([*argv, "--plot-outputs", "stress[1]"]) == 0
    assert figures[0].axes[0].get_ylabel() == "stress[1] (yy)"


@pytest.mark.parametrize(
    ("panels", "message"),
    [
        (
            "strian[0]:stress[0]",
            "--plot-vars: 'strian' is not a variable of model 'model' (did you mean 'strain'",
        ),
        (
            "strain[0]:strss[0]",
            "--plot-vars: 'strss' is not a variable of model 'model' (did you mean 'stress'",
        ),
        ("strain[6]:stress[0]", "--plot-vars: 'strain[6]': 'strain' has 6 component(s)"),
        ("strain[0]:", "--plot-vars: 'strain[0]:' is not a variable 'y' or a pair 'x:y'"),
        (":stress", "--plot-vars: ':stress' is not a variable 'y' or a pair 'x:y'"),
        ("t:strain:stress", "--plot-vars: 't:strain:stress' is not a variable 'y' or a pair"),
        ("strain[a]:stress", "--plot-vars: 'strain[a]' is not a variable 'name' or a component"),
    ],
)
def test_bad_panels_fail_before_the_run(input_file, tmp_path, monkeypatch, capsys, panels, message):
    monkeypatch.setattr(TransientDriver, "run", lambda self: pytest.fail("the run started"))
    png = tmp_path / "p.png"
    argv = [str(input_file), "driver", "--plot", str(png), "--plot-vars", panels]
    assert run_main(argv) == EXIT_FATAL
    assert message in capsys.readouterr().err
    assert not png.exists()


def test_the_former_name_is_named_in_its_errors(input_file, tmp_path, capsys):
    argv = [str(input_file), "driver", "--plot", str(tmp_path / "p.png")]
    assert run_main([*argv, "--plot-outputs", "x:stress"]) == EXIT_FATAL
    assert "--plot-outputs: 'x' is not a variable of model 'model'" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--plot-vars", "stress"], "--plot-vars needs --plot FILE"),
        (["--plot", "p.png", "--plot-vars", "stress", "--plot-outputs", "stress"], "not both"),
    ],
)
def test_bad_command_lines(input_file, capsys, argv, message):
    with pytest.raises(SystemExit) as e:
        run_main([str(input_file), "driver", *argv])
    assert e.value.code == 2
    assert message in capsys.readouterr().err


def test_parse_panels_and_check_variables():
    (a, b) = parse_panels(" strain[0]:stress[3] ,input.t")
    assert (a.x.name, a.x.index, a.y.name, a.y.index) == ("strain", 0, "stress", 3)
    assert b.x is None and (b.y.name, b.y.index) == ("input.t", None)
    bases = check_variables(["strain[0]:stress[3]", "input.t"], **MODEL, model="m")
    assert bases == {"strain": (6,), "stress": (6,), "input.t": ()}
    both = {"outputs": {"x": ()}, "inputs": {"x": ()}}
    with pytest.raises(FatalError, match="'x' is both an input and an output of model 'm'"):
        check_variables(["x"], **both, model="m")
    assert check_variables(["output.x"], **both, model="m") == {"output.x": ()}


def test_labels_name_the_component():
    (p,) = parse_panels("stress[3]:stress[0]")
    assert label(p.x, (6,)) == "stress[3] (√2·yz)" and label(p.y, (6,)) == "stress[0] (xx)"
    assert label(parse_panels("t")[0].y, ()) == "t"
    assert label(parse_panels("F[4]")[0].y, (3, 3)) == "F[4]"


def test_plot_api_takes_a_stacked_or_a_flat_result(tmp_path, figures):
    steps = torch.arange(3, dtype=torch.float64)
    stacked = TransientResult({"t": steps}, {"y": 2 * steps})
    plot(stacked, ["t:y"], tmp_path / "a.png")
    line = figures[-1].axes[0].get_lines()[0]
    assert list(line.get_xdata()) == [0.0, 1.0, 2.0] and list(line.get_ydata()) == [0.0, 2.0, 4.0]
    flat = {"input.0.t": steps[0], "input.1.t": steps[1], "input.2.t": steps[2]}
    flat.update({"output.1.y": steps[1], "output.2.y": steps[2]})
    plot(flat, "y", tmp_path / "b.png")  # output.0.y is absent: drawn as zero
    line = figures[-1].axes[0].get_lines()[0]
    assert list(line.get_ydata()) == [0.0, 1.0, 2.0]
    with pytest.raises(FatalError, match=r"--plot: 'z' is not a variable of this result"):
        plot(stacked, ["z"], tmp_path / "c.png")
    assert not (tmp_path / "c.png").exists()


# ---------------------------------------------------------------- neml2-inspect


def test_inspect_lists_parameters_and_buffers_apart(input_file, capsys):
    assert inspect_main([str(input_file), "model"]) == 0
    out = capsys.readouterr().out
    params = out[out.index("  parameters:\n") : out.index("  buffers:\n")]
    buffers = out[out.index("  buffers:\n") : out.index("  evaluation order:")]
    assert "elasticity.E ()" in params and "elasticity.nu ()" in params
    assert "w_0" not in params
    (title, weight) = buffers.splitlines()
    assert title == "  buffers:" and weight.startswith("    double") and weight.endswith(".w_0 ()")
    assert inspect_main([str(input_file), "elasticity"]) == 0
    assert capsys.readouterr().out.endswith("  buffers:\n    (none)\n")
