"""``neml2.aoti.Model``: load a neml2-compile artifact and call it (the py-aoti route).

The artifact (see docs/aoti.md) is ``metadata.json`` plus one ``.pt2`` per graph
and target. The calls run in libneml2's ``neml2::aoti::Model`` (the cpp-aoti
runtime, through the pybind module ``_core``), which validates inputs by name,
trailing shape, dtype and device, broadcasts their batch shapes, runs the graphs
on one flattened batch axis and restores ``(*B, *base)`` (``(*B, *sub_batch, *base)``
for variables with a sub-batch shape, e.g. the per-slip axis of crystal plasticity).
This wrapper adds the Python niceties (dict subclasses whose missing keys say which ``-d`` pair to
compile, suggestions for misspelt names) and reads the metadata for the HIT shim.
Every failure is a :class:`neml2.tensors.FatalError` naming the file or variable.
"""

from __future__ import annotations

import functools
import numbers
from collections.abc import Mapping
from difflib import get_close_matches
from pathlib import Path
from typing import Any

import torch

from neml2.aoti import _core
from neml2.aoti._device_meta import is_device_metadata, read_device_metadata, read_json_object
from neml2.aoti._schema import check_artifact
from neml2.tensors import FatalError, broadcast_batch_shapes, checked_parameter


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


def sub_batch_shape(v: Mapping[str, Any]) -> tuple[int, ...]:
    """Read a variable's sub-batch shape from its metadata entry.

    Args:
        v: one entry of ``metadata["inputs"]`` or ``metadata["outputs"]``.

    Returns:
        The ``sub_batch`` shape; ``()`` when the entry has none, or has ``0``
            (written before sub-batch support).
    """
    s = v.get("sub_batch", [])
    return () if isinstance(s, int) and s == 0 else tuple(int(d) for d in s)


def read_metadata(path: str | Path) -> tuple[Path, dict[str, Any]]:
    """Read and check the metadata of a compiled artifact.

    Args:
        path: the artifact directory, its ``metadata.json``, or one of its
            per-device ``<device>/<model>_meta.json`` files.

    Returns:
        ``(artifact_dir, metadata)``: the directory that holds ``metadata.json``,
            and its content (keys ``schema_version``, ``torch_version``,
            ``inputs``, ``outputs``, ``targets``, ``graphs``, and where present
            ``derivatives`` and ``parameters``).

    Raises:
        FatalError: no ``metadata.json`` at *path*; a file that is not valid
            JSON, lacks a key or has another ``schema_version`` than
            ``neml2.aoti.SCHEMA_VERSION``; an artifact compiled with another torch
            major.minor version; corrupt entries. The message names the file.
    """
    p = Path(path)
    if is_device_metadata(p):
        p, _ = read_device_metadata(p)
    meta_path = p / "metadata.json" if p.is_dir() else p
    if not meta_path.is_file():
        raise FatalError(f"{meta_path}: no neml2 AOTI artifact here (metadata.json not found)")
    meta = read_json_object(meta_path, "metadata", "metadata")
    _core.check_torch_compatible(str(meta["torch_version"]), str(meta_path))
    check_artifact(meta, str(meta_path))
    try:
        for v in (*meta["inputs"], *meta["outputs"]):
            str(v["name"]), str(v["type"]), [int(s) for s in v["base_shape"]]
            sub_batch_shape(v)
        for t in meta["targets"]:
            str(t["device"]), str(t["dtype"]), dict(t["graphs"])
        for d in meta.get("derivatives", []):
            str(d["output"]), str(d["input"])
        for q in meta.get("parameters", []):
            str(q["name"]), [int(s) for s in q["shape"]], [float(x) for x in q["value"]]
    except (KeyError, TypeError, ValueError) as e:
        raise FatalError(f"{meta_path}: corrupt metadata ({type(e).__name__}: {e})") from e
    # every file the metadata names lies inside the artifact (never ../../etc/x)
    for i, t in enumerate(meta["targets"]):
        for g, rel in t["graphs"].items():
            artifact_file(meta_path, rel, f"targets[{i}].graphs.{g}")
    for g, spec in (meta.get("graphs") or {}).items():
        if isinstance(spec, dict) and "file" in spec:
            artifact_file(meta_path, spec["file"], f"graphs.{g}.file")
    return meta_path.parent, meta


