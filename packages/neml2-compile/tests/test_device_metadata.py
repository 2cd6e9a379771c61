"""The per-device ``<device>/NAME_meta.json`` neml2-compile writes, read back by
``neml2.aoti.Model`` (the session's one elasticity compile; no compile of its own)."""

from __future__ import annotations

import json

import torch

from neml2.compiler import SCHEMA_VERSION


def test_compile_writes_one_device_metadata_file_per_device(compiled):
    res, _ = compiled
    path = res.artifact_dir / "cpu" / "elasticity_meta.json"
    assert res.device_metadata_paths == {"cpu": path}
    assert json.loads(path.read_text()) == {
        "schema_version": SCHEMA_VERSION,
        "device": "cpu",
        "dtypes": ["float64"],
        "metadata": "../metadata.json",
    }
    assert (path.parent / "../metadata.json").resolve() == res.metadata_path.resolve()


def test_runtime_loads_the_device_metadata_path(compiled):
    """The seeds' form: ``neml2.aoti.Model("<dir>/elasticity/cpu/elasticity_meta.json")``."""
    from neml2.aoti import Model

    res, _ = compiled
    m = Model(res.artifact_dir / "cpu" / "elasticity_meta.json")
    assert m.device == torch.device("cpu") and m.dtype == torch.float64
    assert m.input_names == ["strain"] and m.output_names == ["stress"]
    strain = torch.tensor([[1e-3, 0, 0, 0, 0, 0]], dtype=torch.float64)
    ref = Model(res.artifact_dir).forward({"strain": strain})["stress"]
    torch.testing.assert_close(m.forward({"strain": strain})["stress"], ref, rtol=0, atol=0)
