"""Grain-diagonal ("block") seeding of an implicit update's Jacobian.

The unknowns of a ``structure = block`` group get one seed per base component, shared by
their grains; a mean over the grains expands it into per-grain columns. The Jacobian so
assembled must equal the one from ordinary seeds (a grain-diagonal block, a dense column,
a dense row through the mean, and a per-grain residual that reads the mean as well). A
model that mixes grains some other way (here a sum over the grain axis) is caught by the
check against the ordinary Jacobian at the first solve, and then solved without block
seeds.
"""

from __future__ import annotations

import textwrap

import pytest
import torch

from neml2.models import load_model
from neml2.models._block_seeds import block_diagonal, block_diagonal_into
from neml2.tensors import FatalError, Scalar

F64 = torch.float64
G = 4

SYSTEM = """
[Models]
  [mean]
    type = ScalarIntermediateMean
    from = 'x'
    to = 'xm'
    reduces = 'grain'
  []
  [cube]
    type = PowerLawSlipRule
    resolved_shears = 'x'
    slip_strengths = 's'
    slip_rates = 'x3'
    gamma0 = 0.1
    n = 3
  []
  {coupling}
  [rx]
    type = ScalarLinearCombination
    from = 'x x3 y {grain_term} f'
    to = 'x_residual'
    weights = '1 1 -0.5 -0.25 -1'
  []
  [ry]
    type = ScalarLinearCombination
    from = 'y xm'
    to = 'y_residual'
    weights = '1 -1'
  []
  [system]
    type = ComposedModel
    models = 'mean cube {coupling_name} rx ry'
  []
  [guess]
    type = ConstantExtrapolationPredictor
    unknowns_Scalar = 'x y'
  []
  [model]
    type = ImplicitUpdate
    equation_system = 'eq'
    solver = 'newton'
    predictor = 'guess'
  []
[]

[EquationSystems]
  [eq]
    type = NonlinearSystem
    model = 'system'
    unknowns = 'x; y'
    structure = 'block dense'
  []
[]

[Solvers]
  [newton]
    type = Newton
    rel_tol = 0
    abs_tol = 1e-12
  []
[]
"""

# a per-grain residual reading the mean: still correct with block seeds
MEAN = dict(coupling="", coupling_name="", grain_term="xm")
# ... or a sum over the grain axis (not a mean): block seeds would be wrong
SUM = dict(
    coupling="[sum]\n    type = SumSlipRates\n    slip_rates = 'x'\n"
    "    sum_slip_rates = 'xs'\n  []",
    coupling_name="sum",
    grain_term="xs",
)


# a per-grain residual that reads its own grain only: the x block is grain-diagonal
DIAG = dict(
    coupling="[half]\n    type = ScalarLinearCombination\n    from = 'x'\n    to = 'xh'\n"
    "    weights = '0.5'\n  []",
    coupling_name="half",
    grain_term="xh",
)

SCHUR = """
[Solvers]
  [newton]
    type = Newton
    rel_tol = 0
    abs_tol = 1e-12
    linear_solver = 'schur'
  []
  [lu]
    type = DenseLU
  []
  [schur]
    type = SchurComplement
    primary_solver = 'lu'
    schur_solver = 'lu'
  []
[]
"""


def _model(tmp_path, kind, schur=False, structure="block dense"):
    text = textwrap.dedent(SYSTEM).lstrip().format(**kind)
    if schur:
        text = text[: text.index("[Solvers]")] + textwrap.dedent(SCHUR).lstrip()
    text = text.replace("structure = 'block dense'", f"structure = '{structure}'")
    p = tmp_path / "block.i"
    p.write_text(text)
    return load_model(p, "model")


def _given(batch):
    """``f`` per grain, ``s = 1`` (``x3 = 0.1 x |x|²``) and the guess: the old values."""
    g = torch.Generator().manual_seed(7)
    f = Scalar(torch.rand(*batch, G, generator=g, dtype=F64) + 0.5, 1)
    return {
        "f": f,
        "s": Scalar(torch.ones((), dtype=F64)),
        "x~1": Scalar(torch.zeros(*batch, G, dtype=F64), 1),
        "y~1": Scalar(torch.zeros(*batch, dtype=F64)),
    }


def _solve(model, batch):
    given = _given(batch)
    x, y = model(*[given[n] for n in model.input_spec])
    return given["f"].data, x.data, y.data


