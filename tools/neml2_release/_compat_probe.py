"""Run inside the venvs of ``nox -s compat`` (only the packages installed there, never
tools/neml2_release itself).

``python _compat_probe.py reference MODEL.i OUT.pt``: py-eager's forward and Jacobian
of ``[Models]/elasticity`` at fixed strains (the environment of the compiler).

``python _compat_probe.py load ARTIFACT OUT.pt --expect DIST=VERSION ... --compiled-by V
--schema LO:HI``: in the deployment venv, load ARTIFACT with ``neml2.aoti.Model`` and
compare with the reference.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
from importlib import metadata
from pathlib import Path


def _strain():
    import torch

    g = torch.Generator().manual_seed(7)
    return {"strain": 1e-3 * torch.rand(5, 6, generator=g, dtype=torch.float64)}


def reference(model: Path, out: Path) -> None:
    import torch

    import neml2

    m = neml2.load_model(str(model), "elasticity")
    x = _strain()
    y = m.forward(x)
    _, jac = m.jacobian(x)
    torch.save(
        {"strain": x["strain"], "stress": y["stress"], "J": jac["stress"]["strain"]}, str(out)
    )
    print(f"reference: py-eager of neml2-models {metadata.version('neml2-models')}")


def load(artifact: Path, ref: Path, expect: list[str], compiled_by: str, schema: str) -> None:
    import torch

    import neml2.aoti as aoti

    for absent in ("neml2.hit", "neml2.models", "neml2.drivers", "neml2.compiler"):
        assert importlib.util.find_spec(absent) is None, f"{absent} must not be installed"
    for item in expect:
        dist, version = item.split("=", 1)
        assert metadata.version(dist) == version, f"{dist} {metadata.version(dist)} != {version}"
    lo, hi = (int(v) for v in schema.split(":"))
    assert aoti.SCHEMA_VERSION == hi, f"the runtime reads schema {aoti.SCHEMA_VERSION}, not {hi}"
    meta = json.loads((artifact / "metadata.json").read_text())
    assert lo <= meta["schema_version"] <= hi, meta["schema_version"]
    assert meta["neml2_compile_version"] == compiled_by, meta["neml2_compile_version"]

    r = torch.load(str(ref))
    m = aoti.Model(str(artifact))
    x = {"strain": r["strain"]}
    torch.testing.assert_close(m.forward(x)["stress"], r["stress"])
    _, jac = m.jacobian(x)
    torch.testing.assert_close(jac["stress"]["strain"], r["J"])
    installed = ", ".join(
        f"{d} {metadata.version(d)}" for d in ("neml2-tensors", "neml2-aoti-runtime")
    )
    print(
        f"loaded: {installed} ran an artifact of schema {meta['schema_version']} compiled "
        f"by neml2-compile {compiled_by}; forward and Jacobian equal py-eager's"
    )


def main() -> None:
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="mode", required=True)
    r = sub.add_parser("reference")
    r.add_argument("model", type=Path)
    r.add_argument("out", type=Path)
    ld = sub.add_parser("load")
    ld.add_argument("artifact", type=Path)
    ld.add_argument("ref", type=Path)
    ld.add_argument("--expect", action="append", default=[])
    ld.add_argument("--compiled-by", required=True)
    ld.add_argument("--schema", required=True)
    a = p.parse_args()
    if a.mode == "reference":
        reference(a.model, a.out)
    else:
        load(a.artifact, a.ref, a.expect, a.compiled_by, a.schema)


if __name__ == "__main__":
    main()
