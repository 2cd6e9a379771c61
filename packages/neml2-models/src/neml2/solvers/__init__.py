"""Nonlinear and linear solvers: Newton (in-graph while_loop), line search, LU, Schur complement,
Krylov (GMRES, BiCGStab) with their preconditioners.

``ConvergenceError`` (raised when a solve fails; recoverable) is
:class:`neml2.tensors.ConvergenceError`, re-exported here.
"""

from neml2.solvers.krylov import GMRES, BiCGStab, KrylovSolver
from neml2.solvers.linear import DenseLU, LinearSolver, SchurComplement
from neml2.solvers.newton import Newton, NewtonResult, NewtonWithLineSearch
from neml2.solvers.nonlinear_system import NonlinearSystem
from neml2.solvers.preconditioners import (
    BlockJacobiPreconditioner,
    FullPreconditioner,
    JacobiPreconditioner,
    NoPreconditioner,
    Preconditioner,
)
from neml2.tensors import ConvergenceError

__all__ = [
    "GMRES",
    "BiCGStab",
    "BlockJacobiPreconditioner",
    "ConvergenceError",
    "DenseLU",
    "FullPreconditioner",
    "JacobiPreconditioner",
    "KrylovSolver",
    "LinearSolver",
    "Newton",
    "NewtonResult",
    "NewtonWithLineSearch",
    "NoPreconditioner",
    "NonlinearSystem",
    "Preconditioner",
    "SchurComplement",
]
