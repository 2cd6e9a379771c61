"""Per-device metadata files: ``<artifact>/<device>/<model>_meta.json``.

neml2-compile writes one into each device folder of an artifact. Given that one
path, a runtime knows the artifact (the directory holding ``metadata.json``) and
the device to run on. The file is a JSON object with four keys::

    {"schema_version": 1, "device": "cpu", "dtypes": ["float64"],
     "metadata": "../metadata.json"}

``schema_version`` is the artifact's (that of ``metadata.json``); ``dtypes`` are the
dtype folders compiled for this device; ``metadata`` is the path of the artifact's
``metadata.json`` relative to this file's folder. Everything else (inputs, graphs,
parameters) stays in ``metadata.json``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from neml2.aoti._schema import SCHEMA_VERSION, check_read
from neml2.tensors import FatalError

#: how a per-device metadata file's name ends (``elasticity_meta.json``)
SUFFIX = "_meta.json"


def read_json_object(path: Path, what: str, kind: str) -> dict[str, Any]:
    """The JSON object in *path* (an artifact's ``metadata.json`` or a per-device file,
    *what* in the messages): a *kind* record of the artifact schema (``neml2.aoti._schema``)
    of this runtime's ``SCHEMA_VERSION``; else a FatalError naming *path*."""
    try:
        meta = json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise FatalError(f"{path}: corrupt {what} (not valid JSON: {e})") from e
    check_read(kind, meta, str(path), what)
    if meta["schema_version"] != SCHEMA_VERSION:
        raise FatalError(
            f"{path}: {what} schema_version {meta['schema_version']!r} is not the "
            f"{SCHEMA_VERSION} this runtime reads; recompile it with this neml2-compile"
        )
    return meta


def is_device_metadata(path: str | Path) -> bool:
    """Whether *path* is named like a per-device metadata file (it need not exist)."""
    name = Path(path).name
    return name.endswith(SUFFIX) and len(name) > len(SUFFIX)


def read_device_metadata(path: str | Path) -> tuple[Path, dict[str, Any]]:
    """``(artifact_dir, content)`` of the per-device metadata file *path*.

    FatalError (naming *path*) when the file is missing, is not a JSON object with
    the four keys, has another ``schema_version`` than this runtime's, does not lie in
    the folder of the device it names, or does not point at the ``metadata.json`` of the
    artifact that folder belongs to.
    """
    p = Path(path)
    if not p.is_file():
        raise FatalError(
            f"{p}: per-device metadata file not found (neml2-compile writes "
            f"<artifact>/<device>/<model>{SUFFIX})"
        )
    meta = read_json_object(p, "per-device metadata", "device_metadata")
    device, dtypes, rel = meta["device"], meta["dtypes"], meta["metadata"]
    if not isinstance(device, str) or not device:
        raise FatalError(f"{p}: corrupt per-device metadata ('device' is not a device name)")
    if not isinstance(dtypes, list) or not all(isinstance(d, str) for d in dtypes):
        raise FatalError(f"{p}: corrupt per-device metadata ('dtypes' is not a list of names)")
    if not isinstance(rel, str) or not rel:
        raise FatalError(f"{p}: corrupt per-device metadata ('metadata' is not a path)")
    if p.parent.name != device:
        raise FatalError(
            f"{p}: names device '{device}' but lies in folder '{p.parent.name}'; a per-device "
            f"metadata file lives in <artifact>/{device}/"
        )
    target = p.parent / rel
    if not target.is_file():
        raise FatalError(
            f"{p}: not inside a neml2 AOTI artifact ('metadata' = {rel!r} names {target}, "
            "which does not exist)"
        )
    artifact = p.resolve().parent.parent
    if target.resolve() != artifact / "metadata.json":
        raise FatalError(
            f"{p}: not inside a neml2 AOTI artifact ('metadata' = {rel!r} names {target}, "
            f"not the metadata.json of {artifact}, the folder holding '{device}/')"
        )
    return p.parent.parent, meta
