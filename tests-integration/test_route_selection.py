"""Which cells of the route matrix a run collects, and how pytest-xdist splits the work.

The default ``integration`` session leaves py-jit of Taylor out (``NEML2_ROUTE_EXCLUDE``)
and lets ``routes/test_jit_one_process.py`` be the py-jit cells of its models (the
matrix's copies are deselected): a mistake in either would drop cells silently, so the
collected node ids are checked here.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROUTES = HERE / "routes"


def _collect(**env_vars: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NEML2_ROUTE")}
    env.update(env_vars)
    args = ["-m", "pytest", "-q", "--collect-only", "-p", "no:cacheprovider", str(ROUTES)]
    return subprocess.run(
        [sys.executable, *args],
        cwd=HERE,
        env=env,
        capture_output=True,
        text=True,
    )


def test_excluded_cells_and_cells_checked_by_the_sequence_test_are_not_collected():
    out = _collect(NEML2_ROUTE_MODELS="elasticity,taylor", NEML2_ROUTE_EXCLUDE="py-jit:taylor")
    assert out.returncode == 0, out.stdout + out.stderr
    ids = {line.split("::", 1)[1] for line in out.stdout.splitlines() if "::" in line}
    matrix = {i for i in ids if i.startswith("test_route_matches_py_eager[")}
    # excluded: not collected at all; every other route of Taylor stays
    assert not any("[py-jit-taylor-" in i for i in matrix)
    for route in ("py-eager", "py-aoti", "cpp-aoti", "cpp-dispatch", "cpp-eager"):
        assert f"test_route_matches_py_eager[{route}-taylor-jacobian]" in matrix
    # elasticity's py-jit cells are the sequence test's; the matrix's copies are deselected
    assert not any("[py-jit-elasticity-" in i for i in matrix)
    for op in ("forward", "jvp", "jacobian"):
        assert f"test_py_jit_in_sequence[elasticity-{op}]" in ids
        assert f"test_route_matches_py_eager[py-aoti-elasticity-{op}]" in matrix
    assert "3 deselected" in out.stdout, out.stdout[-2000:]


def test_an_operation_left_out_goes_from_the_matrix_and_the_sequence_test_alike():
    out = _collect(
        NEML2_ROUTE_MODELS="elasticity,chaboche",
        NEML2_ROUTE_EXCLUDE="py-jit:crystal_per_slip:jvp,py-jit:chaboche:jvp,"
        "cpp-eager:elasticity:jacobian",
    )
    assert out.returncode == 0, out.stdout + out.stderr
    ids = {line.split("::", 1)[1] for line in out.stdout.splitlines() if "::" in line}
    # the sequence test: the left-out jvp cells are gone, forward and Jacobian stay
    assert "test_py_jit_in_sequence[chaboche-jvp]" not in ids
    assert "test_py_jit_in_sequence[crystal_per_slip-jvp]" not in ids
    for model in ("chaboche", "crystal_per_slip"):
        for op in ("forward", "jacobian"):
            assert f"test_py_jit_in_sequence[{model}-{op}]" in ids
    # the matrix: one operation of one route goes, the route's other operations stay
    assert "test_route_matches_py_eager[cpp-eager-elasticity-jacobian]" not in ids
    assert "test_route_matches_py_eager[cpp-eager-elasticity-jvp]" in ids
    assert "test_route_matches_py_eager[py-aoti-elasticity-jacobian]" in ids


def test_the_default_integration_exclusions_are_well_formed():
    spec = importlib.util.spec_from_file_location("_noxfile", HERE.parent / "noxfile.py")
    noxfile = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(noxfile)
    out = _collect(
        NEML2_ROUTE_MODELS=",".join(noxfile.CI_ROUTE_MODELS),
        NEML2_ROUTE_EXCLUDE=",".join(noxfile.CI_ROUTE_EXCLUDE),
    )
    assert out.returncode == 0, out.stdout + out.stderr
    ids = [line.split("::", 1)[1] for line in out.stdout.splitlines() if "::" in line]
    # every model's forward stays in the sequence, in collection order, the crystal
    # model's compiled last
    sequence = [i for i in ids if i.startswith("test_py_jit_in_sequence[")]
    for model in ("elasticity", "j2_isoharden", "chaboche", "pyrolysis", "crystal_per_slip"):
        assert f"test_py_jit_in_sequence[{model}-forward]" in sequence
    assert sequence[-1] == "test_py_jit_in_sequence[crystal_per_slip-forward]", sequence
    assert "test_py_jit_in_sequence[crystal_per_slip-jacobian]" not in sequence


def test_at_artifact_leaves_out_every_route_that_runs_the_artifact():
    import neml2.routes

    out = _collect(NEML2_ROUTE_MODELS="elasticity", NEML2_ROUTE_EXCLUDE="@artifact:elasticity")
    assert out.returncode == 0, out.stdout + out.stderr
    ids = {line.split("::", 1)[1] for line in out.stdout.splitlines() if "::" in line}
    for r in neml2.routes.ROUTES:
        cell = f"test_route_matches_py_eager[{r.name}-elasticity-forward]"
        if r.name == "py-jit":
            cell = "test_py_jit_in_sequence[elasticity-forward]"
        assert (cell in ids) != r.artifact, (r.name, sorted(ids))


def test_a_bad_exclusion_is_a_usage_error_that_names_the_variable():
    out = _collect(NEML2_ROUTE_EXCLUDE="py-jit:no_such_model")
    assert out.returncode != 0
    assert "NEML2_ROUTE_EXCLUDE: 'py-jit:no_such_model' is not ROUTE:MODEL" in (
        out.stdout + out.stderr
    )
    out = _collect(NEML2_ROUTE_EXCLUDE="py-jit:elasticity:hessian")
    assert out.returncode != 0
    assert "'py-jit:elasticity:hessian' is not ROUTE:MODEL or ROUTE:MODEL:OP" in (
        out.stdout + out.stderr
    )


def test_conformance_cases_and_matrix_models_are_work_units_of_their_own():
    spec = importlib.util.spec_from_file_location("_integration_conftest", HERE / "conftest.py")
    conftest = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(conftest)
    case = "tests-integration/conformance/test_conformance.py::test_case[models/a/model.i]"
    assert conftest.route_matrix_scope(case) == case
    cell = (
        "tests-integration/routes/test_routes.py::test_route_matches_py_eager[py-aoti-taylor-jvp]"
    )
    assert conftest.route_matrix_scope(cell) == "route matrix: taylor"
    other = "tests-integration/conformance/test_conformance.py::test_folder_is_there"
    assert conftest.route_matrix_scope(other) is None


def test_the_docs_say_what_the_noxfile_runs():
    """docs/development.md's "What default CI runs" is generated (docs/_hooks/ci_scope.py)
    from tools/neml2_ci_scope.py, the module the noxfile takes its selection from."""
    spec = importlib.util.spec_from_file_location("_noxfile", HERE.parent / "noxfile.py")
    noxfile = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(noxfile)
    spec = importlib.util.spec_from_file_location(
        "_ci_scope_hook", HERE.parent / "docs" / "_hooks" / "ci_scope.py"
    )
    hook = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hook)
    import neml2_ci_scope as scope

    assert noxfile.CI_ROUTE_MODELS is scope.CI_ROUTE_MODELS
    assert noxfile.CI_ROUTE_EXCLUDE is scope.CI_ROUTE_EXCLUDE
    assert noxfile.nox.options.sessions == scope.DEFAULT_SESSIONS
    assert hook.MARKER in (HERE.parent / "docs" / "development.md").read_text()
    text = hook.section()
    # the rows say what the cells are: Taylor on py-jit and its artifact routes left out
    assert "| taylor | all | — | — | — | — | all |" in text
    assert "| elasticity | all | all | all | all | all | all |" in text
    assert "| chaboche | all | forward, jacobian | — | — | — | all |" in text
    for session in scope.DEFAULT_SESSIONS:
        assert f"`{session}`" in text
