"""Every file an artifact's metadata names lies inside the artifact directory.

A ``metadata.json`` naming a graph at ``../../etc/hostname``, at an absolute path, or
through a symlink leading out is refused, with one line naming the artifact and the
key, before anything is opened: by libneml2's loader (``neml2.aoti.Model``) and by the
Python reader (``read_metadata``, the per-device path). The artifacts here are
hand-written: a ``metadata.json`` and no graph at all.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import metadata

from neml2.aoti import Model, read_metadata
from neml2.tensors import FatalError

OUTSIDE = "lies outside the artifact directory"


def _artifact(tmp_path: Path, edit) -> Path:
    """``tmp_path/art/scale`` holding only a ``metadata.json`` changed by ``edit(meta)``."""
    art = tmp_path / "art" / "scale"
    (art / "cpu" / "float64").mkdir(parents=True)
    meta = metadata()
    edit(meta, art)
    (art / "metadata.json").write_text(json.dumps(meta))
    return art


def _graph(rel: str):
    def edit(meta, art):
        meta["targets"][0]["graphs"]["forward"] = rel

    return edit


def _symlink_out(meta, art):
    os.symlink("/etc/hostname", art / "cpu" / "float64" / "forward.pt2")


def _file(rel: str):
    def edit(meta, art):
        meta["graphs"]["forward"]["file"] = rel

    return edit


ESCAPES = [
    pytest.param(_graph("../../etc/hostname"), "'../../etc/hostname'", id="dot-dot"),
    pytest.param(_graph("cpu/../../outside.pt2"), "'cpu/../../outside.pt2'", id="dot-dot-inside"),
    pytest.param(_graph("/etc/hostname"), "'/etc/hostname'", id="absolute"),
    pytest.param(_graph("."), "'.'", id="the-artifact-itself"),
    pytest.param(_symlink_out, "'cpu/float64/forward.pt2'", id="symlink-out"),
]


@pytest.mark.parametrize(("edit", "shown"), ESCAPES)
def test_the_loader_refuses_a_graph_outside_the_artifact(tmp_path, edit, shown):
    art = _artifact(tmp_path, edit)
    with pytest.raises(FatalError) as e:
        Model(art)
    msg = str(e.value)
    assert "\n" not in msg
    assert msg.startswith(str(art / "metadata.json") + ": targets[0].graphs.forward = " + shown)
    assert OUTSIDE in msg


@pytest.mark.parametrize(("edit", "shown"), ESCAPES)
def test_the_python_reader_refuses_a_graph_outside_the_artifact(tmp_path, edit, shown):
    art = _artifact(tmp_path, edit)
    with pytest.raises(FatalError) as e:
        read_metadata(art)
    msg = str(e.value)
    assert "\n" not in msg
    assert msg.startswith(f"{art / 'metadata.json'}: targets[0].graphs.forward = {shown}")
    assert OUTSIDE in msg


def test_a_per_device_file_reads_through_the_same_check(tmp_path):
    art = _artifact(tmp_path, _graph("../../etc/hostname"))
    device = art / "cpu" / "scale_meta.json"
    device.write_text(
        json.dumps(
            {
                "schema_version": 1,
                "device": "cpu",
                "dtypes": ["float64"],
                "metadata": "../metadata.json",
            }
        )
    )
    with pytest.raises(
        FatalError, match=r"targets\[0\]\.graphs\.forward = '\.\./\.\./etc/hostname' lies"
    ):
        Model(device)


def test_a_graph_file_entry_outside_is_refused(tmp_path):
    art = _artifact(tmp_path, _file("../../../etc/hostname"))
    with pytest.raises(
        FatalError, match=r"graphs\.forward\.file = '\.\./\.\./\.\./etc/hostname' lies"
    ):
        read_metadata(art)


def test_paths_inside_pass_the_check(tmp_path):
    """A roundabout path that stays inside is accepted: a missing graph is then the error."""
    art = _artifact(tmp_path, _graph("cpu/../cpu/float64/gone.pt2"))
    assert read_metadata(art)[0] == art
    with pytest.raises(FatalError, match=r"graph file .*gone\.pt2 is missing"):
        Model(art)
