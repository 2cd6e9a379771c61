"""neml2.models._inductor: Inductor's settings and the mended parallel-region placement."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap

import pytest
import torch
from torch._inductor.utils import run_and_get_code

from neml2.models import _inductor


def _slip_sum(x, w):
    """(N, 12, 6) -> (N, 6): a sum over 12 "slip systems" of a 6-component quantity."""
    return (torch.sinh(x) * w[:, None]).sum(1)


def _generated_kernel(fn, *args) -> str:
    """The C++ kernel Inductor writes for *fn* inside code_generation(), after checking
    that the compiled *fn* gives eager's results."""
    torch._dynamo.reset()
    with _inductor.code_generation():
        out, code = run_and_get_code(torch.compile(fn, dynamic=False), *args)
    torch.testing.assert_close(out, fn(*args))
    src = "\n".join(code)
    return src[src.index('extern "C"') :]


@pytest.fixture(scope="module")
def slip_sum_kernel() -> str:
    """The C++ kernel Inductor writes for _slip_sum, inside code_generation()."""
    x = torch.rand(64, 12, 6, dtype=torch.float64)
    w = torch.rand(12, dtype=torch.float64)
    torch._dynamo.mark_dynamic(x, 0)
    return _generated_kernel(_slip_sum, x, w)


@pytest.mark.skipif(not _inductor.FIX_APPLIES, reason="this torch has no loop planner to mend")
def test_parallel_region_stays_on_the_material_points(slip_sum_kernel):
    """The OpenMP region opens before the first loop (the points), not inside the sum over
    slip systems: torch 2.13 alone counts the masked 6-of-16 step as 0 steps and opens it
    once per point and component, inside the reduction."""
    first_loop = slip_sum_kernel.index("for(")
    parallel = slip_sum_kernel.index("#pragma omp parallel")
    assert parallel < first_loop, slip_sum_kernel[:2000]
    # the 6 components are one masked vector step (the setting the mend keeps on)
    assert re.search(r"VectorizedN<double,\s*\d+>::loadu\(", slip_sum_kernel)


def test_code_generation_restores_torch():
    """On exit torch's own planner, settings and cache tag are back; nesting is harmless."""
    from torch._inductor.codegen.cpp import LoopNest

    planner = LoopNest.max_parallel_depth
    reuse = torch._inductor.ir.StorageBox.should_realize_on_reuse
    tag = torch.compiler.config.cache_key_tag
    threads = torch._inductor.config.cpp.dynamic_threads
    with _inductor.code_generation():
        assert torch._inductor.config.cpp.dynamic_threads is True
        if _inductor.FIX_APPLIES:
            assert LoopNest.max_parallel_depth is not planner
            assert _inductor.FIX_TAG in torch.compiler.config.cache_key_tag
        if _inductor.REUSE_FIX_APPLIES:
            assert torch._inductor.ir.StorageBox.should_realize_on_reuse is not reuse
        inner = LoopNest.max_parallel_depth
        inner_reuse = torch._inductor.ir.StorageBox.should_realize_on_reuse
        with _inductor.code_generation():
            assert LoopNest.max_parallel_depth is inner
            assert torch._inductor.ir.StorageBox.should_realize_on_reuse is inner_reuse
            assert torch.compiler.config.cache_key_tag.count(_inductor.FIX_TAG) <= 1
    assert LoopNest.max_parallel_depth is planner
    assert torch._inductor.ir.StorageBox.should_realize_on_reuse is reuse
    assert torch.compiler.config.cache_key_tag == tag
    assert torch._inductor.config.cpp.dynamic_threads == threads


def _seeded(a, b, t1, t2):
    """A per-point factor ``(N,)`` scaling two seed-major tangents ``(K, N, 6)``."""
    p = (a * b + 1.0).pow(1.7)
    return p[:, None] * t1, (p * a)[:, None] * t2


def _loop_depths(kernel: str, op: str) -> list[int]:
    """How many loops (``for(`` scopes) enclose each line of *kernel* that calls *op*."""
    depths, scopes, opens_loop = [], [], False
    for line in kernel.splitlines():
        if op in line:
            depths.append(sum(scopes))
        opens_loop = opens_loop or "for(" in line
        for ch in line:
            if ch == "{":
                scopes.append(opens_loop)
                opens_loop = False
            elif ch == "}":
                scopes.pop()
    return depths


