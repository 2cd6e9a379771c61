"""Package surface: public names, layering (torch + numpy only), namespace package."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import neml2.tensors as nt


def test_public_names_exist():
    for name in nt.__all__:
        assert getattr(nt, name) is not None, name
    for cls in nt.TYPES:
        assert issubclass(cls, nt.TensorWrapper)


def test_imports_only_torch_and_numpy():
    code = (
        "import sys, neml2.tensors\n"
        "bad = sorted(m for m in sys.modules if m.startswith('neml2.') and "
        "not m.startswith('neml2.tensors'))\n"
        "third = sorted({m.split('.')[0] for m in sys.modules} & "
        "{'scipy', 'pandas', 'sympy', 'jax'})\n"
        "print(bad, third)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[] []", out.stdout


def test_no_namespace_init():
    src = Path(nt.__file__).resolve().parents[1]
    assert src.name == "neml2"
    assert not (src / "__init__.py").exists() or "neml2-tensors" not in str(src)
