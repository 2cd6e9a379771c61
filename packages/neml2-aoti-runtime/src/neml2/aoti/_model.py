"""``neml2.aoti.Model``: load a neml2-compile artifact and call it (the py-aoti route).

The artifact (see docs/aoti.md) is ``metadata.json`` plus one ``.pt2`` per graph
and target. This class validates the metadata (schema, torch version), picks the
``<device>/<dtype>`` target, validates every call's inputs by name, trailing
shape, dtype and device, broadcasts their batch shapes, flattens them onto the
graphs' one dynamic batch axis and restores ``(*B, *base)`` on the way out.
Every failure is a :class:`neml2.tensors.FatalError` naming the file or variable.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from difflib import get_close_matches
from pathlib import Path
from typing import Any

import torch

from neml2.aoti import _core
from neml2.tensors import FatalError

#: The metadata schema this runtime reads.
SCHEMA_VERSION = 1
_DTYPES = {"float64": torch.float64, "float32": torch.float32}


class Blocks(dict):
    """``J[out]`` of a Jacobian: a dict whose missing keys say which ``-d`` pair to compile."""

    def __init__(self, out: str, known: list[str], *args):
        super().__init__(*args)
        self._out, self._known = out, known

    def __missing__(self, key):
        raise FatalError(
            f"the Jacobian block {self._out}:{key} was not compiled (compiled pairs: "
            f"{', '.join(self._known) or 'none'}); recompile with "
            f"neml2-compile -d {self._out}:{key}"
        )


class Jacobian(dict):
    """``J[out][in]``; missing outputs raise FatalError naming the pair to compile."""

    def __init__(self, known: list[str]):
        super().__init__()
        self._known = known

    def __missing__(self, key):
        raise FatalError(
            f"no Jacobian block of output '{key}' was compiled (compiled pairs: "
            f"{', '.join(self._known) or 'none'}); recompile with neml2-compile -d {key}:"
        )


def read_metadata(path: str | Path) -> tuple[Path, dict[str, Any]]:
    """``(artifact_dir, metadata)`` from an artifact directory or its ``metadata.json``."""
    p = Path(path)
    meta_path = p / "metadata.json" if p.is_dir() else p
    if not meta_path.is_file():
        raise FatalError(f"{meta_path}: no neml2 AOTI artifact here (metadata.json not found)")
    try:
        meta = json.loads(meta_path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise FatalError(f"{meta_path}: corrupt metadata (not valid JSON: {e})") from e
    if not isinstance(meta, dict):
        raise FatalError(f"{meta_path}: corrupt metadata (not a JSON object)")
    for key in ("schema_version", "torch_version", "inputs", "outputs", "targets", "graphs"):
        if key not in meta:
            raise FatalError(f"{meta_path}: corrupt metadata (missing key '{key}')")
    if meta["schema_version"] != SCHEMA_VERSION:
        raise FatalError(
            f"{meta_path}: metadata schema_version {meta['schema_version']!r} is not the "
            f"{SCHEMA_VERSION} this runtime reads; recompile it with this neml2-compile"
        )
    _core.check_torch_compatible(str(meta["torch_version"]), str(meta_path))
    try:
        for v in (*meta["inputs"], *meta["outputs"]):
            str(v["name"]), str(v["type"]), [int(s) for s in v["base_shape"]]
        for t in meta["targets"]:
            str(t["device"]), str(t["dtype"]), dict(t["graphs"])
        for d in meta.get("derivatives", []):
            str(d["output"]), str(d["input"])
        for q in meta.get("parameters", []):
            str(q["name"]), [int(s) for s in q["shape"]], [float(x) for x in q["value"]]
    except (KeyError, TypeError, ValueError) as e:
        raise FatalError(f"{meta_path}: corrupt metadata ({type(e).__name__}: {e})") from e
    return meta_path.parent, meta


class Model:
    """A compiled neml2 model: name-keyed ``forward`` / ``jvp`` / ``jacobian``.

    ``Model(path, device=None, dtype=None)``: *path* is the artifact directory or
    its ``metadata.json``; *device* / *dtype* pick a compiled target (default: the
    first one listed).
    """

    def __init__(
        self,
        path: str | Path,
        device: str | torch.device | None = None,
        dtype: str | torch.dtype | None = None,
    ):
        self.path, self.metadata = read_metadata(path)
        meta = self.metadata
        where = self.path / "metadata.json"
        targets = meta["targets"]
        if not targets:
            raise FatalError(f"{where}: the artifact has no compiled targets")
        want_dev = None if device is None else torch.device(device).type
        want_dt = None
        if dtype is not None:
            want_dt = dtype if isinstance(dtype, str) else str(dtype).removeprefix("torch.")
        chosen = [
            t
            for t in targets
            if (want_dev is None or t["device"] == want_dev)
            and (want_dt is None or t["dtype"] == want_dt)
        ]
        if not chosen:
            have = ", ".join(f"{t['device']}/{t['dtype']}" for t in targets)
            raise FatalError(
                f"{where}: no target for device {want_dev or 'any'} and dtype "
                f"{want_dt or 'any'}; compiled targets: {have}"
            )
        self.target = chosen[0]
        if self.target["dtype"] not in _DTYPES:
            raise FatalError(f"{where}: unknown dtype {self.target['dtype']!r}")
        self._dtype = _DTYPES[self.target["dtype"]]
        self._device = torch.device(self.target["device"])
        self.input_names = [v["name"] for v in meta["inputs"]]
        self.output_names = [v["name"] for v in meta["outputs"]]
        self.input_types = {v["name"]: v["type"] for v in meta["inputs"]}
        self.output_types = {v["name"]: v["type"] for v in meta["outputs"]}
        self._in_base = {v["name"]: [int(s) for s in v["base_shape"]] for v in meta["inputs"]}
        self._out_base = {v["name"]: [int(s) for s in v["base_shape"]] for v in meta["outputs"]}
        self.derivatives = [(d["output"], d["input"]) for d in meta.get("derivatives", [])]
        # graph inputs after the model inputs, in metadata order: the promoted (-p,
        # "exposed") parameters and internal constants the compiler lifted
        self._params: dict[str, torch.Tensor] = {}
        self._hidden: dict[str, torch.Tensor] = {}
        self._param_order: list[str] = []
        for q in meta.get("parameters", []):
            value = torch.tensor(q["value"], dtype=torch.float64).reshape(q["shape"])
            value = value.to(dtype=self._dtype, device=self._device)
            (self._params if q.get("exposed", True) else self._hidden)[q["name"]] = value
            self._param_order.append(q["name"])
        self._param_shapes = {n: tuple(v.shape) for n, v in self._params.items()}
        self._runners: dict[str, Any] = {}
        for g in self.target["graphs"].values():
            f = self.path / g
            if not f.is_file():
                raise FatalError(f"{where}: graph file {f} is missing")

    # ------------------------------------------------------------------ introspection
    @property
    def input_base_shapes(self) -> list[tuple[int, ...]]:
        return [tuple(self._in_base[n]) for n in self.input_names]

    @property
    def output_base_shapes(self) -> list[tuple[int, ...]]:
        return [tuple(self._out_base[n]) for n in self.output_names]

    @property
    def device(self) -> torch.device:
        return self._device

    @property
    def dtype(self) -> torch.dtype:
        return self._dtype

    def named_parameters(self) -> dict[str, torch.Tensor]:
        """The promoted parameters (mutable in place; the next call sees the change)."""
        return self._params

    def set_parameter(self, name: str, value: Any) -> None:
        """Replace promoted parameter *name* wholesale (same shape as compiled)."""
        if name not in self._params:
            raise FatalError(
                f"no promoted parameter '{name}'; promoted: {', '.join(self._params) or '(none)'}"
                " (promote one with neml2-compile -p NAME)"
            )
        t = torch.as_tensor(value, dtype=self._dtype, device=self._device)
        if tuple(t.shape) != self._param_shapes[name]:
            raise FatalError(
                f"parameter '{name}' has shape {tuple(t.shape)} but was compiled with shape "
                f"{self._param_shapes[name]}"
            )
        self._params[name] = t.clone()

    def __repr__(self) -> str:
        return (
            f"neml2.aoti.Model('{self.path}', {self.target['device']}/{self.target['dtype']}, "
            f"inputs={self.input_names}, outputs={self.output_names})"
        )

    # ------------------------------------------------------------------ calls
    def _runner(self, graph: str):
        r = self._runners.get(graph)
        if r is None:
            rel = self.target["graphs"].get(graph)
            if rel is None:
                raise FatalError(
                    f"{self.path}: the artifact has no '{graph}' graph; recompile with "
                    "neml2-compile -d OUT:IN to get derivatives"
                )
            try:
                r = torch._inductor.aoti_load_package(str(self.path / rel))
            except Exception as e:
                raise FatalError(f"{self.path / rel}: cannot load the compiled graph: {e}") from e
            self._runners[graph] = r
        return r

    def _prepare(self, inputs: Mapping[str, Any]) -> tuple[list[int], list[torch.Tensor]]:
        if not isinstance(inputs, Mapping):
            raise FatalError(f"inputs must be a dict of name -> tensor, got {type(inputs)}")
        unknown = [n for n in inputs if n not in self._in_base]
        if unknown:
            close = get_close_matches(unknown[0], self.input_names, n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            raise FatalError(
                f"unknown input '{unknown[0]}'{hint}; the model's inputs are: "
                f"{', '.join(self.input_names)}"
            )
        for n, x in inputs.items():
            if not isinstance(x, torch.Tensor):
                raise FatalError(f"input '{n}' is a {type(x).__name__}, not a torch.Tensor")
            if x.dtype != self._dtype:
                raise FatalError(
                    f"input '{n}' has dtype {x.dtype} but the model was compiled for "
                    f"{self._dtype} (target {self.target['device']}/{self.target['dtype']})"
                )
            if x.device.type != self._device.type:
                raise FatalError(
                    f"input '{n}' is on {x.device} but the model was compiled for "
                    f"{self._device.type}"
                )
        batch = list(_core.broadcast_batch_shape(dict(inputs), self._in_base))
        n = math.prod(batch)
        flat = []
        for name in self.input_names:
            base = self._in_base[name]
            x = inputs[name].expand((*batch, *base)).reshape(n, *base)
            flat.append(x.contiguous())
        return batch, flat

    def _run(self, graph: str, flat: list[torch.Tensor]) -> list[torch.Tensor]:
        runner = self._runner(graph)
        params = [
            (self._params[p] if p in self._params else self._hidden[p]).contiguous()
            for p in self._param_order
        ]
        out = runner(*flat, *params)
        return list(out) if isinstance(out, list | tuple) else [out]

    @staticmethod
    def _unflatten(y: torch.Tensor, batch: list[int], n: int, base: list[int]) -> torch.Tensor:
        if y.dim() == len(base):  # batch-independent: broadcast it
            y = y.expand((n, *base))
        return y.reshape((*batch, *base))

    def forward(self, inputs: Mapping[str, Any]) -> dict[str, torch.Tensor]:
        """``{output: (*B, *out_base)}`` for ``{input: (*B, *in_base)}``."""
        batch, flat = self._prepare(inputs)
        n = math.prod(batch)
        out = self._run("forward", flat)
        return {
            o: self._unflatten(y, batch, n, self._out_base[o])
            for o, y in zip(self.output_names, out, strict=True)
        }

    __call__ = forward

    def jacobian(
        self, inputs: Mapping[str, Any]
    ) -> tuple[dict[str, torch.Tensor], dict[str, dict[str, torch.Tensor]]]:
        """Outputs and the compiled blocks ``J[out][in]`` at ``(*B, *out_base, *in_base)``."""
        if not self.derivatives:
            raise FatalError(
                f"{self.path}: the artifact was compiled without derivatives; recompile with "
                "neml2-compile -d OUT:IN (e.g. -d : for the full Jacobian)"
            )
        batch, flat = self._prepare(inputs)
        n = math.prod(batch)
        res = self._run("jacobian", flat)
        nout = len(self.output_names)
        out = {
            o: self._unflatten(y, batch, n, self._out_base[o])
            for o, y in zip(self.output_names, res[:nout], strict=True)
        }
        known = [f"{o}:{i}" for o, i in self.derivatives]
        J = Jacobian(known)
        for (o, i), y in zip(self.derivatives, res[nout:], strict=True):
            J.setdefault(o, Blocks(o, known))[i] = self._unflatten(
                y, batch, n, [*self._out_base[o], *self._in_base[i]]
            )
        return out, J

    def jvp(
        self, inputs: Mapping[str, Any], tangents: Mapping[str, Any]
    ) -> tuple[dict[str, torch.Tensor], dict[str, torch.Tensor]]:
        """Outputs and ``sum_i J[out][i] . t_i`` for every output whose needed blocks were
        compiled (missing tangents count as zero)."""
        unknown = [k for k in tangents if k not in self._in_base]
        if unknown:
            raise FatalError(
                f"tangent for unknown input(s) {', '.join(unknown)}; inputs: "
                f"{', '.join(self.input_names)}"
            )
        have = set(self.derivatives)
        given = [i for i in self.input_names if i in tangents]
        usable = [o for o in self.output_names if all((o, i) in have for i in given)]
        if not usable:
            raise FatalError(
                f"no output has compiled derivatives w.r.t. all of {', '.join(given)} "
                f"(compiled pairs: {', '.join(f'{o}:{i}' for o, i in self.derivatives) or 'none'})"
                f"; recompile with neml2-compile -d :{given[0] if given else ''}"
            )
        out, J = self.jacobian(inputs)
        res = {}
        for o in usable:
            nbo = len(self._out_base[o])
            acc = torch.zeros_like(out[o])
            for i in given:
                t = torch.as_tensor(tangents[i], dtype=self._dtype, device=self._device)
                base = self._in_base[i]
                nbi = len(base)
                tbatch = _core.batch_shape_of(f"tangent of {i}", t, base)
                block = J[o][i]  # (*B, *out_base, *in_base)
                tb = t.reshape((*tbatch, *([1] * nbo), *base))
                try:
                    prod = block * tb
                except RuntimeError as e:
                    xb = tuple(out[o].shape[: out[o].dim() - nbo])
                    raise FatalError(
                        f"tangent of '{i}' has batch shape {tuple(tbatch)}, which does not "
                        f"broadcast with the inputs' batch shape {xb}"
                    ) from e
                acc = acc + (prod.flatten(-nbi).sum(-1) if nbi else prod)
            res[o] = acc
        return out, res
