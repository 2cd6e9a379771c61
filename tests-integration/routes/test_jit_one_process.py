"""py-jit on several models in one process, in the order a user would compile them.

``neml2.compile`` of the per-slip crystal model once failed after elasticity, J2 and
Chaboche had been compiled in the same process (Inductor: "A subgraph argument other
than striding has been modified; FakeTensorUpdater cannot update this argument!"),
while it passed alone. Each model is compared with py-eager (forward, jvp, Jacobian)
by the route matrix's own check, in this order, so a compile that depends on what was
compiled before it fails here. The pyrolysis model adds a parameter promoted to an
input inside the Newton body (its compiled form once failed on every route: the value
was written onto the model inside the traced loop). Runs in the default
``integration`` session.

Each test is the route matrix's py-jit cell of its model and operation (the same check,
recorded in the same table): when both are collected, the matrix's own py-jit cell of a
model named here is deselected (conftest.py), so no model is compiled twice for py-jit.
"""

from __future__ import annotations

import pytest
import test_routes

#: the order matters: the crystal model is compiled last
SEQUENCE = ("elasticity", "j2_isoharden", "chaboche", "pyrolysis", "crystal_per_slip")


#: the route these tests check (a parameter, so the table records them as its cells)
ROUTE = "py-jit"


#: the cells in compile order, less those NEML2_ROUTE_EXCLUDE leaves out (the default
#: ``integration`` session keeps every model's forward, which is where the order-dependent
#: failure showed, and leaves out some derivatives of minutes each; see noxfile.py)
CELLS = [
    (m, op) for m in SEQUENCE for op in test_routes.OPS if not test_routes.excluded(ROUTE, m, op)
]


@pytest.mark.parametrize(
    ("route", "model", "op"),
    [(ROUTE, m, op) for m, op in CELLS],
    ids=[f"{m}-{op}" for m, op in CELLS],
)
def test_py_jit_in_sequence(route_models, reference, route_cell, route, model, op):
    test_routes.test_route_matches_py_eager(route_models, reference, route_cell, route, model, op)
