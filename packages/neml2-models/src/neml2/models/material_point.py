"""The material-point API: a model with state behind one call per global iteration.

A finite-element code asks a constitutive model, at every global Newton iteration, for
the stress and the consistent tangent at the strain of each quadrature point, given the
state of the last converged step. :class:`MaterialPoint` puts any neml2 model (any
route: ``neml2.load_model``, the py-aoti stub ``neml2.load_model("x_aoti.i", "x")``,
``neml2.routes.open_model``) behind that call:

* the **state** is discovered from the model: every output ``x`` that the model also
  takes back as the input ``x~1`` (``plastic_strain``, ``equivalent_plastic_strain``,
  per-slip dislocation densities), with its shape at a point (sub-batch axes included);
  it can be packed into one ``(*batch, state_size)`` array;
* **predictor-only** history inputs (``flow_rate~1`` of J2 radial return: an initial
  guess of the local Newton solve, not part of the answer) are not state: they are fed
  zeros (the elastic predictor) unless given in ``extra``;
* **time** inputs ``t`` / ``t~1`` are filled where the model declares them, ignored where
  it does not; ``strain~1`` from ``strain_old``;
* a **per-point status**: a point whose local solve fails (or gives a non-finite result)
  keeps its old state, gets zero stress and tangent, and is reported in
  ``converged``; the other points are exactly what a batch without the failed points
  gives.

Per-point status, how: a route raises :class:`~neml2.tensors.ConvergenceError` for the
whole batch when one point's local Newton fails (the solver itself judges every point
alone, and py-eager's error names the failed points; a compiled route's names only how
many). :meth:`MaterialPoint.update` catches it, drops the failed points (those the error
names, else by halving the batch until each failing point is alone) and evaluates the
rest again: one more call per failure event on py-eager, about ``k log2(n)`` calls on a
compiled route for ``k`` failed points out of ``n``. Nothing changes for a batch that
converges: one call of ``model.jacobian``.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from neml2.models._jit import CompiledModel
from neml2.models._model import Model
from neml2.models._naming import HISTORY, history_of
from neml2.models.implicit_update import implicit_updates, record_solves, stop_recording
from neml2.tensors import ConvergenceError, FatalError

__all__ = ["MaterialPoint", "MaterialPointResult"]

#: the failure modes of :meth:`MaterialPoint.update`
ON_FAILURE = ("status", "raise")


@dataclass
class MaterialPointResult:
    """What :meth:`MaterialPoint.update` returns.

    Attributes:
        stress: ``(*batch, 6)`` Mandel (zero where not converged).
        tangent: ``(*batch, 6, 6)``, ``d stress / d strain`` in Mandel components, the
            consistent tangent (zero where not converged).
        state: the new state, a dict or a packed ``(*batch, state_size)`` array like the
            state given (the old state where not converged).
        converged: ``(*batch,)`` bool, per point.
        outputs: every output of the model by name, ``(*batch, *sub, *base)`` (the old
            state for the state outputs and zero for the others where not converged).
        iterations: the iterations of a local solve of the wrapper (plane stress), else
            None.
    """

    stress: torch.Tensor
    tangent: torch.Tensor
    state: dict[str, torch.Tensor] | torch.Tensor
    converged: torch.Tensor
    outputs: dict[str, torch.Tensor] = field(default_factory=dict)
    iterations: int | None = None

    @property
    def n_failed(self) -> int:
        """How many points did not converge.

        Returns:
            The count of ``False`` in :attr:`converged`.
        """
        return int((~self.converged).sum())


def _route_impl(model: Any) -> Any:
    """The model a :class:`neml2.routes.RouteModel` wraps where that is a neml2 ``Model``
    (py-eager, the py-aoti stub): it takes typed inputs and ``jacobian(wrt=)``."""
    impl = getattr(model, "impl", None)
    if hasattr(model, "route") and isinstance(impl, Model):
        return impl
    return model


def _compiled_sub_shapes(model: Any) -> tuple[list, list] | None:
    """``(input sub-batch shapes, output sub-batch shapes)`` fixed by an artifact (the
    py-aoti stub's runtime, ``neml2.aoti.Model``, cpp-eager's where known), else None."""
    for owner in (model, getattr(model, "runtime", None)):
        ins = getattr(owner, "input_sub_batch_shapes", None)
        outs = getattr(owner, "output_sub_batch_shapes", None)
        if ins is None or outs is None:
            continue
        ins = [tuple(int(d) for d in s) for s in ins]
        outs = [tuple(int(d) for d in s) for s in outs]
        if all(d >= 0 for s in (*ins, *outs) for d in s):
            return ins, outs
    return None


def _python_model(model: Any) -> Model | None:
    """The Python model whose sub-models can be read: *model* itself on py-eager, the
    model a py-jit ``CompiledModel`` wraps; None for a compiled artifact behind the Model
    surface (the py-aoti stub has a ``runtime``) or any other route's object."""
    if isinstance(model, CompiledModel):
        return model.model
    if isinstance(model, Model) and not hasattr(model, "runtime"):
        return model
    return None


