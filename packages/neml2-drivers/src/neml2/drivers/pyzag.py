"""A neml2 residual model as a pyzag recursive nonlinear function (calibration).

pyzag (``pip install 'neml2-drivers[pyzag]'``) integrates a recursive system
``R_k = f(x_k, x_{k-1}; u_k, u_{k-1}; p) = 0`` over a whole time history, in
chunks of steps solved together, and differentiates a loss of the trajectory
with respect to the parameters ``p`` by the adjoint method (one reverse sweep,
memory independent of the number of steps). A neml2 implicit model already has
that form: the residual model of its ``[EquationSystems]`` (``implicit_rate`` in
the reference inputs) maps the unknowns ``x`` (state: e.g. ``stress``,
``equivalent_plastic_strain``), their previous values ``x~1``, the driving
forces ``u`` (``E``, ``t``) and their previous values ``u~1`` to residuals.

:class:`PyzagModel` packs the state into one vector ``(*B, n_state)`` and the
forces into one ``(*B, n_force)``, and gives pyzag the residual ``R`` with its
two Jacobian blocks ``dR_k/dx_k`` and ``dR_k/dx_{k-1}`` from the model's
``jacobian`` (forward-mode tangents; every route's model has it). The model's
``torch.nn.Parameter`` s are the calibration parameters: the loss gradient
reaches them through :meth:`PyzagModel.integrate` (adjoint), so any torch
optimizer drives the fit::

    model = neml2.load_model("examples/calibration/model.i", "implicit_rate")
    pz = PyzagModel(model)  # state/forces inferred from the names
    traj = pz.integrate({"E": strain, "t": time})  # (n_step, *B, *base) each
    loss = ((traj["stress"][..., 0] - data) ** 2).mean()
    loss.backward()  # model.named_parameters() now hold gradients

``jit=True`` evaluates the residual through ``neml2.compile(model)`` (py-jit,
in-process ``torch.compile``) where that is available.

:class:`NEML2PyzagModel` (also ``neml2.pyzag.NEML2PyzagModel``) is the same factory
constructed as the reference library's is: from an ``[EquationSystems]`` block, with
``include_parameters`` / ``exclude_parameters`` choosing the trained parameters.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence

import torch
from pyzag import chunktime, nonlinear
from pyzag.ode import DenseODEWrapper

from neml2.tensors import ConvergenceError, FatalError

__all__ = ["NEML2PyzagModel", "PyzagModel"]

#: Suffix of a variable's value at the previous step (the reference's ``~1``).
OLD = "~1"


class PyzagModel(torch.nn.Module, nonlinear.NonlinearFunctionOperatorFactory):
    """pyzag factory (lookback 1) over a neml2 residual model.

    *model*: a neml2 model whose outputs are residuals of *state* (any route
    with the name-keyed ``jacobian(inputs)``; a :class:`neml2.models.Model`
    also contributes its parameters). *state*: the unknowns, in packing order;
    by default every input ``x`` with an output ``x_residual``. *residuals*:
    the outputs, one per state variable (default ``<x>_residual``, or the
    outputs in order). *forces*: the driving inputs; by default every other
    input that is not a previous-step value. Inputs ``x~1`` of a state or
    force variable get the previous step's value; any other input is an error.

    Layout: state ``(*B, n_state)``, the variables' flattened bases
    concatenated in *state* order; forces ``(*B, n_force)`` likewise. Raw
    tensors carry no sub-batch axes, so sub-batch models (crystal plasticity's
    per-slip state) are not supported yet.
    """

    def __init__(
        self,
        model: torch.nn.Module,
        state: Sequence[str] | None = None,
        forces: Sequence[str] | None = None,
        residuals: Sequence[str] | None = None,
        *,
        jit: bool = False,
    ) -> None:
        super().__init__()
        self.model = model
        names = list(model.input_names)
        shapes = dict(zip(names, (tuple(s) for s in model.input_base_shapes), strict=True))
        out_shapes = dict(
            zip(model.output_names, (tuple(s) for s in model.output_base_shapes), strict=True)
        )
        current = [n for n in names if not n.endswith(OLD)]
        if state is None:
            state = [n for n in current if f"{n}_residual" in out_shapes]
            if not state:
                raise FatalError(
                    f"PyzagModel: no input x of the model has a residual output 'x_residual' "
                    f"(inputs: {', '.join(names)}; outputs: {', '.join(out_shapes)}); "
                    "name the state variables"
                )
        if residuals is None:
            residuals = [f"{n}_residual" for n in state]
            if not all(r in out_shapes for r in residuals):
                residuals = list(model.output_names)
        if forces is None:
            forces = [n for n in current if n not in state]
        for kind, vars_ in (("state", state), ("force", forces)):
            for n in vars_:
                if n not in shapes:
                    raise FatalError(
                        f"PyzagModel: {kind} variable '{n}' is not an input of the model; "
                        f"inputs: {', '.join(names)}"
                    )
        for r in residuals:
            if r not in out_shapes:
                raise FatalError(
                    f"PyzagModel: residual '{r}' is not an output of the model; "
                    f"outputs: {', '.join(out_shapes)}"
                )
        known = set(state) | set(forces) | {n + OLD for n in (*state, *forces)}
        stray = [n for n in names if n not in known]
        if stray:
            raise FatalError(
                f"PyzagModel: input(s) {', '.join(stray)} are neither state nor forces "
                f"(state: {', '.join(state)}; forces: {', '.join(forces) or '-'})"
            )
        self.state_names = list(state)
        self.force_names = list(forces)
        self.residual_names = list(residuals)
        self._shapes = shapes
        self._out_shapes = out_shapes
        self._inputs = set(names)
        self.n_state = sum(math.prod(shapes[n]) for n in state)
        self.n_force = sum(math.prod(shapes[n]) for n in forces)
        n_res = sum(math.prod(out_shapes[r]) for r in residuals)
        if n_res != self.n_state:
            raise FatalError(
                f"PyzagModel: {n_res} residual components ({', '.join(residuals)}) for "
                f"{self.n_state} state components ({', '.join(state)}); the system must be square"
            )
        self._wrapper = DenseODEWrapper()
        self._evaluate = model
        if jit:
            import neml2

            compile_ = getattr(neml2, "compile", None)
            if compile_ is None:
                raise FatalError("PyzagModel(jit=True): this neml2 has no neml2.compile (py-jit)")
            self._evaluate = compile_(model)

    # ------------------------------------------------------------------ pyzag factory
    @property
    def lookback(self) -> int:
        return 1

    @property
    def wrapper(self) -> DenseODEWrapper:
        return self._wrapper

    def make_operator(self, prev_solution, forces, inverse_operator):
        return nonlinear.ChunkOp(self, prev_solution, forces, inverse_operator)

    def evaluate_raw(self, x_full: torch.Tensor, forces: Sequence[torch.Tensor]):
        """Residual ``(m, *B, n_state)`` and Jacobian of steps 1..m of *x_full*.

        *x_full*: ``(m + 1, *B, n_state)``, the previous step first; *forces*:
        one tensor ``(m + 1, *B, n_force)``.
        """
        f = forces[0]
        batch = tuple(x_full.shape[:-1])
        batch = (batch[0] - 1, *batch[1:])
        inputs = {}
        inputs.update(self._unpack(self.state_names, x_full[1:], x_full[:-1]))
        inputs.update(self._unpack(self.force_names, f[1:], f[:-1]))
        out, jac = self._jacobian(inputs)
        R = torch.cat(
            [
                out[r].expand(*batch, *self._out_shapes[r]).reshape(*batch, -1)
                for r in self.residual_names
            ],
            dim=-1,
        )
        diag = self._assemble(jac, self.state_names, batch, x_full)
        sub = self._assemble(jac, [n + OLD for n in self.state_names], batch, x_full)
        return R, self._wrapper.wrap_jacobian(diag, sub)

    def _jacobian(self, inputs: dict[str, torch.Tensor]):
        """Outputs and the blocks ``J[residual][x or x~1]`` the system needs.

        A :class:`neml2.models.Model` is called with the typed contract and
        identity seeds on the state variables only (the forces need no
        derivatives: half the tangents for the reference's viscoplastic
        models); any other model (a compiled one) through its ``jacobian``.
        """
        model = self._evaluate
        spec = getattr(model, "input_spec", None)
        if spec is None or not hasattr(model, "output_spec"):
            return model.jacobian(inputs)
        seeded = [n for n in (*self.state_names, *(s + OLD for s in self.state_names))]
        xs, v = [], {}
        for name, typ in spec.items():
            x = inputs[name]
            xs.append(typ(x))
            if name in seeded:
                k = math.prod(self._shapes[name])
                eye = torch.eye(k, dtype=x.dtype, device=x.device)
                v[name] = {name: eye.reshape(k, *self._shapes[name])}
        *outs, v_out = model(*xs, v=v)
        out, jac = {}, {}
        for name, o in zip(model.output_spec, outs, strict=True):
            out[name] = o.data
            jac[name] = {}
            for i in seeded:
                d = v_out[name].get(i)
                if d is None:
                    continue
                t = d.data.expand(d.data.shape[0], *o.data.shape)
                jac[name][i] = t.movedim(0, -1).reshape(*o.data.shape, *self._shapes[i])
        return out, jac

    # ------------------------------------------------------------------ packing
    def _unpack(self, vars_, new, old) -> dict[str, torch.Tensor]:
        out = {}
        i = 0
        batch = new.shape[:-1]
        for n in vars_:
            base = self._shapes[n]
            k = math.prod(base)
            out[n] = new[..., i : i + k].reshape(*batch, *base)
            if n + OLD in self._inputs:
                out[n + OLD] = old[..., i : i + k].reshape(*batch, *base)
            i += k
        return out

    def _assemble(self, jac, cols, batch, like) -> torch.Tensor:
        rows = []
        for r in self.residual_names:
            nr = math.prod(self._out_shapes[r])
            blocks = []
            for c, s in zip(cols, self.state_names, strict=True):
                ns = math.prod(self._shapes[s])
                b = jac[r].get(c) if c in self._inputs else None
                if b is None:
                    blocks.append(like.new_zeros(*batch, nr, ns))
                else:
                    blocks.append(
                        b.reshape(
                            *b.shape[: b.dim() - len(self._out_shapes[r]) - len(self._shapes[s])],
                            nr,
                            ns,
                        ).expand(*batch, nr, ns)
                    )
            rows.append(torch.cat(blocks, dim=-1))
        return torch.cat(rows, dim=-2)

    def pack(self, kind: str, values: Mapping[str, torch.Tensor]) -> torch.Tensor:
        """Pack ``{name: (*B, *base)}`` of the *kind* (``"state"``/``"forces"``) variables."""
        names = self.state_names if kind == "state" else self.force_names
        missing = [n for n in names if n not in values]
        if missing:
            raise FatalError(f"PyzagModel: missing {kind} variable(s) {', '.join(missing)}")
        parts = [torch.as_tensor(values[n]) for n in names]
        batch = torch.broadcast_shapes(
            *(p.shape[: p.dim() - len(self._shapes[n])] for p, n in zip(parts, names, strict=True))
        )
        return torch.cat(
            [
                p.expand(*batch, *self._shapes[n]).reshape(*batch, -1)
                for p, n in zip(parts, names, strict=True)
            ],
            dim=-1,
        )

    def unpack(self, kind: str, packed: torch.Tensor) -> dict[str, torch.Tensor]:
        """Inverse of :meth:`pack`: ``(*B, n)`` to ``{name: (*B, *base)}``."""
        names = self.state_names if kind == "state" else self.force_names
        return {k: v for k, v in self._unpack(names, packed, packed).items() if k in names}

    # ------------------------------------------------------------------ integration
    def integrate(
        self,
        forces: Mapping[str, torch.Tensor],
        initial_state: Mapping[str, torch.Tensor] | None = None,
        *,
        block_size: int = 10,
        adjoint: bool = True,
        rtol: float = 1e-8,
        atol: float = 1e-10,
        miter: int = 25,
    ) -> dict[str, torch.Tensor]:
        """Integrate the state through the force history; differentiable in the parameters.

        *forces*: ``{name: (n_step, *B, *base)}`` with step 0 the initial
        values. *initial_state*: ``{name: (*B, *base)}`` (zeros by default).
        Returns ``{state name: (n_step, *B, *base)}``. With *adjoint* the
        result carries a gradient to every parameter that requires one
        (pyzag's adjoint sweep); otherwise it is a plain solve. *block_size*
        steps are solved together. Non-convergence raises
        :class:`neml2.ConvergenceError`.
        """
        f = self.pack("forces", forces)
        n = f.shape[0]
        if n < 3:
            raise FatalError(f"PyzagModel.integrate: need at least 3 steps, got {n}")
        if initial_state is None:
            y0 = f.new_zeros(*f.shape[1:-1], self.n_state)
        else:
            y0 = self.pack("state", initial_state).expand(*f.shape[1:-1], self.n_state)
        with warnings.catch_warnings():
            # pyzag lowers torch's AOTAutograd donated-buffer default process-wide the
            # first time a solver is built (needed for its adjoint over torch.compile'd
            # models) and warns about it; that is expected here.
            warnings.filterwarnings("ignore", message="pyzag lowered torch")
            solver = nonlinear.RecursiveNonlinearEquationSolver(
                self,
                step_generator=nonlinear.StepGenerator(block_size),
                predictor=nonlinear.PreviousStepsPredictor(),
                nonlinear_solver=chunktime.ChunkNewtonRaphson(
                    rtol=rtol, atol=atol, miter=miter, throw_on_fail=True
                ),
            )
        try:
            if adjoint:
                params = [p for p in self.parameters() if p.requires_grad]
                y = nonlinear.AdjointWrapper.apply(solver, y0, n, (f,), *params)
            else:
                with torch.no_grad():
                    y = solver.solve(y0, n, f)
        except RuntimeError as e:
            if "did not succeed" in str(e):
                # pyzag does not say which points failed: only the iterations are known
                raise ConvergenceError(
                    f"PyzagModel.integrate: Newton did not converge within {miter} iterations "
                    f"(rtol={rtol}, atol={atol}) in a block of {block_size} steps; "
                    "reduce block_size or the step size",
                    iterations=miter,
                ) from e
            raise
        return self.unpack("state", y)


class NEML2PyzagModel(PyzagModel):
    """:class:`PyzagModel` with the reference library's constructor (``neml2.pyzag``).

    ``NEML2PyzagModel(sys, *, exclude_parameters=None, include_parameters=None)``:
    *sys* is an ``[EquationSystems]`` block (``neml2.load_nonlinear_system(path,
    name)``), whose ``unknowns`` are the state and ``residuals`` the residuals (in the
    system's order), the model's other inputs the forces; a residual model is taken too,
    with the layout inferred as :class:`PyzagModel` does. *state*, *forces*,
    *residuals* and *jit* are :class:`PyzagModel`'s and override what *sys* says.

    The parameters of the factory (``named_parameters()``, what an optimizer and the
    adjoint see) are the model's, named ``<block>_<parameter>`` as the reference names
    them (``elasticity_E`` for ``elasticity.E``); they are the model's own tensors, so a
    step of the optimizer changes the model. *include_parameters* keeps only the
    listed ones, *exclude_parameters* all but the listed ones (either spelling, not
    both options); the others keep their values and get no gradient.
    ``nstate`` / ``nforce`` are ``n_state`` / ``n_force``. Errors are
    :class:`neml2.FatalError` (the reference raises ``ValueError`` for both lists given).
    """

    def __init__(
        self,
        sys,
        state: Sequence[str] | None = None,
        forces: Sequence[str] | None = None,
        residuals: Sequence[str] | None = None,
        *,
        exclude_parameters: Sequence[str] | None = None,
        include_parameters: Sequence[str] | None = None,
        jit: bool = False,
    ) -> None:
        if exclude_parameters is not None and include_parameters is not None:
            raise FatalError(
                "NEML2PyzagModel: exclude_parameters and include_parameters are mutually "
                "exclusive; give at most one (neither: every parameter is trained)"
            )
        model = sys
        if hasattr(sys, "unknowns") and hasattr(sys, "residuals") and hasattr(sys, "model"):
            model = sys.model
            state = list(sys.unknowns) if state is None else state
            residuals = list(sys.residuals) if residuals is None else residuals
        super().__init__(model, state, forces, residuals, jit=jit)
        # the model stays reachable but is no submodule: the factory's parameters are the
        # chosen ones, registered below under the reference's flat names
        evaluate = self._evaluate
        for key in [k for k, m in self._modules.items() if m is model or m is evaluate]:
            del self._modules[key]
        object.__setattr__(self, "model", model)
        object.__setattr__(self, "_evaluate", evaluate)
        named = dict(model.named_parameters()) if hasattr(model, "named_parameters") else {}
        flat: dict[str, str] = {}
        for name in named:
            key = name.replace(".", "_")
            if key in flat:
                raise FatalError(
                    f"NEML2PyzagModel: parameters '{flat[key]}' and '{name}' share the flat "
                    f"name '{key}'"
                )
            flat[key] = name
        chosen = set(flat)
        for option, listed in (
            ("include_parameters", include_parameters),
            ("exclude_parameters", exclude_parameters),
        ):
            if listed is None:
                continue
            keys = set()
            for n in listed:
                key = n.replace(".", "_")
                if key not in flat:
                    raise FatalError(
                        f"NEML2PyzagModel: {option} names '{n}', which is not a parameter of "
                        f"the model; its parameters: {', '.join(flat) or '(none)'}"
                    )
                keys.add(key)
            chosen = keys if option == "include_parameters" else chosen - keys
        for key, name in flat.items():
            if key in chosen:
                self.register_parameter(key, named[name])

    def _apply(self, fn, recurse=True):
        # the model is no submodule: move and cast it (its buffers too) with the factory
        if isinstance(self.model, torch.nn.Module):
            self.model._apply(fn, recurse)
        return super()._apply(fn, recurse)

    @property
    def nstate(self) -> int:
        """Flattened size of the state, :attr:`n_state` (the reference's name)."""
        return self.n_state

    @property
    def nforce(self) -> int:
        """Flattened size of the forces, :attr:`n_force` (the reference's name)."""
        return self.n_force
