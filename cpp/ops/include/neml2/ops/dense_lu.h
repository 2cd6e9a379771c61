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
// from lane to lane, so the search and the row swap run lane by lane (O(n) per lane and
// column, against the O(n^2) update that runs across the lanes). A zero pivot in column k
// sets the lane's info to k + 1 (the first such column, as getrf's info) and the lane's
// solution becomes non-finite; the other lanes are not affected.
//
// Torch-free: the operator that calls it (dense_lu_op.cpp) owns threading and tensors.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>

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
  T * a = scratch;       // a[(i n + j) W + l]: entry (i, j) of lane l
  T * r = a + n * n * W; // r[(i k + c) W + l]: right-hand side c, row i, lane l
  const std::int64_t nk = n * k;
  for (std::int64_t p0 = first; p0 < last; p0 += W)
  {
    const int w = static_cast<int>(std::min<std::int64_t>(W, last - p0));
    // interleave; lanes past the end repeat the block's first system (never written back)
    for (int l = 0; l < W; ++l)
    {
      const std::int64_t p = p0 + (l < w ? l : 0);
      const T * Ap = A + p * sa.sp;
      const T * Bp = B + p * nk;
      for (std::int64_t i = 0; i < n; ++i)
        for (std::int64_t j = 0; j < n; ++j)
          a[(i * n + j) * W + l] = Ap[i * sa.si + j * sa.sj];
      for (std::int64_t e = 0; e < nk; ++e)
        r[e * W + l] = Bp[e];
    }
    std::int32_t bad[W] = {};
    for (std::int64_t c = 0; c < n; ++c)
    {
      // pivot search and row swap, lane by lane
      for (int l = 0; l < W; ++l)
      {
        std::int64_t piv = c;
        T best = std::abs(a[(c * n + c) * W + l]);
        for (std::int64_t i = c + 1; i < n; ++i)
        {
          const T v = std::abs(a[(i * n + c) * W + l]);
          if (v > best)
          {
            best = v;
            piv = i;
          }
        }
        if (!(best > T(0)) && bad[l] == 0) // zero (or NaN) column: singular
          bad[l] = static_cast<std::int32_t>(c + 1);
        if (piv != c)
        {
          for (std::int64_t j = 0; j < n; ++j)
            std::swap(a[(c * n + j) * W + l], a[(piv * n + j) * W + l]);
          for (std::int64_t j = 0; j < k; ++j)
            std::swap(r[(c * k + j) * W + l], r[(piv * k + j) * W + l]);
        }
      }
      // eliminate below the pivot, across the lanes
      T inv[W];
      const T * acc = a + (c * n + c) * W;
      for (int l = 0; l < W; ++l)
        inv[l] = T(1) / acc[l];
      for (std::int64_t i = c + 1; i < n; ++i)
      {
        T m[W];
        const T * aic = a + (i * n + c) * W;
        for (int l = 0; l < W; ++l)
          m[l] = aic[l] * inv[l];
        for (std::int64_t j = c + 1; j < n; ++j)
        {
          T * aij = a + (i * n + j) * W;
          const T * acj = a + (c * n + j) * W;
          for (int l = 0; l < W; ++l)
            aij[l] -= m[l] * acj[l];
        }
        for (std::int64_t j = 0; j < k; ++j)
        {
          T * rij = r + (i * k + j) * W;
          const T * rcj = r + (c * k + j) * W;
          for (int l = 0; l < W; ++l)
            rij[l] -= m[l] * rcj[l];
        }
      }
    }
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
    for (int l = 0; l < w; ++l)
    {
      T * Xp = X + (p0 + l) * nk;
      for (std::int64_t e = 0; e < nk; ++e)
        Xp[e] = r[e * W + l];
      info[p0 + l] = bad[l];
    }
  }
}

} // namespace neml2::ops
