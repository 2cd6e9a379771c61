"""The artifact contract in Python: the schema version and the fields of every record.

The contract itself is declared once, in ``artifact_schema.json`` beside this module
(libneml2's ``neml2/aoti/schema.h`` is generated from the same file at build time).
An artifact is ``metadata.json`` (a ``metadata`` record holding ``variable``,
``derivative``, ``parameter``, ``graph`` and ``target`` records) plus one
``device_metadata`` record per device folder. neml2-compile checks what it writes
with :func:`check_written`; the runtime checks what it reads with :func:`check_read`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from typing import Any

from neml2.tensors import FatalError


@dataclass(frozen=True)
class Record:
    """The fields of one kind of JSON object in an artifact.

    Attributes:
        required: the keys every such object has.
        optional: the keys it may have besides.
    """

    required: tuple[str, ...]
    optional: tuple[str, ...]

    @property
    def fields(self) -> tuple[str, ...]:
        """Every declared key, required first."""
        return self.required + self.optional


def _load() -> tuple[int, dict[str, Record]]:
    text = resources.files("neml2.aoti").joinpath("artifact_schema.json").read_text()
    doc = json.loads(text)
    records = {
        kind: Record(tuple(r["required"]), tuple(r["optional"]))
        for kind, r in doc["records"].items()
    }
    return int(doc["schema_version"]), records


SCHEMA_VERSION, RECORDS = _load()
"""``SCHEMA_VERSION``: the version this runtime reads and neml2-compile writes;
``RECORDS``: record kind -> :class:`Record`."""

#: where each list or map of records sits in ``metadata.json``
_NESTED = {
    "inputs": "variable",
    "outputs": "variable",
    "derivatives": "derivative",
    "parameters": "parameter",
    "targets": "target",
}


def _records(meta: Mapping[str, Any]):
    """``(kind, label, record)`` for *meta* and every record nested in it."""
    yield "metadata", "metadata", meta
    for key, kind in _NESTED.items():
        for i, r in enumerate(meta.get(key) or []):
            yield kind, f"{key}[{i}]", r
    graphs = meta.get("graphs") or {}
    if isinstance(graphs, Mapping):
        for name, g in graphs.items():
            yield "graph", f"graphs.{name}", g


def check_read(kind: str, record: Any, where: str, what: str, inside: str = "") -> None:
    """Check that *record* is a JSON object with every required key of *kind*.

    Keys the schema does not declare are allowed (a newer compiler may add
    optional fields without changing the version).

    Args:
        kind: the record kind, a key of :data:`RECORDS` (``"metadata"``,
            ``"variable"``, ...).
        record: the parsed JSON value.
        where: the file it came from, for the message.
        what: how the message calls the file (``"metadata"``, ``"per-device metadata"``).
        inside: where *record* sits in the file (``"inputs[0]"``), for the message;
            empty for the file's top-level object.

    Raises:
        FatalError: *record* is not an object or lacks a required key; the message
            names *where*, the record and the key.
    """
    at = f" in {inside}" if inside else ""
    if not isinstance(record, Mapping):
        raise FatalError(f"{where}: corrupt {what} (not a JSON object{at})")
    for key in RECORDS[kind].required:
        if key not in record:
            raise FatalError(f"{where}: corrupt {what} (missing key '{key}'{at})")


def check_artifact(meta: Any, where: str) -> None:
    """:func:`check_read` on a whole ``metadata.json``: the top-level record and every
    variable, derivative, parameter, target and graph record in it.

    Args:
        meta: the parsed ``metadata.json``.
        where: its path, for the message.

    Raises:
        FatalError: a record is not an object or lacks a required key (the message
            names the file, the record and the key).
    """
    check_read("metadata", meta, where, "metadata")
    for key in (*_NESTED, "graphs"):
        value = meta.get(key, [] if key != "graphs" else {})
        want = dict if key == "graphs" else list
        if not isinstance(value, want):
            raise FatalError(f"{where}: corrupt metadata ('{key}' is not a JSON {want.__name__})")
    for kind, label, record in _records(meta):
        if kind != "metadata":
            check_read(kind, record, where, "metadata", label)


def check_written(kind: str, record: Mapping[str, Any]) -> None:
    """Check a record about to be written: every required key, no undeclared one.

    Args:
        kind: the record kind; ``"metadata"`` checks the records nested in it too.
        record: the record.

    Raises:
        FatalError: a required key is missing or a key is not declared in
            ``artifact_schema.json`` (a compiler that writes outside the contract).
    """
    items = _records(record) if kind == "metadata" else [(kind, kind, record)]
    for k, label, r in items:
        spec = RECORDS[k]
        missing = [f for f in spec.required if f not in r]
        extra = [f for f in r if f not in spec.fields]
        if missing or extra:
            raise FatalError(
                f"artifact record {label} ({k}) breaks the artifact schema "
                f"{SCHEMA_VERSION}: missing {missing}, undeclared {extra} "
                "(declare new fields in neml2/aoti/artifact_schema.json)"
            )