def artifact_file(meta_path: Path, rel: object, key: str) -> Path:
    """The file *rel*, named by the key *key* of the artifact's *meta_path*, resolved
    (symlinks too) inside the artifact directory, the folder of *meta_path*.

    Raises:
        FatalError: naming the artifact and *key*, when *rel* is not a relative path
            or leads outside the directory (``..``, an absolute path, a symlink out
            of it); nothing is opened.
    """
    root = meta_path.parent.resolve()
    if not isinstance(rel, str) or not rel.strip():
        raise FatalError(f"{meta_path}: corrupt metadata ({key} is not a relative path)")
    target = (root / rel).resolve()
    if Path(rel).is_absolute() or target == root or not target.is_relative_to(root):
        raise FatalError(
            f"{meta_path}: {key} = {rel!r} lies outside the artifact directory {root}; "
            "refusing to open it"
        )
    return target


def _check_device_dtypes(given: Path, fixed: dict[str, Any], targets: list) -> None:
    """Every dtype the per-device metadata file *given* lists is a compiled target of its
    device (else the file is stale: another compile rewrote ``metadata.json``)."""
    have = [f"{t['device']}/{t['dtype']}" for t in targets]
    missing = [d for d in fixed["dtypes"] if f"{fixed['device']}/{d}" not in have]
    if missing or not fixed["dtypes"]:
        raise FatalError(
            f"{given}: lists dtypes {fixed['dtypes']} for device '{fixed['device']}', but the "
            f"artifact's metadata.json has no target {fixed['device']}/"
            f"{missing[0] if missing else '<none listed>'}; compiled targets: {', '.join(have)}"
        )


