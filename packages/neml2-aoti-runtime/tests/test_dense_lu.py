"""neml2::dense_lu_solve, the batched LU operator libneml2 registers (cpp/ops): values
against torch.linalg.solve_ex, singular points, float32, the fallbacks (n > 64, another
dtype), shape errors, fake tensors, threads, a graph that torch.export keeps it in, and a
second copy of libneml2 in one process; neml2::dense_lu_solve_blocks, the same solve from
A's blocks: the dense operator's bits, left-out and shared blocks, its checks."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import neml2.aoti  # loads libneml2, which registers the operator

op = torch.ops.neml2.dense_lu_solve
blocks_op = torch.ops.neml2.dense_lu_solve_blocks


def _systems(batch, n, k, dtype=torch.float64, seed=0):
    g = torch.Generator().manual_seed(seed)
    A = torch.randn(*batch, n, n, generator=g, dtype=dtype)
    A = A + 2.0 * n**0.5 * torch.eye(n, dtype=dtype)
    B = torch.randn(*batch, n, k, generator=g, dtype=dtype)
    return A, B


@pytest.mark.parametrize("n", [1, 2, 6, 7, 19, 31, 64, 65])
@pytest.mark.parametrize("k", [1, 3])
@pytest.mark.parametrize("batch", [(), (1,), (13,), (2, 9)])
def test_matches_solve_ex(n, k, batch):
    A, B = _systems(batch, n, k)
    if n > 1:  # a row swap in column 0 of every system
        A[..., 0, 0] = 0.0
    X, info = op(A, B)
    Xr, infor = torch.linalg.solve_ex(A, B)
    assert X.shape == B.shape and info.shape == batch and info.dtype == torch.int32
    assert torch.equal(info, infor)
    assert X.numel() > 0
    err = ((X - Xr).abs().max() / Xr.abs().max()).item()
    assert err <= 1e-12, err  # fails on NaN


def test_float32():
    A, B = _systems((37,), 19, 2, torch.float32)
    X, info = op(A, B)
    Xr = torch.linalg.solve(A.double(), B.double())
    assert X.dtype == torch.float32 and not info.any()
    err = ((X.double() - Xr).abs().max() / Xr.abs().max()).item()
    assert err <= 1e-5, err


def test_singular_points_only():
    A, B = _systems((11,), 3, 1)
    A[4] = torch.tensor([[1.0, 2, 0], [2, 4, 0], [0, 0, 5]], dtype=A.dtype)
    A[9] = 0.0
    X, info = op(A, B)
    assert info.tolist() == [0, 0, 0, 0, 2, 0, 0, 0, 0, 1, 0]
    finite = torch.isfinite(X).all(dim=(-1, -2))
    assert finite.tolist() == [p not in (4, 9) for p in range(11)]
    Xr = torch.linalg.solve(A[finite], B[finite])
    assert ((X[finite] - Xr).abs().max() <= 1e-12).item()


def test_empty_batch_and_noncontiguous():
    A, B = _systems((0,), 5, 1)
    X, info = op(A, B)
    assert X.shape == (0, 5, 1) and info.shape == (0,)
    A, B = _systems((8,), 5, 1)
    X, _ = op(A.mT, B)  # a transposed view
    Xr = torch.linalg.solve(A.mT, B)
    assert ((X - Xr).abs().max() <= 1e-12).item()


@pytest.mark.parametrize("n", [1, 7, 19])
def test_strided_matrices_give_the_contiguous_bits(n):
    """A of any strides: the seed-major Jacobian of an eager Newton step
    ((n, N, n) viewed as (N, n, n)), two batch axes that collapse, two that do not (a
    copy), and a matrix broadcast over the batch (stride 0): the same bits as the
    contiguous matrices."""
    A, B = _systems((37,), n, 1)
    seed_major = A.permute(2, 0, 1).contiguous().permute(1, 2, 0)
    assert n == 1 or seed_major.stride() == (n, 1, 37 * n)
    cases = [
        (seed_major, B),
        (A.reshape(37, 1, n, n).expand(37, 3, n, n), B.unsqueeze(1).expand(37, 3, n, 1)),
        (A[:36].reshape(6, 6, n, n).transpose(0, 1), B[:36].reshape(6, 6, n, 1).transpose(0, 1)),
        (A[:1].expand(37, n, n), B),
    ]
    for a, b in cases:
        X, info = op(a, b)
        Xc, infoc = op(a.contiguous(), b.contiguous())
        assert torch.equal(X, Xc) and torch.equal(info, infoc) and X.is_contiguous()


def test_threads_give_the_same_bits():
    A, B = _systems((4096,), 7, 1)
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        X1, _ = op(A, B)
        torch.set_num_threads(2)
        X2, _ = op(A, B)
    finally:
        torch.set_num_threads(threads)
    assert torch.equal(X1, X2)


def test_the_operators_are_built_threaded():
    """at::parallel_for, the operators' threading, is an OpenMP region in torch's headers:
    a libneml2 compiled without OpenMP runs it on one thread, whatever
    torch.set_num_threads says (the 31 x 31 LU of 1e4 points took 34 ms on one thread or
    two; threaded, 17 ms on two). The CMake build links OpenMP where the compiler has it,
    as every compiler of the supported Linux builds does."""
    from neml2.aoti import _core

    assert _core.ops_threading() == "openmp"


@pytest.mark.parametrize(
    "shapes, words",
    [
        (((3, 4, 5), (3, 4, 1)), "A must be (*batch, n, n)"),
        (((3, 4, 4), (2, 4, 1)), "B must be (*batch, n, k)"),
        (((3, 4, 4), (3, 5, 1)), "B must be (*batch, n, k)"),
    ],
)
def test_shape_errors(shapes, words):
    A = torch.zeros(shapes[0], dtype=torch.float64)
    B = torch.zeros(shapes[1], dtype=torch.float64)
    with pytest.raises(RuntimeError, match=re.escape("neml2::dense_lu_solve: " + words)):
        op(A, B)


def test_dtype_mismatch():
    with pytest.raises(RuntimeError, match="different dtypes"):
        op(torch.eye(3, dtype=torch.float64), torch.ones(3, 1, dtype=torch.float32))


def test_meta_shapes():
    A = torch.empty(10, 19, 19, device="meta", dtype=torch.float64)
    X, info = op(A, torch.empty(10, 19, 1, device="meta", dtype=torch.float64))
    assert X.shape == (10, 19, 1) and X.device.type == "meta"
    assert info.shape == (10,) and info.dtype == torch.int32


def test_export_keeps_the_operator():
    class Solve(torch.nn.Module):
        def forward(self, A, B):
            return op(A, B)[0]

    A, B = _systems((5,), 7, 1)
    batch = torch.export.Dim("batch", min=1)
    ep = torch.export.export(Solve(), (A, B), dynamic_shapes=({0: batch}, {0: batch}))
    targets = [str(n.target) for n in ep.graph.nodes if n.op == "call_function"]
    assert any("neml2.dense_lu_solve" in t for t in targets), targets
    A, B = _systems((1,), 7, 1, seed=1)  # batch size 1 after export
    assert torch.equal(ep.module()(A, B), op(A, B)[0])


def test_other_dtypes_fall_back_to_solve_ex():
    A, B = _systems((4,), 3, 2)
    A, B = A.to(torch.complex128), B.to(torch.complex128)
    X, info = op(A, B)
    Xr, infor = torch.linalg.solve_ex(A, B)
    assert torch.equal(X, Xr) and torch.equal(info, infor) and X.is_contiguous()


def test_a_second_copy_of_libneml2_does_not_register_again(tmp_path):
    """A C++ host that links libneml2 and embeds Python holds two copies (its own and the
    wheel's); the second one to load must not define the operator again (torch would
    abort the load). A copy of the wheel's library under another path is such a second
    copy: its static initializers run on load."""
    lib = Path(neml2.aoti.cmake_prefix_path()) / "lib" / "libneml2.so"
    assert lib.is_file(), lib
    copy = tmp_path / "libneml2_copy.so"
    shutil.copyfile(lib, copy)
    code = (
        "import ctypes, torch, neml2.aoti\n"
        f"ctypes.CDLL({str(copy)!r})\n"
        "A = torch.eye(3, dtype=torch.float64).expand(2, 3, 3)\n"
        "X, _ = torch.ops.neml2.dense_lu_solve(A, torch.ones(2, 3, 1, dtype=A.dtype))\n"
        "print(X.sum().item())\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "6.0"


def _split(A, cuts, skip=(), shared=()):
    """A (N, n, n) as blocks (cs, N, rs) over the row/column groups *cuts*: the groups
    (i, j) in *skip* left out (zeroed in A), those in *shared* the same for every system
    (A's first system's block, expanded)."""
    offs = [sum(cuts[:i]) for i in range(len(cuts))]
    A = A.clone()
    blocks, rows, cols = [], [], []
    for i, (r0, rs) in enumerate(zip(offs, cuts, strict=True)):
        for j, (c0, cs) in enumerate(zip(offs, cuts, strict=True)):
            view = A[:, r0 : r0 + rs, c0 : c0 + cs]
            if (i, j) in skip:
                view.zero_()
                continue
            if (i, j) in shared:
                view.copy_(view[:1].expand_as(view))
            d = view.permute(2, 0, 1)
            if (i, j) in shared:
                d = d[:, :1].expand_as(d)
            else:
                d = d.contiguous()
            blocks.append(d)
            rows.append(r0)
            cols.append(c0)
    return A, blocks, rows, cols


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("cuts", [[6, 1, 6, 6, 6, 6], [3, 4], [5], [40, 30]])
def test_blocks_give_the_dense_operators_bits(dtype, cuts):
    """Chaboche's 31 unknowns, a small split, one block, and n = 70 (both composite)."""
    n = sum(cuts)
    A, B = _systems((37,), n, 2, dtype=dtype)
    many = len(cuts) > 1
    A, blocks, rows, cols = _split(
        A, cuts, skip={(1, 0)} if many else (), shared={(0, 1)} if many else ()
    )
    X, info = blocks_op(blocks, rows, cols, B)
    Xd, infod = op(A, B)
    assert torch.equal(X, Xd) and torch.equal(info, infod)
    assert torch.equal(info, torch.zeros(37, dtype=torch.int32))