def test_a_reused_per_point_factor_is_computed_once_per_point():
    """realize_reads_threshold = 1: the factor ``pow(a b + 1, 1.7)`` ``(N,)``, read by
    two consumers of shape ``(K, N, 6)``, is stored by a loop over the points alone;
    torch's default settings evaluate it inside the loops over K, N and the components."""
    a, b = torch.rand(64, dtype=torch.float64), torch.rand(64, dtype=torch.float64)
    t1, t2 = torch.rand(2, 5, 64, 6, dtype=torch.float64)
    kernel = _generated_kernel(_seeded, a, b, t1, t2)
    depths = _loop_depths(kernel, "pow(")
    assert depths, kernel
    assert set(depths) == {1}, (depths, kernel)


def _broadcast_rate(x, n, H):
    """A per-point power ``(N,)`` times a per-point block ``(N, 6, 6)`` (Perzyna's flow
    rate times the derivative of its flow direction)."""
    return x.pow(n)[:, None, None] * H


@pytest.mark.skipif(not _inductor.REUSE_FIX_APPLIES, reason="this torch has no reuse rule")
def test_a_broadcast_power_is_computed_once_per_point():
    """The heavy-reuse mend: ``pow(x, n)`` with a tensor exponent (no rewrite into
    multiplications), broadcast over the 36 entries of each point's block, is stored by
    a loop over the points alone; torch's own rule evaluates it inside the loops over the
    entries (36 powers per point)."""
    x = torch.rand(64, dtype=torch.float64) + 0.5
    n = torch.tensor(2.3, dtype=torch.float64)
    H = torch.rand(64, 6, 6, dtype=torch.float64)
    kernel = _generated_kernel(_broadcast_rate, x, n, H)
    depths = _loop_depths(kernel, "pow(")
    assert depths, kernel
    assert set(depths) == {1}, (depths, kernel)
    # and without the mend (settings alone) the power sits inside the entries' loops:
    # the test above would catch a torch that stopped recomputing it
    torch._dynamo.reset()
    with torch._inductor.config.patch(_inductor.OPTIONS):
        _, code = run_and_get_code(torch.compile(_broadcast_rate, dynamic=False), x, n, H)
    src = "\n".join(code)
    assert max(_loop_depths(src[src.index('extern "C"') :], "pow(")) > 1


def test_cache_key_names_settings_and_mend():
    assert _inductor.CACHE_KEY["cpp.dynamic_threads"] is True
    assert _inductor.CACHE_KEY["realize_reads_threshold"] == 1
    assert _inductor.CACHE_KEY["fix"] == _inductor.FIX_TAG


def test_the_backend_compiles_inside_code_generation_only(monkeypatch):
    """MendedInductor: the settings and mend are in force while a graph compiles; a call
    that reuses the compiled code does not enter code_generation at all."""
    entered: list[bool] = []
    original = _inductor.code_generation

    def counting():
        entered.append(True)
        return original()

    monkeypatch.setattr(_inductor, "code_generation", counting)
    x = torch.rand(8, 12, 6, dtype=torch.float64)
    w = torch.rand(12, dtype=torch.float64)
    torch._dynamo.reset()
    fn = torch.compile(_slip_sum, backend=_inductor.MendedInductor(None, None, None))
    torch.testing.assert_close(fn(x, w), _slip_sum(x, w))
    assert len(entered) == 1
    fn(x + 1.0, w)
    assert len(entered) == 1
    # options reach Inductor as torch.compile(options=...) would pass them
    assert _inductor.MendedInductor(None, {"pattern_matcher": False}, None).config == {
        "pattern_matcher": False
    }


def test_py_eager_imports_no_code_generator(tmp_path):
    """Loading and evaluating a model eagerly leaves Inductor unimported (its C++ code
    generator alone took 3.3 s to import); py-jit imports it when it compiles. A fresh
    interpreter: this test process has imported it already."""
    model = tmp_path / "model.i"
    model.write_text(
        textwrap.dedent(
            """\
            [Models]
              [model]
                type = LinearIsotropicElasticity
                coefficients = '1e5 0.3'
                coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'
              []
            []
            """
        )
    )
    script = textwrap.dedent(
        f"""\
        import sys
        import torch
        import neml2
        from neml2.tensors import SR2
        m = neml2.load_model({str(model)!r}, "model")
        m(SR2(torch.full((3, 6), 1e-3, dtype=torch.float64)))
        print(sorted(n for n in sys.modules if n.startswith("torch._inductor")))
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]", out.stdout