class Model:
    """A compiled neml2 model: name-keyed ``forward`` / ``jvp`` / ``jacobian``.

    Tensors are keyed by variable name. An input is ``(*B, *in_sub, *in_base)``
    (batch shape, the variable's fixed sub-batch shape, often ``()``, and its
    base shape, e.g. ``(6,)`` for an SR2); the inputs' batch shapes broadcast
    to one ``B``. Every input must be given, of the target's dtype and device; a
    Python number (``t=1.0``) is a 0-d tensor of the target's dtype and device,
    broadcast like any other input (a Scalar at every point). ``model(inputs)`` is
    :meth:`forward`.

    Attributes:
        path: the artifact directory (``pathlib.Path``).
        metadata: the content of its ``metadata.json`` (see :func:`read_metadata`).
        target: the chosen compiled target, a dict with ``device``, ``dtype``
            and ``graphs``.
        input_names: the input variable names, in metadata order (``list[str]``).
        output_names: the output variable names, in metadata order (``list[str]``).
        input_types: each input's tensor type name, e.g. ``"SR2"`` (``dict[str, str]``).
        output_types: each output's tensor type name (``dict[str, str]``).
        derivatives: the compiled Jacobian blocks, ``(output, input)`` pairs.
    """

    def __init__(
        self,
        path: str | Path,
        device: str | torch.device | None = None,
        dtype: str | torch.dtype | None = None,
    ):
        """Load a compiled artifact for one of its compiled targets.

        Args:
            path: the artifact directory, its ``metadata.json``, or a per-device
                ``<artifact>/<device>/<model>_meta.json``, which fixes the device.
            device: the device type of the target (``"cpu"``, ``"cuda"``, or a
                ``torch.device``; the index is ignored). Default ``None``: the
                first target listed (or the per-device file's device).
            dtype: the dtype of the target (``"float64"``, ``torch.float32``,
                ...). Default ``None``: the first target listed for the device.

        Raises:
            FatalError: the metadata cannot be read (see :func:`read_metadata`);
                a per-device file and a *device* that differ, or a per-device
                file that lists a dtype the artifact has no target for; no
                compiled target matches *device* and *dtype*.
        """
        want_dev = None if device is None else torch.device(device).type
        given, fixed = Path(path), None
        if is_device_metadata(given):
            path, fixed = read_device_metadata(given)
            if want_dev is not None and want_dev != fixed["device"]:
                raise FatalError(
                    f"{given}: this per-device metadata is for device '{fixed['device']}', "
                    f"but device='{want_dev}' was asked for"
                )
            want_dev = fixed["device"]
        want_dt = None
        if dtype is not None:
            want_dt = dtype if isinstance(dtype, str) else str(dtype).removeprefix("torch.")
        p = Path(path)
        if not (p / "metadata.json" if p.is_dir() else p).is_file():
            raise FatalError(f"{p}: no neml2 AOTI artifact here (metadata.json not found)")
        if fixed is not None:  # a stale per-device file is named before anything loads
            _, meta = read_metadata(p)
            _check_device_dtypes(given, fixed, meta["targets"])
            self.__dict__["metadata"] = meta
        # libneml2 reads metadata.json (the only reader of a plain load: the schema, the
        # torch version, the target), and the signature comes from what it loaded
        self._cpp = _core.Model(str(p), want_dev or "", want_dt or "")
        cpp = self._cpp
        self.path = Path(cpp.path)
        self._dtype = cpp.dtype
        self._device = torch.device(cpp.device.type)
        self.input_names = list(cpp.input_names)
        self.output_names = list(cpp.output_names)
        self.input_types = dict(cpp.input_types)
        self.output_types = dict(cpp.output_types)
        self._in_base = dict(zip(self.input_names, cpp.input_base_shapes, strict=True))
        self._out_base = dict(zip(self.output_names, cpp.output_base_shapes, strict=True))
        self._in_sub = dict(zip(self.input_names, cpp.input_sub_batch_shapes, strict=True))
        self._out_sub = dict(zip(self.output_names, cpp.output_sub_batch_shapes, strict=True))
        self.derivatives = [tuple(d) for d in cpp.derivatives]
        # the promoted (-p) parameters; the runtime keeps the lifted constants to itself
        self._param_shapes = {n: tuple(t.shape) for n, t in cpp.named_parameters().items()}

    @functools.cached_property
    def metadata(self) -> dict[str, Any]:
        """The content of the artifact's ``metadata.json`` (see :func:`read_metadata`),
        read on first use: loading needs only what libneml2 reads."""
        return read_metadata(self.path)[1]

    def _target_name(self) -> str:
        return f"{self._device.type}/{str(self._dtype).removeprefix('torch.')}"

    @functools.cached_property
    def target(self) -> dict[str, Any]:
        """The chosen compiled target: a dict with ``device``, ``dtype`` and ``graphs``."""
        dev, dt = self._device.type, str(self._dtype).removeprefix("torch.")
        return next(t for t in self.metadata["targets"] if t["device"] == dev and t["dtype"] == dt)

    # ------------------------------------------------------------------ introspection
    @property
    def input_base_shapes(self) -> list[tuple[int, ...]]:
        """Per input (in :attr:`input_names` order), the base shape, e.g. ``(6,)``."""
        return [tuple(self._in_base[n]) for n in self.input_names]

    @property
    def output_base_shapes(self) -> list[tuple[int, ...]]:
        """Per output (in :attr:`output_names` order), the base shape, e.g. ``(6,)``."""
        return [tuple(self._out_base[n]) for n in self.output_names]

    @property
    def input_sub_batch_shapes(self) -> list[tuple[int, ...]]:
        """Per input, the fixed sub-batch shape between ``B`` and the base (often ``()``)."""
        return [self._in_sub[n] for n in self.input_names]

    @property
    def output_sub_batch_shapes(self) -> list[tuple[int, ...]]:
        """Per output, the fixed sub-batch shape between ``B`` and the base (often ``()``)."""
        return [self._out_sub[n] for n in self.output_names]

    @property
    def device(self) -> torch.device:
        """The device of the chosen target (``torch.device``, no index)."""
        return self._device

    @property
    def dtype(self) -> torch.dtype:
        """The dtype of the chosen target, ``torch.float64`` or ``torch.float32``."""
        return self._dtype

    def named_parameters(self) -> dict[str, torch.Tensor]:
        """Return the promoted parameters (those compiled with ``neml2-compile -p``).

        Returns:
            ``{name: tensor}``, each tensor of its compiled shape (``()`` for a
                scalar). The tensors are the ones the model uses: changing one in
                place changes what the next call computes.
        """
        return self._cpp.named_parameters()

    def set_parameter(self, name: str, value: Any) -> None:
        """Replace a promoted parameter's value wholesale.

        Args:
            name: the parameter name, as :meth:`named_parameters` lists it.
            value: the new value: a tensor (or typed value), number or nested
                list, converted to the model's dtype and moved to its device; its
                shape must be the compiled one.

        Raises:
            FatalError: *name* is not a promoted parameter, or *value* (one line
                naming the parameter, see :func:`neml2.tensors.checked_parameter`)
                is not a number or tensor, has another shape, has an integer, bool
                or complex dtype (never cast), or holds a value that is not finite
                (naming its index).
        """
        if name not in self._param_shapes:
            known = ", ".join(self._param_shapes) or "(none)"
            raise FatalError(
                f"no promoted parameter '{name}'; promoted: {known}"
                " (promote one with neml2-compile -p NAME)"
            )
        t = checked_parameter(
            name, value, dtype=self._dtype, device=self._device, shape=self._param_shapes[name]
        )
        self._cpp.set_parameter(name, t)

    def __repr__(self) -> str:
        return (
            f"neml2.aoti.Model('{self.path}', {self._target_name()}, "
            f"inputs={self.input_names}, outputs={self.output_names})"
        )

    # ------------------------------------------------------------------ calls
    def _check(self, inputs: Mapping[str, Any], what: str = "input") -> dict[str, torch.Tensor]:
        """Python-side checks with friendlier messages; the C++ runtime checks the rest.
        A Python number becomes a 0-d tensor of the target's dtype and device."""
        if not isinstance(inputs, Mapping):
            raise FatalError(f"{what}s must be a dict of name -> tensor, got {type(inputs)}")
        unknown = [n for n in inputs if n not in self._in_base]
        if unknown:
            close = get_close_matches(unknown[0], self.input_names, n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            label = "tangent for unknown input" if what == "tangent" else "unknown input"
            raise FatalError(
                f"{label} '{unknown[0]}'{hint}; the model's inputs are: "
                f"{', '.join(self.input_names)}"
            )
        inputs = {n: self._number_as_tensor(x) for n, x in inputs.items()}
        for n, x in inputs.items():
            if not isinstance(x, torch.Tensor):
                raise FatalError(
                    f"{what} '{n}' is a {type(x).__name__}, not a torch.Tensor or a number"
                )
            if x.dtype != self._dtype:
                raise FatalError(
                    f"{what} '{n}' has dtype {x.dtype} but the model was compiled for "
                    f"{self._dtype} (target {self._target_name()})"
                )
            if x.device.type != self._device.type:
                raise FatalError(
                    f"{what} '{n}' is on {x.device} but the model was compiled for "
                    f"{self._device.type}"
                )
        if what == "input":  # the batch shapes, where the trailing shapes are right
            batches = {}
            for n, x in inputs.items():
                tail = (*self._in_sub[n], *self._in_base[n])
                if x.dim() >= len(tail) and tuple(x.shape[x.dim() - len(tail) :]) == tail:
                    batches[f"input '{n}'"] = x.shape[: x.dim() - len(tail)]
            broadcast_batch_shapes(batches)
        return inputs

    def _number_as_tensor(self, x: Any) -> Any:
        """*x* as a 0-d tensor of the target's dtype and device when it is a Python (or
        numpy) real number, not a bool; else *x* itself."""
        if isinstance(x, numbers.Real) and not isinstance(x, bool | torch.Tensor):
            return torch.tensor(float(x), dtype=self._dtype, device=self._device)
        return x

    def _call(self, fn, *args: Mapping[str, Any]):
        """``fn(*args)`` in C++ straight away (it validates names, shapes, dtype and device
        itself: the Python checks cost more than a small batch's whole evaluation); on a
        failure the Python checks run to give their friendlier message where they have one.

        Python numbers among the values are converted (:meth:`_number_as_tensor`) and the
        call made again, as is a Mapping that is not a dict. A refusal is one line: the
        checks run outside the ``except`` clause, so their error does not carry the C++
        binding's (which prints every argument, tensors in full) as its context.
        """
        try:
            return fn(*args)
        except (FatalError, TypeError) as e:
            failure = e
        # the checks raise their own message (with suggestions) where they see the problem
        checked = [self._check(a, "tangent" if i else "input") for i, a in enumerate(args)]
        converted = any(
            type(a) is not dict or any(c[n] is not a[n] for n in a)
            for a, c in zip(args, checked, strict=True)
        )
        if converted:
            return fn(*checked)
        if isinstance(failure, TypeError):  # the binding's "incompatible function arguments"
            first = str(failure).strip().splitlines()[0]
            raise FatalError(f"{first} (expected dicts of name -> torch.Tensor)") from None
        raise failure

    def forward(self, inputs: Mapping[str, Any]) -> dict[str, torch.Tensor]:
        """Evaluate the model.

        Args:
            inputs: ``{input: (*B, *in_sub, *in_base)}``, every input of the model.

        Returns:
            ``{output: (*B, *out_sub, *out_base)}`` for every output.

        Raises:
            FatalError: an unknown or missing input (with a suggestion for a
                misspelt name), a wrong trailing shape, dtype or device, or
                batch shapes that do not broadcast.
            ConvergenceError: an implicit solve compiled into the model did not
                converge at some batch point (the solver settings are compiled in).
        """
        return self._call(self._cpp.forward, inputs)

    __call__ = forward

    def forward_into(self, inputs: Mapping[str, Any], outputs: Mapping[str, torch.Tensor]) -> None:
        """Evaluate the model, storing the outputs into given tensors.

        An artifact compiled with ``neml2-compile --write-into`` has its kernels
        store there directly (no output allocation, no copy; see
        :attr:`writes_into`); otherwise the results are copied in.

        Args:
            inputs: ``{input: (*B, *in_sub, *in_base)}``, as for :meth:`forward`.
            outputs: ``{output: (*B, *out_sub, *out_base)}``: one contiguous
                tensor per output, of the model's dtype and device, overwritten.

        Raises:
            FatalError: as for :meth:`forward`, or an unknown output, or an
                output tensor that is missing, of the wrong shape, dtype or
                device, or not contiguous (checked before anything is computed).
            ConvergenceError: an implicit solve compiled into the model did not
                converge at some batch point (the solver settings are compiled in).
        """
        self._call(lambda x: self._cpp.forward_into(x, dict(outputs)), inputs)

    @property
    def writes_into(self) -> bool:
        """Whether the artifact has the ``forward_into`` graph (``--write-into``)."""
        return self._cpp.writes_into

    @property
    def points_per_call(self) -> int:
        """How many points one call of a graph that solves (an implicit model's Newton
        loop) takes; 0: the whole batch at once.

        A larger batch is solved in slices of this many points, one after the other,
        and the results are joined in batch order: each slice's loop stops as soon as
        its own points have converged, and its working set stays cache-sized. Graphs
        without a solve always take the whole batch. The default is
        ``DEFAULT_POINTS_PER_CALL`` of ``neml2/aoti/model.h`` (2048) on a CPU target, 0 on
        a GPU.

        Raises:
            FatalError: (setting) a negative count.
        """
        return self._cpp.points_per_call

    @points_per_call.setter
    def points_per_call(self, points: int) -> None:
        self._cpp.points_per_call = int(points)

    @property
    def thread_chunks(self) -> bool:
        """Whether a CPU batch of an implicit solve is cut among the threads (default True).

        On a CPU target, a batch of a graph that solves with at most
        :attr:`points_per_call` points is cut into one contiguous chunk per intra-op
        thread (``torch.get_num_threads()``; at least 64 points each, at most 16 chunks),
        each solved on its thread alone: one fork/join of the threads a call, where one
        call on all the threads forks and joins them in every kernel of every Newton
        iteration. The results agree with one call's to the solver's tolerance; False
        gives one call on all the threads, with results that do not depend on the
        thread count.
        """
        return self._cpp.thread_chunks

    @thread_chunks.setter
    def thread_chunks(self, on: bool) -> None:
        self._cpp.thread_chunks = bool(on)

    def jacobian(
        self, inputs: Mapping[str, Any]
    ) -> tuple[dict[str, torch.Tensor], dict[str, dict[str, torch.Tensor]]]:
        """Evaluate the model and its compiled Jacobian blocks.

        Args:
            inputs: ``{input: (*B, *in_sub, *in_base)}``, as for :meth:`forward`.

        Returns:
            ``(outputs, J)``: the outputs as :meth:`forward` returns them, and
                ``J[out][in]`` at ``(*B, *out_sub, *out_base, *in_sub, *in_base)``
                for each compiled pair (:attr:`derivatives`). Indexing a pair that
                was not compiled raises a :class:`FatalError` naming the
                ``neml2-compile -d OUT:IN`` option to add.

        Raises:
            FatalError: as for :meth:`forward`, or an artifact compiled without
                derivatives.
            ConvergenceError: an implicit solve compiled into the model did not
                converge at some batch point (the solver settings are compiled in).
        """
        out, blocks = self._call(self._cpp.jacobian, inputs)
        known = [f"{o}:{i}" for o, i in self.derivatives]
        J = Jacobian(known)
        for o, row in blocks.items():
            J[o] = Blocks(o, known, row)
        return out, J

    def jvp(
        self, inputs: Mapping[str, Any], tangents: Mapping[str, Any]
    ) -> tuple[dict[str, torch.Tensor], dict[str, torch.Tensor]]:
        """Evaluate the model and a Jacobian-vector product from the compiled blocks.

        Args:
            inputs: ``{input: (*B, *in_sub, *in_base)}``, as for :meth:`forward`.
            tangents: ``{input: t_i}``, each the shape of its input; a missing
                tangent counts as zero.

        Returns:
            ``(outputs, jvp)``: the outputs as :meth:`forward` returns them, and
                ``jvp[out] = sum_i J[out][i] . t_i`` at ``(*B, *out_sub, *out_base)``
                for every output whose blocks with respect to all given tangents
                were compiled.

        Raises:
            FatalError: as for :meth:`forward` (the same checks on *tangents*),
                or an artifact compiled without derivatives.
            ConvergenceError: an implicit solve compiled into the model did not
                converge at some batch point (the solver settings are compiled in).
        """
        return self._call(self._cpp.jvp, inputs, tangents)
