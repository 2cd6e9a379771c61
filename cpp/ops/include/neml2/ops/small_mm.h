// Batched products of small matrices, C_p = A_p B_p, for the typed tensors' eager
// contractions (R2 @ R2, R2 @ Vec: 3 x 3 times 3 x 3 or 3 x 1).
//
// ATen's batched matmul takes its general loop for such sizes, about 30-60 ns per 3 x 3
// product on the development machine, and first copies a broadcast operand out at the
// full batch shape (a rotation (N, 3, 3) times the tangents (K, N, 3, 3) of a crystal
// model copies the rotation K times). This loop reads both operands in place through
// their strides (a broadcast axis has stride 0) and has the matrix sizes as compile-time
// constants for the sizes the typed tensors use.
//
// Torch-free: the operator that calls it (small_mm_op.cpp) owns shapes, threading and
// tensors.
#pragma once

#include <algorithm>
#include <cstdint>

namespace neml2::ops
{

/// The most batch axes a layout holds (after coalescing).
constexpr int kMaxBatchDims = 16;

/// The layout of a batch of products C_p = A_p B_p, A_p m x k, B_p k x n.
///
/// The batch axes (nd >= 1, after coalescing) have sizes `size`; A_p starts at
/// A[sum_d i_d sa[d]] and its entry (i, j) is at a_row i + a_col j from there (B alike).
/// C is contiguous: (N, m, n), N the product of the sizes, in row-major batch order.
struct MatmulLayout
{
  int nd = 0;
  std::int64_t size[kMaxBatchDims] = {};
  std::int64_t sa[kMaxBatchDims] = {};
  std::int64_t sb[kMaxBatchDims] = {};
  std::int64_t a_row = 0, a_col = 0, b_row = 0, b_col = 0;
  std::int64_t m = 0, k = 0, n = 0;
};

/// One product c = a b (c contiguous m x n); M, K, N > 0 fix the sizes at compile time,
/// 0 takes them from the layout; Dense: both matrices row-major and contiguous (their
/// entry strides known at compile time too, so the fixed-size product is straight-line
/// code). The sum runs over the contracted index in order, from 0, as ATen's small-matrix
/// loop does.
template <typename T, int M, int K, int N, bool Dense>
inline void
small_product(const T * a, const T * b, T * c, const MatmulLayout & L)
{
  const std::int64_t m = M ? M : L.m, k = K ? K : L.k, n = N ? N : L.n;
  const std::int64_t ar = Dense ? k : L.a_row, ac = Dense ? 1 : L.a_col;
  const std::int64_t br = Dense ? n : L.b_row, bc = Dense ? 1 : L.b_col;
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j)
    {
      T s = 0;
      for (std::int64_t l = 0; l < k; ++l)
        s += a[i * ar + l * ac] * b[l * br + j * bc];
      c[i * n + j] = s;
    }
}

/// Whether both matrices of the layout are row-major and contiguous.
inline bool
dense_matrices(const MatmulLayout & L)
{
  return L.a_col == 1 && L.a_row == L.k && L.b_col == 1 && L.b_row == L.n;
}

/// The products p in [first, last) of the layout L (batch order), written to C.
template <typename T, int M, int K, int N, bool Dense = false>
void
small_mm(
    const T * A, const T * B, T * C, const MatmulLayout & L, std::int64_t first, std::int64_t last)
{
  if (first >= last)
    return;
  const int nd = L.nd;
  const std::int64_t mn = (M ? M : L.m) * (N ? N : L.n);
  // the position of `first` along every batch axis, and the operands' offsets there
  std::int64_t idx[kMaxBatchDims];
  std::int64_t oa = 0, ob = 0, rem = first;
  for (int d = nd - 1; d >= 0; --d)
  {
    idx[d] = rem % L.size[d];
    rem /= L.size[d];
    oa += idx[d] * L.sa[d];
    ob += idx[d] * L.sb[d];
  }
  const std::int64_t inner = L.size[nd - 1], sai = L.sa[nd - 1], sbi = L.sb[nd - 1];
  T * c = C + first * mn;
  for (std::int64_t p = first; p < last;)
  {
    // a run along the innermost axis
    const std::int64_t run = std::min(inner - idx[nd - 1], last - p);
    const T * a = A + oa;
    const T * b = B + ob;
    for (std::int64_t r = 0; r < run; ++r, a += sai, b += sbi, c += mn)
      small_product<T, M, K, N, Dense>(a, b, c, L);
    p += run;
    if (p >= last)
      break;
    // the run ended at the innermost axis' end: carry into the outer axes
    oa -= idx[nd - 1] * sai;
    ob -= idx[nd - 1] * sbi;
    idx[nd - 1] = 0;
    for (int d = nd - 2; d >= 0; --d)
    {
      ++idx[d];
      oa += L.sa[d];
      ob += L.sb[d];
      if (idx[d] < L.size[d])
        break;
      oa -= idx[d] * L.sa[d];
      ob -= idx[d] * L.sb[d];
      idx[d] = 0;
    }
  }
}

} // namespace neml2::ops
