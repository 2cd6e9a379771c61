// Batched dense LU solve of many small systems, vectorized across the systems.
//
// The Newton update of an implicit material model solves one small dense system per
// material point (7 x 7 for Perzyna, 19 x 19 for Chaboche with two back stresses).
// LAPACK's getrf/getrs are written for one large matrix: on 19 x 19 they spend most of
// their time in call overhead and short loops (about 5 us per factorization on the
// development machine, against well under 1 us of arithmetic). This kernel instead takes
// W systems at a time, stores them interleaved ("structure of arrays": entry (i, j) of
// the W systems side by side) and runs one Gaussian elimination whose every arithmetic
// loop runs over the W lanes: the compiler turns those loops into SIMD instructions.
//
// Partial pivoting, as getrf: in column k the row with the largest magnitude at or below
// the diagonal becomes the pivot row (the first such row on a tie). Pivot rows differ
// from lane to lane: the search runs across the lanes with selects instead of branches
// (each lane keeps its own best row), the row swap lane by lane where a lane's pivot row
// is not the diagonal's (O(n) per lane and column, against the O(n^2) update that runs
// across the lanes). A zero pivot in column k
// sets the lane's info to k + 1 (the first such column, as getrf's info) and the lane's
// solution becomes non-finite; the other lanes are not affected.
//
// Torch-free: the operator that calls it (dense_lu_op.cpp) owns threading and tensors.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace neml2::ops
{

/// Lanes per block: 8 doubles or 16 floats (two AVX2 registers, one AVX-512 register).
template <typename T>
constexpr int
lanes()
{
  return sizeof(T) == 4 ? 16 : 8;
}

/// Scratch entries one block needs: the W interleaved matrices and right-hand sides.
template <typename T>
constexpr std::size_t
dense_lu_scratch(std::int64_t n, std::int64_t k)
{
  return static_cast<std::size_t>(n * n + n * k) * lanes<T>();
}

/// Element strides of the matrices A: entry (i, j) of system p is A[p sp + i si + j sj].
/// Row-major matrices one after the other are {n n, n, 1}; the Jacobian an eager Newton
/// step assembles seed-major, (n, N, n) viewed as (N, n, n), is {n, 1, N n}: its
/// transposing copy would cost about as much as the factorization itself.
struct Strides
{
  std::int64_t sp, si, sj;
};

/// x -= mc yc, then x -= md yd, lane by lane (distinct rows: no aliasing, so the lane
/// loop is a vector loop).
template <typename T, int W>
inline void
rank2_update(T * __restrict x,
             const T * __restrict yc,
             const T * __restrict yd,
             const T * __restrict mc,
             const T * __restrict md)
{
  for (int l = 0; l < W; ++l)
  {
    const T t = x[l] - mc[l] * yc[l];
    x[l] = t - md[l] * yd[l];
  }
}

namespace detail
{
/// Factorize the W interleaved systems in the scratch and solve for their right-hand
/// sides in place: `a[(i n + j) W + l]` is entry (i, j) of lane l, `r[(i k + c) W + l]`
/// right-hand side c at row i; the solution replaces r. `bad[l]` is set to c + 1 at the
/// first column c of lane l with a zero pivot (left alone otherwise).
template <typename T>
void
factor_solve(T * a, T * r, std::int64_t n, std::int64_t k, std::int32_t * bad)
{
  constexpr int W = lanes<T>();
  // a lane's pivot row, as wide as T: the select that keeps it vectorizes with T's compare
  using Index = std::conditional_t<sizeof(T) == 4, std::int32_t, std::int64_t>;
  // partial pivoting in column c: the search across the lanes (branch-free, so the lane
  // loops are vector loops), the row swap lane by lane where a lane's pivot is off the
  // diagonal; whole rows move (with the multipliers and pending updates they carry)
  auto pivot = [&](std::int64_t c)
  {
    T best[W];
    Index piv[W];
    for (int l = 0; l < W; ++l)
    {
      best[l] = std::abs(a[(c * n + c) * W + l]);
      piv[l] = static_cast<Index>(c);
    }
    for (std::int64_t i = c + 1; i < n; ++i)
    {
      const T * aic = a + (i * n + c) * W;
      for (int l = 0; l < W; ++l)
      {
        const T v = std::abs(aic[l]);
        const bool larger = v > best[l];
        best[l] = larger ? v : best[l];
        piv[l] = larger ? static_cast<Index>(i) : piv[l];
      }
    }
    for (int l = 0; l < W; ++l)
    {
      if (!(best[l] > T(0)) && bad[l] == 0) // zero (or NaN) column: singular
        bad[l] = static_cast<std::int32_t>(c + 1);
      const std::int64_t p = piv[l];
      if (p != c)
      {
        for (std::int64_t j = 0; j < n; ++j)
          std::swap(a[(c * n + j) * W + l], a[(p * n + j) * W + l]);
        for (std::int64_t j = 0; j < k; ++j)
          std::swap(r[(c * k + j) * W + l], r[(p * k + j) * W + l]);
      }
    }
  };
  // r_i -= m r_c for the k right-hand sides
  auto eliminate_rhs = [&](std::int64_t i, std::int64_t c, const T * m)
  {
    for (std::int64_t j = 0; j < k; ++j)
    {
      T * rij = r + (i * k + j) * W;
      const T * rcj = r + (c * k + j) * W;
      for (int l = 0; l < W; ++l)
        rij[l] -= m[l] * rcj[l];
    }
  };
  // Elimination two columns at a time (a rank-2 update): column c's update of the
  // trailing rows is delayed until column d = c + 1 has its pivot, then both are applied
  // in one pass, so each trailing entry is loaded and stored once per two columns
  // instead of once per column (the pass is bound by those loads and stores, not by the
  // arithmetic). Every entry gets the same operations in the same order as one column at
  // a time: the results are bitwise those of the rank-1 elimination.
  std::int64_t c = 0;
  for (; c + 1 < n; c += 2)
  {
    const std::int64_t d = c + 1;
    pivot(c);
    T inv[W];
    for (int l = 0; l < W; ++l)
      inv[l] = T(1) / a[(c * n + c) * W + l];
    // column c's multipliers (kept in column c), applied now to column d and the
    // right-hand sides only
    for (std::int64_t i = d; i < n; ++i)
    {
      T * aic = a + (i * n + c) * W;
      T * aid = a + (i * n + d) * W;
      const T * acd = a + (c * n + d) * W;
      for (int l = 0; l < W; ++l)
      {
        aic[l] = aic[l] * inv[l];
        aid[l] -= aic[l] * acd[l];
      }
      eliminate_rhs(i, c, aic);
    }
    pivot(d);
    for (int l = 0; l < W; ++l)
      inv[l] = T(1) / a[(d * n + d) * W + l];
    // the pivot row of column d takes column c's update
    {
      const T * mc = a + (d * n + c) * W;
      for (std::int64_t j = d + 1; j < n; ++j)
      {
        T * adj = a + (d * n + j) * W;
        const T * acj = a + (c * n + j) * W;
        for (int l = 0; l < W; ++l)
          adj[l] -= mc[l] * acj[l];
      }
    }
    for (std::int64_t i = d + 1; i < n; ++i)
    {
      T mc[W], md[W];
      const T * aic = a + (i * n + c) * W;
      const T * aid = a + (i * n + d) * W;
      for (int l = 0; l < W; ++l)
      {
        mc[l] = aic[l];
        md[l] = aid[l] * inv[l];
      }
      for (std::int64_t j = d + 1; j < n; ++j)
        rank2_update<T, W>(a + (i * n + j) * W, a + (c * n + j) * W, a + (d * n + j) * W, mc, md);
      eliminate_rhs(i, d, md);
    }
  }
  if (c < n) // an odd n: the last column has no rows below, only its pivot check
    pivot(c);
  // back substitution with U, across the lanes
  for (std::int64_t i = n - 1; i >= 0; --i)
  {
    const T * aii = a + (i * n + i) * W;
    for (std::int64_t j = 0; j < k; ++j)
    {
      T * ri = r + (i * k + j) * W;
      for (std::int64_t q = i + 1; q < n; ++q)
      {
        const T * aiq = a + (i * n + q) * W;
        const T * rq = r + (q * k + j) * W;
        for (int l = 0; l < W; ++l)
          ri[l] -= aiq[l] * rq[l];
      }
      for (int l = 0; l < W; ++l)
        ri[l] /= aii[l];
    }
  }
}

/// The loop over the blocks of W systems in [first, last) that both entry points run:
/// `fill(ps, a)` writes the matrices of the systems `ps[0..W)` into the interleaved
/// scratch `a` (lanes past the end repeat the block's first system: solved, never written
/// back); the right-hand sides are read from B (N, n, k) and the solutions written to X.
template <typename T, typename Fill>
void
solve_lanes(Fill && fill,
            const T * B,
            T * X,
            std::int32_t * info,
            std::int64_t first,
            std::int64_t last,
            std::int64_t n,
            std::int64_t k,
            T * scratch)
{
  constexpr int W = lanes<T>();
  T * a = scratch;       // a[(i n + j) W + l]: entry (i, j) of lane l
  T * r = a + n * n * W; // r[(i k + c) W + l]: right-hand side c, row i, lane l
  const std::int64_t nk = n * k;
  for (std::int64_t p0 = first; p0 < last; p0 += W)
  {
    const int w = static_cast<int>(std::min<std::int64_t>(W, last - p0));
    std::int64_t ps[W];
    for (int l = 0; l < W; ++l)
      ps[l] = p0 + (l < w ? l : 0);
    fill(static_cast<const std::int64_t *>(ps), a);
    for (int l = 0; l < W; ++l)
    {
      const T * Bp = B + ps[l] * nk;
      for (std::int64_t e = 0; e < nk; ++e)
        r[e * W + l] = Bp[e];
    }
    std::int32_t bad[W] = {};
    factor_solve(a, r, n, k, bad);
    for (int l = 0; l < w; ++l)
    {
      T * Xp = X + (p0 + l) * nk;
      for (std::int64_t e = 0; e < nk; ++e)
        Xp[e] = r[e * W + l];
      info[p0 + l] = bad[l];
    }
  }
}
} // namespace detail

/// Solve A_p X_p = B_p for the systems p in [first, last).
///
/// A: N matrices n x n laid out by `sa`; B and X: (N, n, k) contiguous; info: (N).
/// X may alias B. scratch: dense_lu_scratch<T>(n, k) entries, owned by the caller (one
/// per thread).
template <typename T>
void
dense_lu_solve(const T * A,
               Strides sa,
               const T * B,
               T * X,
               std::int32_t * info,
               std::int64_t first,
               std::int64_t last,
               std::int64_t n,
               std::int64_t k,
               T * scratch)
{
  constexpr int W = lanes<T>();
  auto fill = [&](const std::int64_t * ps, T * a)
  {
    if (sa.sj > sa.si)
      // column-major within the block (the seed-major Jacobian: column j of W consecutive
      // systems is one contiguous run): read each column's run in order
      for (std::int64_t j = 0; j < n; ++j)
        for (int l = 0; l < W; ++l)
        {
          const T * Apj = A + ps[l] * sa.sp + j * sa.sj;
          for (std::int64_t i = 0; i < n; ++i)
            a[(i * n + j) * W + l] = Apj[i * sa.si];
        }
    else
      for (int l = 0; l < W; ++l)
      {
        const T * Ap = A + ps[l] * sa.sp;
        for (std::int64_t i = 0; i < n; ++i)
          for (std::int64_t j = 0; j < n; ++j)
            a[(i * n + j) * W + l] = Ap[i * sa.si + j * sa.sj];
      }
  };
  detail::solve_lanes<T>(fill, B, X, info, first, last, n, k, scratch);
}

/// One block of the matrices A given by their blocks: rows [r0, r0 + rs) and columns
/// [c0, c0 + cs) of every system, entry (r0 + i, c0 + j) of system p at
/// `data[j sc + p sp + i si]` (a tangent of `rs` residual components on `cs` seeds, laid
/// out (cs, N, rs); a stride may be 0 where the block is the same for every system).
template <typename T> struct Block
{
  const T * data;
  std::int64_t r0, rs, c0, cs;
  std::int64_t sc, sp, si;
};

/// dense_lu_solve with A given by `nblocks` blocks instead of one matrix: the blocks are
/// read straight into the interleaved scratch, so a Jacobian assembled from tangents
/// needs no copy into one matrix first. Entries no block covers are 0 (`covered`: the
/// blocks cover every entry, so the zero fill is skipped); blocks must not overlap.
template <typename T>
void
dense_lu_solve_blocks(const Block<T> * blocks,
                      std::int64_t nblocks,
                      bool covered,
                      const T * B,
                      T * X,
                      std::int32_t * info,
                      std::int64_t first,
                      std::int64_t last,
                      std::int64_t n,
                      std::int64_t k,
                      T * scratch)
{
  constexpr int W = lanes<T>();
  auto fill = [&](const std::int64_t * ps, T * a)
  {
    if (!covered)
      std::fill(a, a + n * n * W, T(0));
    for (std::int64_t b = 0; b < nblocks; ++b)
    {
      const Block<T> & blk = blocks[b];
      for (std::int64_t j = 0; j < blk.cs; ++j)
        for (int l = 0; l < W; ++l)
        {
          const T * src = blk.data + j * blk.sc + ps[l] * blk.sp;
          T * dst = a + (blk.r0 * n + blk.c0 + j) * W + l;
          for (std::int64_t i = 0; i < blk.rs; ++i)
            dst[i * n * W] = src[i * blk.si];
        }
    }
  };
  detail::solve_lanes<T>(fill, B, X, info, first, last, n, k, scratch);
}

} // namespace neml2::ops
