"""Every real input of the shared conformance folder parses, renders and re-parses."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from neml2 import hit

# the repository's copy of the reference's inputs (NEML2_CONFORMANCE_DIR overrides)
CONFORMANCE = Path(
    os.environ.get(
        "NEML2_CONFORMANCE_DIR",
        Path(__file__).resolve().parents[3] / "tests-integration" / "conformance" / "data",
    )
)

FILES = sorted(CONFORMANCE.rglob("*.i")) if CONFORMANCE.is_dir() else []
IDS = [str(f.relative_to(CONFORMANCE)) for f in FILES]
needs_folder = pytest.mark.skipif(
    not FILES, reason=f"conformance inputs not found under {CONFORMANCE}"
)


@needs_folder
@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_render_is_byte_identical(path: Path):
    text = path.read_text()
    root = hit.parse_file(path)
    assert hit.render(root) == text


@needs_folder
@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_reparse_gives_identical_tree(path: Path):
    root = hit.parse_file(path)
    again = hit.parse(hit.render(root), str(path))
    assert hit.structure(again) == hit.structure(root)


@needs_folder
@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_canonical_format_keeps_tree_and_is_idempotent(path: Path):
    root = hit.parse_file(path)
    formatted = hit.format_node(root)
    assert hit.structure(hit.parse(formatted)) == hit.structure(root)
    assert hit.format_text(formatted) == formatted


@needs_folder
def test_folder_is_populated(conformance_files):
    assert len(conformance_files) == len(FILES) > 0


@needs_folder
def test_every_file_has_models_and_values():
    for path in FILES:
        root = hit.parse_file(path)
        assert root.find("Models") is not None, path
        for section in root.walk():
            for p in section.params():
                assert isinstance(p.raw, str)
                p.as_list()  # splitting never fails


@needs_folder
def test_real_file_details():
    taylor = CONFORMANCE / "regression/solid_mechanics/crystal_plasticity/taylor/model.i"
    if not taylor.exists():
        pytest.skip("taylor input not present")
    root = hit.parse_file(taylor)
    expr = root.find("Tensors/initial_slip_hardening").param("expr").raw
    assert expr.startswith("Scalar(torch.zeros(5")
    assert expr.endswith(".sub_batch.retag(1)")
    eq = root.find("EquationSystems/eq_sys")
    assert eq.param("unknowns").as_matrix() == [
        ["elastic_strain", "orientation", "slip_hardening"],
        ["deformation_rate", "target_cauchy_stress"],
    ]
    # two [Models] blocks: find() looks through both
    assert root.find("Models/mixed_control") is not None
    assert root.find("Models/model").param("models").as_list() == [
        "model_bare",
        "compute_mixed_state",
    ]
    assert root.find("Solvers/newton").param("max_linesearch_iterations").as_int() == 5
    assert root.find("Models/slip_rule").param("gamma0").as_float() == pytest.approx(0.2)