def test_blocks_of_a_singular_point():
    A, B = _systems((9,), 7, 1)
    A[4, :, 2] = 0.0
    A, blocks, rows, cols = _split(A, [3, 4])
    X, info = blocks_op(blocks, rows, cols, B)
    assert info.tolist() == [0, 0, 0, 0, 3, 0, 0, 0, 0]
    assert not torch.isfinite(X[4]).all() and torch.isfinite(X[torch.arange(9) != 4]).all()


@pytest.mark.parametrize(
    ("rows", "cols", "words"),
    [
        ([0, 3], [0], "one row and one column offset per block, got 1 blocks, 2 rows, 1 columns"),
        ([5], [0], "block 0 (rows 5+3, columns 0+3) lies outside the 7 x 7 matrix"),
        ([-1], [0], "block 0 (rows -1+3, columns 0+3) lies outside the 7 x 7 matrix"),
    ],
)
def test_block_offset_errors(rows, cols, words):
    blk = torch.zeros(3, 4, 3, dtype=torch.float64)
    B = torch.zeros(4, 7, 1, dtype=torch.float64)
    with pytest.raises(RuntimeError, match=re.escape("neml2::dense_lu_solve_blocks: " + words)):
        blocks_op([blk] * len(cols), rows, cols, B)


def test_block_overlap_shape_and_dtype_errors():
    B = torch.zeros(4, 7, 1, dtype=torch.float64)
    blk = torch.zeros(3, 4, 3, dtype=torch.float64)
    with pytest.raises(RuntimeError, match=r"block 1 overlaps another at entry \(2, 2\)"):
        blocks_op([blk, blk], [0, 2], [0, 2], B)
    with pytest.raises(RuntimeError, match=r"block 0 must be \(cs, N, rs\) with N = 4"):
        blocks_op([torch.zeros(3, 5, 3, dtype=torch.float64)], [0], [0], B)
    with pytest.raises(RuntimeError, match="block 0 has another dtype or device than B"):
        blocks_op([blk.float()], [0], [0], B)
    with pytest.raises(RuntimeError, match=r"B must be \(N, n, k\)"):
        blocks_op([blk], [0], [0], B[0])
