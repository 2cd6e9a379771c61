"""Nonlinear and linear solvers: Newton (in-graph while_loop), line search, LU, Schur complement."""

from neml2.solvers.linear import DenseLU, LinearSolver, SchurComplement
from neml2.solvers.newton import Newton, NewtonResult, NewtonWithLineSearch
from neml2.solvers.nonlinear_system import NonlinearSystem

__all__ = [
    "DenseLU",
    "LinearSolver",
    "Newton",
    "NewtonResult",
    "NewtonWithLineSearch",
    "NonlinearSystem",
    "SchurComplement",
]