def _typed_for(model: Any, flat: Mapping[str, torch.Tensor], sub: Mapping[str, tuple]) -> dict:
    """*flat* for a ``neml2.models.Model`` (py-eager, the py-aoti stub): typed where an
    input carries sub-batch axes (the raw surface has none); raw for any other model."""
    if not isinstance(model, Model):
        return dict(flat)
    spec = model.input_spec
    return {n: spec[n](x, len(sub.get(n, ()))) if sub.get(n) else x for n, x in flat.items()}


def _only_guessed(model: Model, name: str) -> bool:
    """Whether the input *name* of *model* is read only by the ``predictor`` of an
    implicit update (the local solve's initial guess), not by anything the solution or
    another output depends on."""
    guess: set[int] = set()
    for m in implicit_updates(model):
        if m.predictor is not None:
            guess.update(id(p) for p in m.predictor.modules())
    readers = []
    for m in model.modules():
        spec = getattr(m, "input_spec", None) or {}
        if name not in spec:
            continue
        # a leaf reader: none of its own children reads the name
        if not any(name in (getattr(c, "input_spec", None) or {}) for c in m.children()):
            readers.append(m)
    return bool(readers) and all(id(m) in guess for m in readers)


class MaterialPoint:
    """A model with state behind ``update(strain, state) -> stress, tangent, new state``.

    The host keeps the state of the last converged step, ``state_old``, and calls
    :meth:`update` at every global Newton iteration with the same ``state_old`` and the
    current strain of every quadrature point, in one batched call over
    ``(elements, quadrature points)``. When the global step is accepted, ``state_old``
    becomes the result's state (:meth:`roll`); when a point fails, the host cuts the
    step and calls again from the same ``state_old``::

        mp = neml2.MaterialPoint(neml2.load_model("j2.i", "model"))
        state_old = mp.initial_state((n_elements, n_qp))
        t_old, t = 0.0, dt
        while t_old < t_end:
            for it in range(max_global_iterations):              # global Newton
                res = mp.update(strain(u), state_old, time=t, time_old=t_old)
                if not bool(res.converged.all()):
                    break                                         # a local solve failed
                r, K = assemble(res.stress, res.tangent)          # host's own assembly
                if converged(r):
                    break
                u = u - solve(K, r)
            if bool(res.converged.all()) and converged(r):
                state_old = mp.roll(res.state)                    # accept the step
                t_old, t = t, t + dt
            else:
                dt = dt / 2; t = t_old + dt                       # cut the step

    Which inputs are what is read from the model's names:

    * ``strain`` (an SR2 input) and ``strain~1`` (from ``strain_old``);
    * ``time`` and ``time~1`` (from ``time`` / ``time_old``), where declared;
    * **state**: every input ``x~k`` whose ``x`` is an output; the state holds ``x``
      (and ``x~1`` ... ``x~(k-1)`` for a model that reads deeper history), at
      ``(*batch, *sub, *base)``;
    * **predictor-only** inputs: state-like inputs read only by the predictor of an
      implicit update (the local Newton's initial guess, ``flow_rate~1`` in J2 radial
      return). On a Python model (py-eager) they are found from its sub-models; on a
      compiled one (whose structure is gone) by a probe at construction: a state input
      whose value changes none of the outputs at a small elastic step from a zero state is
      only a guess. They are fed zeros (the elastic predictor) unless ``extra`` gives
      them; ``predictors=`` names them explicitly (``predictors=()``: keep every such
      input as state, rolled forward like the drivers do);
    * every other input (temperature, vorticity, promoted parameters) comes from
      ``extra``, at ``(*batch, *sub, *base)`` or broadcastable to it.

    Attributes:
        model: the model called (the route's own object where a ``neml2.routes``
            model wraps a Python model).
        strain: the strain input's name.
        stress: the stress output's name.
        time: the time input's name.
        predictors: the predictor-only inputs (``x~1`` names), fed zeros.
    """

    def __init__(
        self,
        model: Any,
        strain: str = "strain",
        stress: str = "stress",
        time: str = "t",
        *,
        predictors: Sequence[str] | None = None,
        sub_batch: Mapping[str, Sequence[int]] | None = None,
    ):
        """Read the model's inputs and outputs and sort them (see the class).

        Args:
            model: a neml2 model of any route (``neml2.load_model``, the py-aoti stub,
                ``neml2.routes.open_model``, ``neml2.aoti.Model``).
            strain: the name of the strain input (an SR2, Mandel; a rate for a rate
                form, e.g. ``deformation_rate``).
            stress: the name of the stress output (an SR2).
            time: the name of the time input (its previous value is ``<time>~1``).
            predictors: the predictor-only inputs, by name (``"flow_rate~1"``);
                default: found from the model (see the class).
            sub_batch: variable name (an output ``x`` or an input) -> its sub-batch
                shape, where the model cannot tell (default: found from the artifact,
                or from one probe call of a Python model at zero inputs).

        Raises:
            FatalError: *strain* is not an SR2-shaped input, *stress* not an SR2-shaped
                output, or *predictors* names a non-history input.
        """
        self.model = _route_impl(model)
        m = self.model
        self.strain, self.stress, self.time = strain, stress, time
        self._in_names = list(m.input_names)
        self._out_names = list(m.output_names)
        self._in_base = dict(zip(self._in_names, map(tuple, m.input_base_shapes), strict=True))
        self._out_base = dict(zip(self._out_names, map(tuple, m.output_base_shapes), strict=True))
        self._label = f"MaterialPoint({getattr(m, 'hit_name', None) or type(m).__name__})"
        if self._in_base.get(strain) != (6,):
            raise FatalError(
                f"{self._label}: strain={strain!r} must name an SR2 input of the model; "
                f"inputs: {', '.join(self._in_names)}"
            )
        if self._out_base.get(stress) != (6,):
            raise FatalError(
                f"{self._label}: stress={stress!r} must name an SR2 output of the model; "
                f"outputs: {', '.join(self._out_names)}"
            )
        #: the Python model read for the predictors and sub-batch shapes (None: compiled)
        self._structure = _python_model(m)
        try:
            self._wrt = "wrt" in inspect.signature(m.jacobian).parameters
        except (TypeError, ValueError):
            self._wrt = False
        self._sort_inputs()
        self._find_sub_batch(dict(sub_batch or {}))
        if predictors is None:
            predictors = self._find_predictors()
        self._set_predictors(list(predictors))

    # ------------------------------------------------------------------ discovery
    def _sort_inputs(self) -> None:
        """Sort the inputs into strain, time, history of outputs, and others."""
        self._lags: dict[str, int] = {}  # output x -> the deepest lag the model reads
        self._other: list[str] = []
        fixed = {self.strain, HISTORY(self.strain), self.time, HISTORY(self.time)}
        for n in self._in_names:
            if n in fixed:
                continue
            h = history_of(n)
            if h is not None and h[0] in self._out_base and h[0] not in (self.strain, self.time):
                self._lags[h[0]] = max(self._lags.get(h[0], 0), h[1])
            else:
                self._other.append(n)

    def _set_predictors(self, names: list[str]) -> None:
        for n in names:
            h = history_of(n)
            if n not in self._in_base or h is None or h[0] not in self._lags:
                raise FatalError(
                    f"{self._label}: predictors names {n!r}, which is not a history input "
                    f"x~k of an output x; such inputs: "
                    f"{', '.join(self._history_inputs()) or '(none)'}"
                )
        # a variable is state unless every history input of it is predictor-only; the
        # history inputs of a state variable all come from the state (a better guess)
        self._state_vars = [
            x
            for x in self._out_names
            if x in self._lags
            and not all(
                f"{x}~{k}" in names
                for k in range(1, self._lags[x] + 1)
                if f"{x}~{k}" in self._in_base
            )
        ]
        self.predictors: list[str] = [n for n in names if history_of(n)[0] not in self._state_vars]
        names_: list[str] = []
        for x in self._state_vars:
            names_.append(x)
            names_.extend(f"{x}~{k}" for k in range(1, self._lags[x]))
        self._state_names = names_
        self._shapes = {
            n: (*self._out_sub.get(self._base_of(n), ()), *self._out_base[self._base_of(n)])
            for n in names_
        }
        self._sizes = {n: math.prod(s) for n, s in self._shapes.items()}

    @staticmethod
    def _base_of(name: str) -> str:
        h = history_of(name)
        return name if h is None else h[0]

    def _history_inputs(self) -> list[str]:
        return [n for n in self._in_names if (h := history_of(n)) and h[0] in self._lags]

    def _find_sub_batch(self, given: dict[str, Sequence[int]]) -> None:
        """The sub-batch shape of every input (``self._in_sub``) and output (``_out_sub``)."""
        compiled = _compiled_sub_shapes(self.model)
        if compiled is not None:
            ins, outs = compiled
            self._in_sub = dict(zip(self._in_names, ins, strict=True))
            self._out_sub = dict(zip(self._out_names, outs, strict=True))
        else:
            self._in_sub, self._out_sub = {}, {}
            if self._structure is not None:
                self._probe_sub_batch(given)
        for n, s in given.items():
            s = tuple(int(d) for d in s)
            if n in self._out_base:
                self._out_sub[n] = s
                for k in range(1, self._lags.get(n, 0) + 1):
                    if f"{n}~{k}" in self._in_base:
                        self._in_sub[f"{n}~{k}"] = s
            elif n in self._in_base:
                self._in_sub[n] = s
            else:
                raise FatalError(
                    f"{self._label}: sub_batch names {n!r}, which is neither an input nor "
                    "an output of the model"
                )
        for n in self._in_names:
            self._in_sub.setdefault(n, ())
        for n in self._out_names:
            self._out_sub.setdefault(n, ())

    def _probe_values(self, sub: Mapping[str, tuple], strain_scale: float = 0.0) -> dict:
        """One point of inputs: zeros, ``time = 1``, ``time~1 = 0``, the strain
        *strain_scale* times a fixed deviatoric-plus-volumetric direction."""
        dtype, device = self.model.dtype, self.model.device
        out = {}
        for n in self._in_names:
            shape = (1, *sub.get(n, ()), *self._in_base[n])
            x = torch.zeros(shape, dtype=dtype, device=device)
            if n == self.time:
                x.fill_(1.0)
            elif n == self.strain and strain_scale:
                d = torch.tensor([1.0, -0.4, -0.3, 0.2, 0.1, 0.05], dtype=dtype, device=device)
                x = (strain_scale * d).expand(shape).clone()
            out[n] = x
        return out

    def _probe_sub_batch(self, given: dict) -> None:
        """Read the sub-batch shapes of a Python model's outputs off calls at zero inputs
        (a per-slip parameter gives its outputs a per-slip axis), giving each state input
        ``x~k`` the shape of ``x`` until nothing changes. A model that cannot be called at
        zero inputs keeps no sub-batch shapes (``sub_batch=`` gives them)."""
        sub: dict[str, tuple] = {}
        for n, s in given.items():
            for k in range(1, self._lags.get(n, 0) + 1):
                sub[f"{n}~{k}"] = tuple(s)
            if n in self._in_base:
                sub[n] = tuple(s)
        model = self._structure
        updates = implicit_updates(model)
        for _ in range(4):
            record_solves(updates, check=False)
            try:
                with torch.no_grad():
                    out = dict(model.forward(_typed_for(model, self._probe_values(sub), sub)))
            except Exception:  # a probe: sub_batch= tells what it cannot
                return
            finally:
                stop_recording(updates)
            self._out_sub = {
                o: tuple(out[o].shape[1 : out[o].dim() - len(self._out_base[o])])
                for o in self._out_names
            }
            changed = False
            for x, lag in self._lags.items():
                for k in range(1, lag + 1):
                    n = f"{x}~{k}"
                    if n in self._in_base and sub.get(n, ()) != self._out_sub[x]:
                        sub[n], changed = self._out_sub[x], True
            if not changed:
                break
        self._in_sub.update(sub)

    def _find_predictors(self) -> list[str]:
        """The predictor-only inputs: from the sub-models of a Python model, else by a
        probe (see the class)."""
        candidates = self._history_inputs()
        if self._structure is not None:
            return [n for n in candidates if _only_guessed(self._structure, n)]
        return [n for n in candidates if self._probe_guess(n)]

    def _probe_guess(self, name: str) -> bool:
        """Whether setting the input *name* to 1e-3 instead of 0 (a small elastic step
        from a zero state) changes no output: then it is only an initial guess. Any
        failure of the probe (a model that refuses zero inputs, a solve that does not
        converge) keeps it as state, which is always correct."""
        try:
            with torch.no_grad():
                base = self._probe_values(self._in_sub, strain_scale=1e-6)
                a = self._forward(_typed_for(self.model, base, self._in_sub))
                moved = dict(base)
                moved[name] = torch.full_like(base[name], 1e-3)
                b = self._forward(_typed_for(self.model, moved, self._in_sub))
        except Exception:  # a probe: predictors= tells what it cannot
            return False
        for o in self._out_names:
            x, y = a[o], b[o]
            if not (bool(torch.isfinite(x).all()) and bool(torch.isfinite(y).all())):
                return False
            scale = 1e-12 + 1e-8 * float(torch.maximum(x.abs().max(), y.abs().max()))
            if not float((x - y).abs().max()) <= scale:
                return False
        return True

    # ------------------------------------------------------------------ state
    @property
    def state_names(self) -> list[str]:
        """The state variables, in packing order.

        Returns:
            Each output ``x`` the model takes back as ``x~1`` (and ``x~1``, ... for a
                model reading ``x~2``, ...), predictor-only inputs excluded.
        """
        return list(self._state_names)

    @property
    def state_shapes(self) -> dict[str, tuple[int, ...]]:
        """The shape of each state variable at one point.

        Returns:
            Name -> ``(*sub, *base)`` (``(12,)`` for a per-slip Scalar, ``(6,)`` for an
                SR2).
        """
        return dict(self._shapes)

    @property
    def state_size(self) -> int:
        """How many scalars the state of one point packs into.

        Returns:
            The sum of the state variables' sizes.
        """
        return sum(self._sizes.values())

    def initial_state(
        self,
        batch_shape: Sequence[int] | int = (),
        dtype: torch.dtype = torch.float64,
        values: Mapping[str, Any] | None = None,
    ) -> dict[str, torch.Tensor]:
        """The state before the first step: zeros (a virgin material).

        Args:
            batch_shape: the batch, e.g. ``(elements, quadrature points)``.
            dtype: the state's dtype (the model's, usually ``torch.float64``).
            values: state variable -> its initial value, broadcast to ``(*batch, *shape)``
                (``{"dislocation_density": 10.0}``); the others are zero.

        Returns:
            Name -> ``(*batch, *sub, *base)`` on the model's device.

        Raises:
            FatalError: *values* names a variable that is not state.
        """
        batch = (batch_shape,) if isinstance(batch_shape, int) else tuple(batch_shape)
        device = self.model.device
        values = dict(values or {})
        self._check_state_keys(values, exact=False)
        out = {}
        for n, shape in self._shapes.items():
            z = torch.zeros((*batch, *shape), dtype=dtype, device=device)
            if n in values:
                z = z + torch.as_tensor(values[n], dtype=dtype, device=device)
            out[n] = z
        return out

    def pack(self, state: Mapping[str, torch.Tensor]) -> torch.Tensor:
        """One contiguous array per point.

        Args:
            state: name -> ``(*batch, *sub, *base)``, every state variable.

        Returns:
            ``(*batch, state_size)``: the variables in :attr:`state_names` order, each
                flattened (C order).

        Raises:
            FatalError: a variable is missing or unknown, or has the wrong shape.
        """
        self._check_state_keys(state)
        if not self._state_names:
            raise FatalError(f"{self._label}: the model has no state to pack")
        parts, batch = [], None
        for n in self._state_names:
            x = torch.as_tensor(state[n])
            b = self._batch_of(n, x)
            batch = b if batch is None else torch.broadcast_shapes(batch, b)
            parts.append(x)
        return torch.cat(
            [
                x.expand((*batch, *self._shapes[n])).reshape((*batch, -1))
                for n, x in zip(self._state_names, parts, strict=True)
            ],
            dim=-1,
        )

    def unpack(self, array: torch.Tensor) -> dict[str, torch.Tensor]:
        """The variables of a packed state (views into *array*).

        Args:
            array: ``(*batch, state_size)``, as :meth:`pack` makes it.

        Returns:
            Name -> ``(*batch, *sub, *base)``.

        Raises:
            FatalError: the last axis is not :attr:`state_size` long.
        """
        array = torch.as_tensor(array)
        if array.dim() < 1 or array.shape[-1] != self.state_size:
            raise FatalError(
                f"{self._label}: a packed state is (*batch, {self.state_size}), got "
                f"{tuple(array.shape)}"
            )
        out, start = {}, 0
        batch = array.shape[:-1]
        for n in self._state_names:
            k = self._sizes[n]
            out[n] = array[..., start : start + k].reshape((*batch, *self._shapes[n]))
            start += k
        return out

    def roll(
        self,
        state_new: Mapping[str, torch.Tensor] | torch.Tensor,
        state_old: Mapping[str, torch.Tensor] | torch.Tensor | None = None,
        accept: torch.Tensor | None = None,
    ) -> dict[str, torch.Tensor] | torch.Tensor:
        """The state to keep once a step is accepted (roll forward).

        :meth:`update` already returns the state the next step reads (for a model with
        deeper history, ``x~1`` holds the old ``x``); this copies it so the host can keep
        it while the next step's tensors are made, and, with *accept*, takes the new
        state only at some points (a host that sub-steps failed points alone).

        Args:
            state_new: :attr:`MaterialPointResult.state` (dict or packed array).
            state_old: the state the update started from (needed with *accept*).
            accept: ``(*batch,)`` bool: where True the new state, elsewhere the old.

        Returns:
            The state, in the form of *state_new*.

        Raises:
            FatalError: *accept* without *state_old*.
        """
        if accept is None:
            if isinstance(state_new, torch.Tensor):
                return state_new.detach().clone()
            return {n: torch.as_tensor(v).detach().clone() for n, v in state_new.items()}
        if state_old is None:
            raise FatalError(f"{self._label}: roll(accept=...) needs state_old")
        accept = torch.as_tensor(accept, dtype=torch.bool)
        if isinstance(state_new, torch.Tensor):
            old = torch.as_tensor(state_old)
            return torch.where(accept.unsqueeze(-1), state_new, old).detach().clone()
        old = state_old if isinstance(state_old, Mapping) else self.unpack(state_old)
        out = {}
        for n in self._state_names:
            m = accept.reshape((*accept.shape, *([1] * len(self._shapes[n]))))
            out[n] = torch.where(m, state_new[n], old[n]).detach().clone()
        return out

    def _check_state_keys(self, state: Mapping[str, Any], exact: bool = True) -> None:
        unknown = [n for n in state if n not in self._shapes]
        missing = [n for n in self._state_names if n not in state] if exact else []
        if unknown or missing:
            parts = []
            if missing:
                parts.append(f"missing {', '.join(missing)}")
            if unknown:
                parts.append(f"unknown {', '.join(unknown)}")
            raise FatalError(
                f"{self._label}: state: {'; '.join(parts)}; the state is "
                f"{', '.join(self._state_names) or '(none)'}"
            )

    def _batch_of(self, name: str, x: torch.Tensor) -> tuple[int, ...]:
        shape = self._shapes[name]
        n = len(shape)
        if x.dim() < n or tuple(x.shape[x.dim() - n :]) != shape:
            raise FatalError(
                f"{self._label}: state '{name}' has shape {tuple(x.shape)}; it must be "
                f"(*batch, {', '.join(map(str, shape))})"
                if shape
                else f"{self._label}: state '{name}' has shape {tuple(x.shape)}"
            )
        return tuple(x.shape[: x.dim() - n])

    # ------------------------------------------------------------------ update
    def update(
        self,
        strain: torch.Tensor,
        state: Mapping[str, torch.Tensor] | torch.Tensor,
        *,
        time: Any = 1.0,
        time_old: Any = 0.0,
        strain_old: torch.Tensor | None = None,
        extra: Mapping[str, Any] | None = None,
        on_failure: str = "status",
    ) -> MaterialPointResult:
        """Stress, consistent tangent and new state at every point, in one call.

        One ``model.jacobian`` call (``d stress / d strain`` only where the route takes
        ``wrt=``), under ``torch.no_grad()``: the tangent comes from the model's own
        derivatives, not from autograd. Failed points cost more calls (see the module).

        Args:
            strain: ``(*batch, 6)``, Mandel (``xx, yy, zz, sqrt2 yz, sqrt2 xz, sqrt2 xy``).
            state: the state of the last converged step: a dict (:meth:`initial_state`)
                or a packed array (:meth:`pack`); broadcast to the batch.
            time: the time at the end of the step (a number or ``(*batch,)``); used
                where the model declares the time input.
            time_old: the time at the start of the step.
            strain_old: ``(*batch, 6)``, the strain at the start of the step, for a
                model that reads ``<strain>~1``.
            extra: the model's other inputs by name (temperature, ...), each
                ``(*batch, *sub, *base)`` or broadcastable; may also give a
                predictor-only input its value.
            on_failure: ``"status"``: report failed points in ``converged``;
                ``"raise"``: raise :class:`~neml2.tensors.ConvergenceError` naming how
                many points failed (and which).

        Returns:
            The stress, tangent, new state (in the form of *state*), per-point status
                and every output.

        Raises:
            FatalError: a missing or unknown input, a wrong shape, a bad *on_failure*.
            ConvergenceError: with ``on_failure="raise"``, some point did not converge.
        """
        if on_failure not in ON_FAILURE:
            raise FatalError(
                f"{self._label}: on_failure={on_failure!r}; expected one of {', '.join(ON_FAILURE)}"
            )
        packed = isinstance(state, torch.Tensor)
        st = self.unpack(state) if packed else dict(state)
        self._check_state_keys(st)
        strain = self._tensor(strain)
        if strain.dim() < 1 or strain.shape[-1] != 6:
            raise FatalError(
                f"{self._label}: strain has shape {tuple(strain.shape)}; it must be (*batch, 6)"
            )
        batch = tuple(strain.shape[:-1])
        flat, st_flat = self._flat_inputs(strain, st, time, time_old, strain_old, extra, batch)
        outs, tangent, ok = self._evaluate(flat)
        return self._result(outs, tangent, ok, st_flat, batch, packed, on_failure)

    def _tensor(self, x: Any) -> torch.Tensor:
        """*x* as a tensor: a tensor as given (the model checks its dtype and device),
        a number or a list in the model's dtype on its device."""
        if isinstance(x, torch.Tensor):
            return x
        if hasattr(x, "__array__") and not isinstance(x, (int, float)):
            return torch.as_tensor(x)
        return torch.as_tensor(x, dtype=self.model.dtype, device=self.model.device)

    def _trailing(self, name: str) -> tuple[int, ...]:
        return (*self._in_sub[name], *self._in_base[name])

    def _flatten(self, what: str, x: Any, batch: tuple, trailing: tuple) -> torch.Tensor:
        """*x* broadcast to ``(*batch, *trailing)`` and flattened to ``(N, *trailing)``."""
        x = self._tensor(x)
        try:
            x = x.expand((*batch, *trailing))
        except RuntimeError:
            raise FatalError(
                f"{self._label}: {what} has shape {tuple(x.shape)}, which does not broadcast "
                f"to (*batch, *sub, *base) = {(*batch, *trailing)}"
            ) from None
        return x.reshape(math.prod(batch), *trailing)

    def _flat_inputs(self, strain, st, time, time_old, strain_old, extra, batch):
        """Every input of the model at ``(N, *sub, *base)``, and the state flattened."""
        extra = dict(extra or {})
        unknown = [n for n in extra if n not in self._in_base]
        reserved = [
            n
            for n in extra
            if n in self._in_base and n not in self._other and n not in self.predictors
        ]
        if unknown or reserved:
            what = []
            if unknown:
                what.append(f"unknown input(s) {', '.join(unknown)}")
            if reserved:
                what.append(f"{', '.join(reserved)} (given by strain, time or state, not extra)")
            raise FatalError(
                f"{self._label}: extra names {'; '.join(what)}; extra takes "
                f"{', '.join([*self._other, *self.predictors]) or '(nothing)'}"
            )
        st_flat = {
            n: self._flatten(f"state '{n}'", v, batch, self._shapes[n]) for n, v in st.items()
        }
        flat: dict[str, torch.Tensor] = {}
        missing = []
        for n in self._in_names:
            tr = self._trailing(n)
            h = history_of(n)
            if n == self.strain:
                flat[n] = self._flatten("strain", strain, batch, tr)
            elif n == HISTORY(self.strain):
                if strain_old is None:
                    raise FatalError(
                        f"{self._label}: the model reads '{n}': pass strain_old= (the strain "
                        "at the start of the step)"
                    )
                flat[n] = self._flatten("strain_old", strain_old, batch, tr)
            elif n == self.time:
                flat[n] = self._flatten("time", time, batch, tr)
            elif n == HISTORY(self.time):
                flat[n] = self._flatten("time_old", time_old, batch, tr)
            elif n in extra:
                flat[n] = self._flatten(f"extra '{n}'", extra[n], batch, tr)
            elif n in self.predictors:
                flat[n] = torch.zeros(
                    (math.prod(batch), *tr), dtype=strain.dtype, device=strain.device
                )
            elif h is not None and h[0] in self._state_vars:
                key = h[0] if h[1] == 1 else f"{h[0]}~{h[1] - 1}"
                flat[n] = st_flat[key]
            else:
                missing.append(n)
        if missing:
            raise FatalError(
                f"{self._label}: no value for input(s) {', '.join(missing)}: pass them in "
                "extra={name: tensor}"
            )
        return flat, st_flat

    def _forward(self, inputs: Mapping[str, Any]) -> dict[str, torch.Tensor]:
        return dict(self.model.forward(inputs))

    def _call(self, flat: Mapping[str, torch.Tensor]):
        """``(outputs, d stress / d strain)`` at *flat* (one call of the model)."""
        inputs = _typed_for(self.model, flat, self._in_sub)
        with torch.no_grad():
            if self._wrt:
                out, J = self.model.jacobian(inputs, wrt=self.strain)
            else:
                out, J = self.model.jacobian(inputs)
            return {n: out[n] for n in self._out_names}, J[self.stress][self.strain]

    def _evaluate(self, flat: Mapping[str, torch.Tensor]):
        """``(outputs (N, ...), tangent (N, 6, 6), ok (N,))``: the points where the model
        raises a ConvergenceError are dropped (those it names, else halves of the batch
        until each failing point is alone) and the others evaluated again; a point with
        a non-finite stress, tangent or state is not ok either. Failed points are zero."""
        n = next(iter(flat.values())).shape[0]
        device = next(iter(flat.values())).device
        parts: list[tuple[torch.Tensor, dict, torch.Tensor]] = []
        work = [torch.arange(n, device=device)]
        whole = True
        while work:
            idx = work.pop()
            part = flat if whole else {k: v[idx] for k, v in flat.items()}
            whole = False
            try:
                out, tan = self._call(part)
            except ConvergenceError as e:
                bad = _failed_points(e, idx.numel())
                if bad is not None:
                    bad = bad.to(device)
                    if bool((~bad).any()):
                        work.append(idx[~bad])
                elif idx.numel() > 1:
                    h = idx.numel() // 2
                    work.extend((idx[h:], idx[:h]))
                continue
            parts.append((idx, out, tan))
        like = next(iter(flat.values()))
        outs = {
            o: torch.zeros(
                (n, *self._out_sub[o], *self._out_base[o]), dtype=like.dtype, device=device
            )
            for o in self._out_names
        }
        tangent = torch.zeros((n, 6, 6), dtype=like.dtype, device=device)
        ok = torch.zeros(n, dtype=torch.bool, device=device)
        for idx, out, tan in parts:
            for o in self._out_names:
                y = out[o]
                if tuple(y.shape[1:]) != tuple(outs[o].shape[1:]):
                    if o in self._lags:
                        raise FatalError(
                            f"{self._label}: output '{o}' is {tuple(y.shape[1:])} per point, "
                            f"the state '{o}' {tuple(outs[o].shape[1:])}: give its sub-batch "
                            "shape with MaterialPoint(..., sub_batch={name: shape})"
                        )
                    outs[o] = outs[o].new_zeros((n, *y.shape[1:]))
                outs[o][idx] = y.reshape(idx.numel(), *y.shape[1:]).to(outs[o].dtype)
            tangent[idx] = tan.reshape(idx.numel(), 6, 6)
            ok[idx] = True
        finite = torch.isfinite(tangent).flatten(1).all(-1)
        for o in (self.stress, *self._lags):
            finite &= torch.isfinite(outs[o]).reshape(n, -1).all(-1)
        ok &= finite
        return outs, tangent, ok

    def _result(self, outs, tangent, ok, st_flat, batch, packed, on_failure):
        """The result at the batch's shape; failed points keep their old state."""
        n = ok.shape[0]

        def where(y: torch.Tensor, old: torch.Tensor) -> torch.Tensor:
            m = ok.reshape(n, *([1] * (y.dim() - 1)))
            return torch.where(m, y, old)

        new_flat = {}
        for x in self._state_vars:
            new_flat[x] = where(outs[x], st_flat[x])
            for k in range(1, self._lags[x]):
                prev = x if k == 1 else f"{x}~{k - 1}"
                new_flat[f"{x}~{k}"] = where(st_flat[prev], st_flat[f"{x}~{k}"])
        outputs = {}
        for o, y in outs.items():
            old = st_flat[o] if o in st_flat else torch.zeros_like(y)
            y = where(torch.nan_to_num(y), old) if o not in st_flat else where(y, old)
            outputs[o] = y.reshape((*batch, *y.shape[1:]))
        stress = outputs[self.stress]
        tangent = where(torch.nan_to_num(tangent), torch.zeros_like(tangent))
        state = {k: v.reshape((*batch, *self._shapes[k])) for k, v in new_flat.items()}
        converged = ok.reshape(batch)
        if on_failure == "raise" and not bool(ok.all()):
            raise ConvergenceError.at_points(
                self._label,
                ~converged if batch else ~ok,
                None,
                solver="the local solve",
                note="; cut the step and retry",
            )
        return MaterialPointResult(
            stress=stress,
            tangent=tangent.reshape((*batch, 6, 6)),
            state=self._packed(state, batch, tangent) if packed else state,
            converged=converged,
            outputs=outputs,
        )

    def _packed(self, state, batch, like: torch.Tensor) -> torch.Tensor:
        if self._state_names:
            return self.pack(state)
        return like.new_zeros((*batch, 0))

    def __repr__(self) -> str:
        return (
            f"{self._label}: strain '{self.strain}', stress '{self.stress}', state "
            f"{self._state_names}, predictors {self.predictors}"
        )


def _failed_points(e: ConvergenceError, n: int) -> torch.Tensor | None:
    """``(n,)`` bool, the points of a batch of *n* that *e* names as failed, or None where
    it does not name them (a compiled route's error) or names them for another batch."""
    mask = e.failed_mask
    if mask is not None and mask.numel() == n and bool(mask.any()):
        return mask.reshape(n).to(torch.bool)
    idx = e.failed_indices
    if idx and e.n_points in (None, n) and max(idx) < n:
        out = torch.zeros(n, dtype=torch.bool)
        out[list(idx)] = True
        return out
    return None
