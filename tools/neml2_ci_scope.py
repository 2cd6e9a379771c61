"""What the default CI (`uv run nox`) runs: the one place that decides it.

noxfile.py reads the sessions and the route-matrix selection from here, and the docs
build (docs/_hooks/ci_scope.py) writes the page section "What default CI runs" from
:func:`markdown`, so the docs cannot drift from what runs. Plain Python, no nox and no
torch: both read it.
"""

from __future__ import annotations

#: the sessions `uv run nox` runs, in order
DEFAULT_SESSIONS = [
    "tests",
    "integration",
    "bench-tests",
    "cpp",
    "mpi",
    "wheels",
    "compat",
    "lint",
    "docs",
]

#: the zoo models whose six-route matrix runs in the default `integration` session (every
#: zoo model: `nox -s routes`)
CI_ROUTE_MODELS = (
    "elasticity",
    "j2_isoharden",
    "chaboche",
    "perzyna",
    "crystal_per_slip",
    "taylor",
)

#: cells of the route matrix (ROUTE:MODEL, or ROUTE:MODEL:OP for one operation; the route
#: '@artifact' stands for every route that runs the model's AOTI artifact, py-aoti,
#: cpp-aoti and cpp-dispatch, which share one compile) that the default `integration`
#: session leaves out, the compiles of many minutes cold on 2 cores: py-jit of Taylor
#: (over ten), the AOTI artifact of Chaboche, of Taylor and of the per-slip crystal model
#: (the crystal one alone took 681 s of one worker in the fresh-clone run at ff5d339), and
#: three py-jit derivatives of the py-jit sequence test (routes/test_jit_one_process.py,
#: one worker under --dist loadscope): the crystal model's jvp and Jacobian (299 s and
#: 348 s in the fresh-clone run at 65c105e) and Chaboche's jvp (185 s). Their py-eager and
#: cpp-eager cells stay, and `nox -s routes` runs every cell.
CI_ROUTE_EXCLUDE = (
    "py-jit:taylor",
    *(f"@artifact:{model}" for model in ("chaboche", "taylor", "crystal_per_slip")),
    "py-jit:crystal_per_slip:jvp",
    "py-jit:crystal_per_slip:jacobian",
    "py-jit:chaboche:jvp",
)

OPS = ("forward", "jvp", "jacobian")


def left_out(route: str, model: str, op: str, artifact_routes: set[str]) -> bool:
    """Whether CI_ROUTE_EXCLUDE leaves the cell (*route*, *model*, *op*) out."""
    for item in CI_ROUTE_EXCLUDE:
        r, m, *o = item.split(":")
        routes = artifact_routes if r == "@artifact" else {r}
        if route in routes and m == model and (not o or o[0] == op):
            return True
    return False


def markdown(routes: list[tuple[str, bool]]) -> str:
    """The docs section: the sessions, and the route matrix's cells in default CI.

    Args:
        routes: ``(name, runs an AOTI artifact)`` per route, in table order (from
            ``neml2.routes.ROUTES``).

    Returns:
        Markdown: a list of the default sessions and a table model x route whose cells
        say which operations run.
    """
    artifact = {n for n, a in routes if a}
    lines = [
        "`uv run nox` runs the sessions " + ", ".join(f"`{s}`" for s in DEFAULT_SESSIONS) + ".",
        "",
        "In `integration`: every conformance case on py-eager (`conformance/ledger.toml` "
        "lists the ones that do not pass), and the six-route matrix (forward, jvp and "
        "Jacobian against py-eager at batches 1, 7 and 16) on these zoo models and cells "
        "(— left out by `CI_ROUTE_EXCLUDE`; `uv run nox -s routes` runs every cell of every "
        "zoo model, `uv run nox -s conformance_routes` the conformance suite on py-jit and "
        "py-aoti):",
        "",
        "| model | " + " | ".join(n for n, _ in routes) + " |",
        "|---|" + "---|" * len(routes),
    ]
    for model in CI_ROUTE_MODELS:
        cells = []
        for name, _ in routes:
            ran = [op for op in OPS if not left_out(name, model, op, artifact)]
            cells.append("all" if len(ran) == len(OPS) else (", ".join(ran) or "—"))
        lines.append(f"| {model} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