def _jacobians(model, batch):
    """Ordinary and block-seeded ``(r, J)`` at a random point (not a solution)."""
    given = {n: v for n, v in _given(batch).items() if not n.endswith("~1")}
    g = torch.Generator().manual_seed(3)
    guess = {
        "x": Scalar(torch.rand(*batch, G, generator=g, dtype=F64), 1),
        "y": Scalar(torch.rand(*batch, generator=g, dtype=F64)),
    }
    ulay, rlay, b, shaped = model._layouts(given, guess)
    fn, _, datas = model._residual_fn(given, ulay, rlay, b)
    blocked = model._block_seeded_fn(given, ulay, rlay)
    assert blocked is not None
    u = ulay.flatten(shaped, b)
    return fn(u, *datas), blocked(u, *datas)


@pytest.mark.parametrize("batch", [(3,), (1,)])
def test_block_seeded_jacobian_equals_the_ordinary_one(tmp_path, batch):
    model = _model(tmp_path, MEAN)
    (r, J), (rb, Jb) = _jacobians(model, batch)
    assert J.shape == (*batch, G + 1, G + 1)
    torch.testing.assert_close(rb, r, rtol=0, atol=0)
    torch.testing.assert_close(Jb, J, rtol=1e-14, atol=1e-15)
    # what it assembles: the x block is grain-diagonal plus the mean's -0.25/G everywhere;
    # the y row reads the mean (-1/G per grain), the x rows y (-0.5)
    Jxx = J[..., :G, :G]
    off = Jxx - torch.diag_embed(torch.diagonal(Jxx, dim1=-2, dim2=-1))
    eye = torch.eye(G, dtype=F64)
    torch.testing.assert_close(off, (-0.25 / G) * (1 - eye).expand_as(off))
    torch.testing.assert_close(J[..., G, :G], torch.full_like(J[..., G, :G], -1.0 / G))
    torch.testing.assert_close(J[..., :G, G], torch.full_like(J[..., :G, G], -0.5))


def test_block_diagonal_matches_the_in_place_writer():
    """The traced (functional) grain diagonal puts every entry where the eager writer
    does: several components per grain on both sides (k = 3 seeds, bs = 2 residuals)."""
    g = torch.Generator().manual_seed(5)
    d = torch.randn(3, 7, G, 2, generator=g, dtype=F64)  # (k, batch, G, bs)
    buf = torch.zeros(1 + G * 3, 7, G * 2 + 1, dtype=F64)  # seed-major, with margins
    block_diagonal_into(buf, 1, 0, G, 3, 2, d)
    want = buf.movedim(0, -1)[..., : G * 2, 1:]
    got = block_diagonal(d)
    assert got.shape == (7, G * 2, G * 3)
    torch.testing.assert_close(got, want, rtol=0, atol=0)
    assert bool((got[:, 0:2, 3:] == 0).all()) and bool((got[:, 0:2, 0:3] != 0).all())


@pytest.mark.parametrize("batch", [(3,), (1,)])
def test_traced_block_seeded_assembly_equals_the_eager_one(tmp_path, batch, monkeypatch):
    """Traced graphs concatenate the block-seeded Jacobian instead of writing it into one
    buffer: the same matrix, bit for bit."""
    from neml2.models import implicit_update as iu

    model = _model(tmp_path, MEAN)
    _, (r, J) = _jacobians(model, batch)
    monkeypatch.setattr(iu, "_tracing", lambda: True)
    _, (rt, Jt) = _jacobians(model, batch)
    assert Jt.shape == J.shape == (*batch, G + 1, G + 1)
    torch.testing.assert_close(rt, r, rtol=0, atol=0)
    torch.testing.assert_close(Jt, J, rtol=0, atol=0)


def test_solve_uses_block_seeds_and_converges(tmp_path):
    model = _model(tmp_path, MEAN)
    f, x, y = _solve(model, (5,))
    assert model._block_ok is True
    xm = x.mean(-1, keepdim=True)
    rx = x + 0.1 * x * x.abs() ** 2 - 0.5 * y.unsqueeze(-1) - 0.25 * xm - f
    torch.testing.assert_close(rx, torch.zeros_like(rx), rtol=0, atol=1e-11)
    torch.testing.assert_close(y, xm.squeeze(-1), rtol=0, atol=1e-11)


def test_grain_mixing_model_falls_back_to_ordinary_seeds(tmp_path):
    model = _model(tmp_path, SUM)
    (_, J), (_, Jb) = _jacobians(model, (3,))
    assert not torch.allclose(Jb, J)  # a sum over grains breaks the block assumption
    f, x, y = _solve(model, (5,))
    assert model._block_ok is False
    xs = x.abs().sum(-1, keepdim=True)
    rx = x + 0.1 * x * x.abs() ** 2 - 0.5 * y.unsqueeze(-1) - 0.25 * xs - f
    torch.testing.assert_close(rx, torch.zeros_like(rx), rtol=0, atol=1e-11)


