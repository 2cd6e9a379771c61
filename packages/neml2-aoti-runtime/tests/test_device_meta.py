"""neml2.aoti.Model from a per-device ``<artifact>/<device>/<model>_meta.json`` path.

The success path copies the session's "scale" artifact; the error paths use a
hand-written artifact directory (metadata.json only, no graphs): every one of them
is raised before a graph is read.
"""

from __future__ import annotations

import json
import shutil

import pytest
import torch
from conftest import metadata

from neml2.aoti import Model, read_metadata
from neml2.aoti._device_meta import is_device_metadata
from neml2.tensors import FatalError

F64 = torch.float64
GOOD = {"schema_version": 1, "device": "cpu", "dtypes": ["float64"], "metadata": "../metadata.json"}


def _artifact(tmp_path, content=GOOD, folder="cpu", name="scale_meta.json"):
    """A hand-written artifact ``tmp_path/scale`` whose ``folder/name`` holds *content*
    (a dict: JSON; a str: written as is; None: no such file). Returns that file's path."""
    art = tmp_path / "scale"
    (art / folder).mkdir(parents=True, exist_ok=True)
    (art / "metadata.json").write_text(json.dumps(metadata()))
    path = art / folder / name
    if content is not None:
        path.write_text(content if isinstance(content, str) else json.dumps(content))
    return path


@pytest.fixture
def with_device_meta(artifact, tmp_path):
    """A copy of the scale artifact with its ``cpu/scale_meta.json``."""
    art = tmp_path / "scale"
    shutil.copytree(artifact, art)
    path = art / "cpu" / "scale_meta.json"
    path.write_text(json.dumps(GOOD))
    return path


def test_model_from_device_metadata_runs_on_its_device(with_device_meta):
    m = Model(with_device_meta)
    assert m.path == with_device_meta.parent.parent
    assert m.device == torch.device("cpu") and m.dtype == F64
    x = {"x": torch.rand(5, dtype=F64), "strain": torch.rand(5, 6, dtype=F64)}
    ref = Model(with_device_meta.parent.parent).forward(x)
    out = m.forward(x)
    assert set(out) == {"y", "s"}
    torch.testing.assert_close(out["y"], ref["y"], rtol=0, atol=0)
    assert Model(str(with_device_meta), device="cpu", dtype=F64).device.type == "cpu"


def test_read_metadata_accepts_device_metadata(tmp_path):
    path = _artifact(tmp_path)
    art, meta = read_metadata(path)
    assert art == path.parent.parent
    assert meta["model"] == "scale"


def test_device_argument_other_than_the_file_names_both(tmp_path):
    path = _artifact(tmp_path)
    with pytest.raises(FatalError) as e:
        Model(path, device="cuda")
    msg = str(e.value)
    assert msg.startswith(str(path))
    assert "for device 'cpu', but device='cuda' was asked for" in msg


def test_missing_device_metadata(tmp_path):
    path = _artifact(tmp_path, content=None)
    with pytest.raises(FatalError, match=r"scale_meta\.json: per-device metadata file not found"):
        Model(path)


def test_device_metadata_not_json(tmp_path):
    path = _artifact(tmp_path, content="{not json")
    with pytest.raises(FatalError, match=r"corrupt per-device metadata \(not valid JSON"):
        Model(path)


def test_device_metadata_not_an_object(tmp_path):
    path = _artifact(tmp_path, content="[1, 2]")
    with pytest.raises(FatalError, match=r"corrupt per-device metadata \(not a JSON object\)"):
        Model(path)


def test_device_metadata_missing_key(tmp_path):
    path = _artifact(tmp_path, content={k: v for k, v in GOOD.items() if k != "dtypes"})
    with pytest.raises(FatalError, match=r"missing key 'dtypes'"):
        Model(path)


def test_device_metadata_bad_value(tmp_path):
    path = _artifact(tmp_path, content={**GOOD, "dtypes": "float64"})
    with pytest.raises(FatalError, match=r"'dtypes' is not a list of names"):
        Model(path)


def test_device_metadata_other_schema_version(tmp_path):
    path = _artifact(tmp_path, content={**GOOD, "schema_version": 2})
    with pytest.raises(FatalError) as e:
        Model(path)
    msg = str(e.value)
    assert msg.startswith(str(path))
    assert "per-device metadata schema_version 2 is not the 1 this runtime reads" in msg


def test_device_metadata_in_another_devices_folder(tmp_path):
    path = _artifact(tmp_path, folder="cuda", name="scale_meta.json")
    with pytest.raises(FatalError, match=r"names device 'cpu' but lies in folder 'cuda'"):
        Model(path)


def test_device_metadata_not_inside_an_artifact(tmp_path):
    lone = tmp_path / "lone" / "cpu" / "scale_meta.json"
    lone.parent.mkdir(parents=True)
    lone.write_text(json.dumps(GOOD))
    with pytest.raises(FatalError) as e:
        Model(lone)
    msg = str(e.value)
    assert msg.startswith(str(lone))
    assert "not inside a neml2 AOTI artifact" in msg and "does not exist" in msg


def test_device_metadata_pointing_at_another_artifact(tmp_path):
    other = _artifact(tmp_path / "other")
    path = _artifact(
        tmp_path, content={**GOOD, "metadata": str(other.parent.parent / "metadata.json")}
    )
    with pytest.raises(FatalError, match=r"not inside a neml2 AOTI artifact .*not the metadata"):
        Model(path)


def test_device_metadata_listing_an_uncompiled_dtype(tmp_path):
    path = _artifact(tmp_path, content={**GOOD, "dtypes": ["float64", "float32"]})
    with pytest.raises(FatalError) as e:
        Model(path)
    msg = str(e.value)
    assert msg.startswith(str(path))
    assert "has no target cpu/float32; compiled targets: cpu/float64" in msg


def test_device_metadata_file_names():
    assert is_device_metadata("out/elasticity/cpu/elasticity_meta.json")
    assert not is_device_metadata("out/elasticity/metadata.json")
    assert not is_device_metadata("out/elasticity/cpu/_meta.json")
    assert not is_device_metadata("out/elasticity")
