"""The artifact contract: one declaration (artifact_schema.json), checked on write and read."""

from __future__ import annotations

import json
from importlib import resources

import pytest

from neml2.aoti import SCHEMA_VERSION
from neml2.aoti._schema import RECORDS, check_artifact, check_read, check_written
from neml2.tensors import FatalError


def _good() -> dict:
    return {
        "schema_version": SCHEMA_VERSION,
        "torch_version": "2.13.0",
        "inputs": [{"name": "x", "type": "Scalar", "base_shape": [], "sub_batch": []}],
        "outputs": [{"name": "y", "type": "Scalar", "base_shape": []}],
        "derivatives": [{"output": "y", "input": "x"}],
        "parameters": [{"name": "a", "shape": [], "value": [1.0], "exposed": True}],
        "graphs": {"forward": {"file": "forward.pt2", "outputs": ["y"], "status": False}},
        "targets": [{"device": "cpu", "dtype": "float64", "graphs": {"forward": "f.pt2"}}],
    }


def test_the_declaration_is_the_version_and_fields():
    doc = json.loads(resources.files("neml2.aoti").joinpath("artifact_schema.json").read_text())
    assert doc["schema_version"] == SCHEMA_VERSION
    assert set(RECORDS) == {
        "metadata",
        "variable",
        "derivative",
        "parameter",
        "graph",
        "target",
        "device_metadata",
    }
    for kind, rec in RECORDS.items():
        assert rec.required, kind
        assert not set(rec.required) & set(rec.optional), kind
        assert rec.fields == rec.required + rec.optional


def test_a_valid_artifact_passes_both_checks():
    meta = _good()
    check_written("metadata", meta)
    check_artifact(meta, "m.json")


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda m: m.update(colour="red"), r"metadata \(metadata\) .* undeclared \['colour'\]"),
        (lambda m: m["inputs"][0].pop("type"), r"inputs\[0\] \(variable\) .* missing \['type'\]"),
        (lambda m: m["graphs"]["forward"].update(x=1), r"graphs.forward \(graph\)"),
        (lambda m: m["targets"][0].update(gpu=0), r"targets\[0\] \(target\)"),
    ],
)
def test_writing_outside_the_contract_is_refused(edit, message):
    meta = _good()
    edit(meta)
    with pytest.raises(FatalError, match=message):
        check_written("metadata", meta)


def test_reading_tolerates_undeclared_fields_but_not_missing_ones():
    meta = _good()
    meta["added_by_a_newer_compiler"] = 1
    check_artifact(meta, "m.json")
    del meta["derivatives"][0]["input"]
    with pytest.raises(
        FatalError, match=r"m.json: corrupt metadata \(missing key 'input' in derivatives\[0\]\)"
    ):
        check_artifact(meta, "m.json")


def test_a_record_that_is_not_an_object():
    with pytest.raises(FatalError, match=r"d.json: corrupt per-device metadata \(not a JSON"):
        check_read("device_metadata", [1], "d.json", "per-device metadata")
    meta = _good()
    meta["parameters"] = {"a": 1}
    with pytest.raises(FatalError, match="'parameters' is not a JSON list"):
        check_artifact(meta, "m.json")


def test_libneml2_reads_the_same_declaration():
    """The header libneml2 was built with (generated from artifact_schema.json at build
    time and shipped in the wheel's SDK) holds this version and these required fields."""
    import re

    header = resources.files("neml2.aoti").joinpath("include/neml2/aoti/schema.h").read_text()
    version = re.search(r"constexpr int64_t VERSION = (\d+);", header)
    assert version is not None and int(version.group(1)) == SCHEMA_VERSION
    arrays = dict(re.findall(r"std::string_view, \d+> (\w+)_required\{([^}]*)\};", header))
    assert set(arrays) == set(RECORDS)
    for kind, keys in arrays.items():
        assert tuple(re.findall(r'"([^"]+)"', keys)) == RECORDS[kind].required, kind