@pytest.mark.parametrize(
    "structure, message",
    [
        ("blok dense", "structure 'blok' is not one of dense, block"),
        ("block", "structure gives 1 kind(s) (block) for 2 unknown group(s)"),
        ("block dense dense", "structure gives 3 kind(s)"),
    ],
)
def test_bad_structure_names_the_line(tmp_path, structure, message):
    """A misspelt or miscounted ``structure`` is an error at its line (it would otherwise
    silently mean 'dense': right results, slower)."""
    text = textwrap.dedent(SYSTEM).lstrip().format(**MEAN)
    text = text.replace("structure = 'block dense'", f"structure = '{structure}'")
    p = tmp_path / "bad.i"
    p.write_text(text)
    line = 1 + text.splitlines().index(f"    structure = '{structure}'")
    with pytest.raises(FatalError) as e:
        load_model(p, "model")
    assert message in str(e.value)
    assert f"bad.i:{line}" in str(e.value)


def test_traced_solve_uses_block_seeds_only_once_checked(tmp_path, monkeypatch):
    """Traced (torch.compile), the block-seeded Jacobian is used only where an eager call
    has checked it; either way the compiled solve gives the eager answer."""
    from neml2.models import implicit_update as iu

    used = []
    seeded = iu.ImplicitUpdate._block_seeded_fn

    def spy(self, *a):
        used.append(iu._tracing())
        return seeded(self, *a)

    monkeypatch.setattr(iu.ImplicitUpdate, "_block_seeded_fn", spy)
    model = _model(tmp_path, MEAN)
    given = _given((3,))
    args = [given[n] for n in model.input_spec]

    def solve(*xs):
        return tuple(o.data for o in model(*xs))

    torch._dynamo.reset()
    unchecked = torch.compile(solve, fullgraph=True)(*args)
    assert model._block_ok is None and True not in used  # traced, not checked: ordinary
    want = solve(*args)  # eager: checks the block seeds
    assert model._block_ok is True
    torch._dynamo.reset()
    used.clear()
    got = torch.compile(solve, fullgraph=True)(*args)
    assert True in used  # traced after the check: block-seeded
    for a, b, c in zip(got, want, unchecked, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-12, atol=1e-14)
        torch.testing.assert_close(c, b, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("kind, grains", [(DIAG, True), (MEAN, False), (SUM, False)])
def test_schur_solves_grain_by_grain_where_no_grain_reads_another(tmp_path, kind, grains):
    """With a Schur complement whose primary group is the block group, the primary block
    is solved grain by grain only where it is block-diagonal over the grains (checked
    with the block seeds): not where a grain's residual reads the mean of x (MEAN), nor
    where block seeds do not apply (SUM). The answer is the dense solve's either way."""
    model = _model(tmp_path, kind, schur=True)
    _, x, y = _solve(model, (5,))
    assert model._grain_ok is grains
    assert (model._schur.grains is not None) is grains
    if grains:
        rows, cols = model._schur.grains
        assert rows.tolist() == cols.tolist() == [[g] for g in range(G)]
    dense = _model(tmp_path, kind, schur=True, structure="dense dense")
    _, x0, y0 = _solve(dense, (5,))
    assert dense._schur.grains is None
    torch.testing.assert_close(x, x0, rtol=0, atol=1e-11)
    torch.testing.assert_close(y, y0, rtol=0, atol=1e-11)


def test_off_grain_check_fails_on_coupling_and_on_nothing_finite(tmp_path):
    """The primary block counts as grain-diagonal only where every finite entry off the
    grains' blocks is zero: a coupling entry, or off-block entries that are all NaN
    (nothing to decide on), leave the dense solve."""
    model = _model(tmp_path, DIAG, schur=True)
    given = {n: v for n, v in _given((3,)).items() if not n.endswith("~1")}
    guess = {"x": Scalar(torch.zeros(3, G, dtype=F64), 1), "y": Scalar(torch.zeros(3, dtype=F64))}
    ulay, rlay, _, _ = model._layouts(given, guess)
    model._schur.split(G)
    J = torch.eye(G + 1, dtype=F64).expand(3, G + 1, G + 1).clone()
    assert model._off_grain_zero(J, ulay, rlay, 1e-12)
    coupled = J.clone()
    coupled[1, 0, 1] = 1e-3
    assert not model._off_grain_zero(coupled, ulay, rlay, 1e-12)
    nan = J.clone()
    nan[..., :G, :G] = torch.where(torch.eye(G, dtype=torch.bool), 1.0, torch.nan)
    assert not model._off_grain_zero(nan, ulay, rlay, 1e-12)
    one_bad_point = J.clone()
    one_bad_point[0, :G, :G] = torch.nan  # a NaN point does not decide for the others
    assert model._off_grain_zero(one_bad_point, ulay, rlay, 1e-12)
