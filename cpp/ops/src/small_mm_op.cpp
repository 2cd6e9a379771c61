// The operator neml2::small_mm(Tensor A, Tensor B) -> Tensor C.
//
// A (*a, m, k), B (*b, k, n), the batch shapes broadcast against each other; C
// (*broadcast, m, n), contiguous: the values of torch.matmul(A, B), summed in the same
// order as ATen's small-matrix loop.
//
// CPU, float32 / float64, m, k, n <= kMaxSize: the loop of neml2/ops/small_mm.h over the
// batch, reading both operands in place (a broadcast axis has stride 0), threaded with
// at::parallel_for. Anything else (another device or dtype, larger matrices, more than
// kMaxBatchDims batch axes after coalescing): torch.matmul. Eager only: no fake kernel
// (neml2's traced graphs write these products as fusable broadcast sums) and no autograd
// formula (the Python side calls the operator only for tensors that need no gradient).
//
// The operator is registered when this library loads (registration.h).
#include <ATen/ATen.h>
#include <ATen/ExpandUtils.h>
#include <ATen/Parallel.h>

#include <vector>

#include "neml2/ops/small_mm.h"
#include "registration.h"

namespace
{
// the typed tensors' matrices are 3 x 3 and 6 x 6; beyond 8 ATen's blocked kernels pay off
constexpr int64_t kMaxSize = 8;

void
check_shapes(const at::Tensor & A, const at::Tensor & B)
{
  TORCH_CHECK(A.dim() >= 2 && B.dim() >= 2,
              "neml2::small_mm: A and B must be (*batch, m, k) and (*batch, k, n), got ",
              A.sizes(),
              " and ",
              B.sizes());
  TORCH_CHECK(A.size(-1) == B.size(-2),
              "neml2::small_mm: A's columns (",
              A.size(-1),
              ") differ from B's rows (",
              B.size(-2),
              ")");
  TORCH_CHECK(A.scalar_type() == B.scalar_type(),
              "neml2::small_mm: A and B have different dtypes (",
              A.scalar_type(),
              ", ",
              B.scalar_type(),
              ")");
}

at::Tensor
small_mm_composite(const at::Tensor & A, const at::Tensor & B)
{
  check_shapes(A, B);
  return at::matmul(A, B).contiguous();
}

// The layout of C = A B over the broadcast batch shape: size-1 axes dropped, neighbouring
// axes merged where both operands step through them as through one axis. False where more
// than kMaxBatchDims axes remain.
bool
layout_of(const at::Tensor & Ae, const at::Tensor & Be, neml2::ops::MatmulLayout & L)
{
  const int64_t nb = Ae.dim() - 2;
  int nd = 0;
  for (int64_t d = 0; d < nb; ++d)
  {
    const int64_t s = Ae.size(d);
    if (s == 1)
      continue;
    if (nd > 0 && L.sa[nd - 1] == Ae.stride(d) * s && L.sb[nd - 1] == Be.stride(d) * s)
    {
      L.size[nd - 1] *= s;
      L.sa[nd - 1] = Ae.stride(d);
      L.sb[nd - 1] = Be.stride(d);
      continue;
    }
    if (nd == neml2::ops::kMaxBatchDims)
      return false;
    L.size[nd] = s;
    L.sa[nd] = Ae.stride(d);
    L.sb[nd] = Be.stride(d);
    ++nd;
  }
  if (nd == 0) // one product
  {
    L.size[0] = 1;
    nd = 1;
  }
  L.nd = nd;
  L.a_row = Ae.stride(-2);
  L.a_col = Ae.stride(-1);
  L.b_row = Be.stride(-2);
  L.b_col = Be.stride(-1);
  L.m = Ae.size(-2);
  L.k = Ae.size(-1);
  L.n = Be.size(-1);
  return true;
}

template <typename T>
void
run(const T * a, const T * b, T * c, const neml2::ops::MatmulLayout & L, int64_t N)
{
  auto * kernel = &neml2::ops::small_mm<T, 0, 0, 0>;
  const bool dense = neml2::ops::dense_matrices(L);
  if (L.m == 3 && L.k == 3 && L.n == 3)
    kernel = dense ? &neml2::ops::small_mm<T, 3, 3, 3, true> : &neml2::ops::small_mm<T, 3, 3, 3>;
  else if (L.m == 3 && L.k == 3 && L.n == 1)
    kernel = dense ? &neml2::ops::small_mm<T, 3, 3, 1, true> : &neml2::ops::small_mm<T, 3, 3, 1>;
  // a 3 x 3 product is a few ns: at least 4096 of them per task
  at::parallel_for(0,
                   N,
                   4096,
                   [&](int64_t first, int64_t last)
                   {
                     kernel(a, b, c, L, first, last);
                   });
}

at::Tensor
small_mm_cpu(const at::Tensor & A, const at::Tensor & B)
{
  check_shapes(A, B);
  const int64_t m = A.size(-2), k = A.size(-1), n = B.size(-1);
  const auto st = A.scalar_type();
  if (m > kMaxSize || k > kMaxSize || n > kMaxSize || (st != at::kDouble && st != at::kFloat))
    return small_mm_composite(A, B);
  const auto batch =
      at::infer_size(A.sizes().slice(0, A.dim() - 2), B.sizes().slice(0, B.dim() - 2));
  std::vector<int64_t> shape_a(batch.begin(), batch.end());
  std::vector<int64_t> shape_b(shape_a), shape_c(shape_a);
  shape_a.insert(shape_a.end(), {m, k});
  shape_b.insert(shape_b.end(), {k, n});
  shape_c.insert(shape_c.end(), {m, n});
  // views at the broadcast batch shape (stride 0 along broadcast axes): nothing is copied
  const auto Ae = A.expand(shape_a), Be = B.expand(shape_b);
  neml2::ops::MatmulLayout L;
  if (!layout_of(Ae, Be, L))
    return small_mm_composite(A, B);
  auto C = at::empty(shape_c, A.options());
  const int64_t N = C.numel() / std::max<int64_t>(m * n, 1);
  if (C.numel() == 0)
    return C;
  if (k == 0)
    return C.zero_();
  AT_DISPATCH_FLOATING_TYPES(st,
                             "neml2::small_mm",
                             [&]
                             {
                               run<scalar_t>(Ae.const_data_ptr<scalar_t>(),
                                             Be.const_data_ptr<scalar_t>(),
                                             C.mutable_data_ptr<scalar_t>(),
                                             L,
                                             N);
                             });
  return C;
}

const neml2::ops::OperatorRegistration registration("small_mm",
                                                    "small_mm(Tensor A, Tensor B) -> Tensor C",
                                                    &small_mm_cpu,
                                                    &small_mm_composite);
} // namespace
