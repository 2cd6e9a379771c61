"""Package layering (ARCHITECTURE.md section 2), checked statically and at run time.

import-linter cannot graph a namespace package whose ``__init__`` lives in one
distribution and whose subpackages live in five others, so the static check
reads every module's imports with ``ast`` and compares them to ALLOWED.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: distribution -> (the neml2 subpackages it owns, what it may import of ours, externals
#: it must not import).
LAYERS: dict[str, tuple[set[str], set[str], set[str]]] = {
    "neml2-hit": ({"hit"}, set(), {"torch", "numpy"}),
    "neml2-tensors": ({"tensors"}, set(), set()),
    "neml2-models": ({"models", "solvers", ""}, {"tensors", "hit"}, set()),
    # neml2.pyzag: the pyzag adapter under the reference library's import path
    "neml2-drivers": ({"drivers", "pyzag"}, {"models", "solvers", "tensors", "hit", ""}, set()),
    # the compiler loads what it built (round trips, the AOTIModel HIT shim) with neml2.aoti
    # neml2.routes opens a model on every route: it compiles (neml2.compiler) and runs
    # artifacts (neml2.aoti), so it lives with the compiler
    "neml2-compile": (
        {"compiler", "routes"},
        {"compiler", "routes", "models", "solvers", "tensors", "hit", "aoti", ""},
        set(),
    ),
    "neml2-aoti-runtime": ({"aoti"}, {"tensors"}, set()),
}

#: modules allowed more than their distribution's layer: the runtime's HIT shim
#: (``type = AOTIModel``) subclasses neml2.models.Model; only neml2.models' registry loads
#: it, through the ``neml2.models`` entry point, and nothing in neml2.aoti imports it
PLUGINS: dict[str, set[str]] = {
    "packages/neml2-aoti-runtime/src/neml2/aoti/_aoti_model.py": {"models"},
}

#: modules allowed more than their distribution's layer, imported as usual: the dense
#: solver calls neml2::dense_lu_solve where the runtime is installed (importing the
#: runtime's binding loads libneml2, which registers the operator, cpp/ops)
OPTIONAL: dict[str, set[str]] = {
    "packages/neml2-models/src/neml2/solvers/linear.py": {"aoti"},
}


def _imports(path: Path) -> list[tuple[int, str]]:
    """(line, absolute module name) for every import in *path* (relative ones resolved)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    parts = list(path.parts)
    src = len(parts) - 1 - parts[::-1].index("src")
    package = parts[src + 1 : -1]  # the package holding the module (or the package itself)
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                mod = ".".join([*base, node.module] if node.module else base)
            else:
                mod = node.module or ""
            found.append((node.lineno, mod))
            if mod == "neml2":  # from neml2 import tensors
                found += [(node.lineno, f"neml2.{a.name}") for a in node.names]
    return found


def _subpackage(module: str) -> str | None:
    """'neml2.tensors.sr2' -> 'tensors'; 'neml2' -> ''; not ours -> None."""
    parts = module.split(".")
    if parts[0] != "neml2":
        return None
    return parts[1] if len(parts) > 1 else ""


@pytest.mark.parametrize("dist", sorted(LAYERS))
def test_static_layering(dist):
    owned, allowed, forbidden_ext = LAYERS[dist]
    src = ROOT / "packages" / dist / "src"
    files = sorted(src.rglob("*.py"))
    assert files, f"{dist} has no Python sources under {src}"
    violations = []
    for f in files:
        extra = PLUGINS.get(str(f.relative_to(ROOT)), set())
        extra = extra | OPTIONAL.get(str(f.relative_to(ROOT)), set())
        for line, mod in _imports(f):
            sub = _subpackage(mod)
            where = f"{f.relative_to(ROOT)}:{line}"
            if sub is None:
                if mod.split(".")[0] in forbidden_ext:
                    violations.append(f"{where}: {dist} must not import {mod}")
            elif sub not in owned | allowed | extra:
                violations.append(f"{where}: {dist} must not import {mod}")
            plugin = f"packages/{dist}/src/" + mod.replace(".", "/") + ".py"
            if plugin in PLUGINS and not extra:  # its own distribution never imports it
                violations.append(f"{where}: only neml2.models' registry may import {mod}")
    assert not violations, "\n".join(violations)


def test_the_plugin_modules_exist():
    """Every exception of PLUGINS names a source file (a moved one must not linger)."""
    assert all((ROOT / f).is_file() for f in PLUGINS | OPTIONAL), sorted(PLUGINS | OPTIONAL)


def test_checker_sees_relative_and_absolute_imports(tmp_path):
    """The static check itself can fail: it resolves every import form."""
    f = tmp_path / "src" / "neml2" / "hit" / "_x.py"
    f.parent.mkdir(parents=True)
    f.write_text(
        "import torch\nfrom ..tensors import SR2\nfrom neml2 import models\nfrom . import _y\n"
    )
    assert _imports(f) == [
        (1, "torch"),
        (2, "neml2.tensors"),
        (3, "neml2"),
        (3, "neml2.models"),
        (4, "neml2.hit"),
    ]


def test_only_models_ships_the_namespace_init():
    inits = sorted(p.relative_to(ROOT) for p in ROOT.glob("packages/*/src/neml2/__init__.py"))
    assert [str(p) for p in inits] == ["packages/neml2-models/src/neml2/__init__.py"]


@pytest.mark.parametrize(
    ("module", "absent"),
    [
        ("neml2.hit", ["torch", "neml2.tensors", "neml2.models"]),
        ("neml2.tensors", ["neml2.hit", "neml2.models"]),
        ("neml2.aoti", ["neml2.hit", "neml2.models", "neml2.drivers", "neml2.compiler"]),
    ],
)
def test_runtime_layering(module, absent):
    """Importing a low layer does not drag in a higher one (checked in a fresh interpreter)."""
    code = f"import sys, {module}; print([m for m in {absent!r} if m in sys.modules])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_cpp_runtime_has_no_python_headers():
    """libneml2 (cpp/aoti, cpp/dispatch, cpp/ops) must embed in pure C++ hosts."""
    bad = []
    for d in ("aoti", "dispatch", "ops"):
        for f in (ROOT / "cpp" / d).rglob("*"):
            if f.suffix in {".h", ".cpp"}:
                for i, line in enumerate(f.read_text().splitlines(), 1):
                    if line.startswith("#include") and any(
                        h in line for h in ("Python.h", "pybind11", "torch/csrc/utils/pybind")
                    ):
                        bad.append(f"{f.relative_to(ROOT)}:{i}: {line}")
    assert not bad, "\n".join(bad)
