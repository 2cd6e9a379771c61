// The operator neml2::dense_lu_solve(Tensor A, Tensor B) -> (Tensor X, Tensor info).
//
// A (*batch, n, n), B (*batch, n, k) with the same batch shape; X (*batch, n, k) solves
// A X = B at every batch point, info (*batch) int32 is 0 there, or c + 1 where column c of
// the factorization has a zero pivot (X is then non-finite at that point). The values
// torch.linalg.solve_ex gives, up to rounding.
//
// CPU, float32 / float64, n <= kMaxN: the interleaved kernel of neml2/ops/dense_lu.h,
// threaded over blocks of systems with at::parallel_for, its AVX2 + FMA build where the
// CPU has them; it reads A with its strides (no contiguous copy where the batch axes
// collapse into one). Anything else (another device, a larger n, another dtype): the
// composite kernel, torch.linalg.solve_ex. X is contiguous either way. The fake kernel
// that torch.export and Inductor trace with is Python's (neml2/aoti/_ops.py). No autograd
// formula: the Python side calls the operator only for tensors that need no gradient.
//
// neml2::dense_lu_solve_blocks(Tensor[] blocks, int[] rows, int[] cols, Tensor B)
//   -> (Tensor X, Tensor info)
// is the same solve with A given by its blocks: block b (cs, N, rs) holds rows
// [rows[b], rows[b] + rs) and columns [cols[b], cols[b] + cs) of every system, entry
// (rows[b] + i, cols[b] + j) of system p at blocks[b][j, p, i] (a residual's tangents on
// one unknown's seeds, as an eager Newton step has them); entries no block covers are 0,
// blocks must not overlap. The CPU kernel reads the blocks straight into its interleaved
// scratch (no assembled matrix); the composite kernel assembles A and calls
// torch.linalg.solve_ex. Eager only: it has no fake kernel.
//
// The operators are registered when this library loads (registration.h).
#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <vector>

#include "neml2/ops/dense_lu.h"
#include "registration.h"

namespace
{
// measured up to 64 unknowns (2.2x faster than solve_ex there); beyond, a block's scratch
// (n^2 entries x 8 lanes) outgrows L2 and LAPACK's blocked factorization is left to it
constexpr int64_t kMaxN = 64;

void
check_shapes(const at::Tensor & A, const at::Tensor & B)
{
  TORCH_CHECK(A.dim() >= 2 && A.size(-1) == A.size(-2),
              "neml2::dense_lu_solve: A must be (*batch, n, n), got ",
              A.sizes());
  TORCH_CHECK(B.dim() == A.dim() && B.size(-2) == A.size(-1) &&
                  B.sizes().slice(0, B.dim() - 2) == A.sizes().slice(0, A.dim() - 2),
              "neml2::dense_lu_solve: B must be (*batch, n, k) with A's batch shape ",
              A.sizes(),
              ", got ",
              B.sizes());
  TORCH_CHECK(A.scalar_type() == B.scalar_type(),
              "neml2::dense_lu_solve: A and B have different dtypes (",
              A.scalar_type(),
              ", ",
              B.scalar_type(),
              ")");
}

std::tuple<at::Tensor, at::Tensor>
dense_lu_solve_composite(const at::Tensor & A, const at::Tensor & B)
{
  check_shapes(A, B);
  auto [X, info] = at::linalg_solve_ex(A, B);
  return {X.contiguous(), info}; // the strides neml2.aoti's fake kernel promises
}

// The kernel compiled twice: for the baseline x86-64 the library targets, and for AVX2 +
// FMA, taken when the CPU has them (1.3x faster on 19 x 19 systems; its every lane loop
// is a vector loop). `flatten` inlines the template into the AVX2 function, so the
// inlined body is compiled for that target.
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
template <typename T>
__attribute__((target("avx2,fma"), flatten)) void
dense_lu_solve_avx2(const T * A,
                    neml2::ops::Strides sa,
                    const T * B,
                    T * X,
                    std::int32_t * info,
                    int64_t first,
                    int64_t last,
                    int64_t n,
                    int64_t k,
                    T * scratch)
{
  neml2::ops::dense_lu_solve<T>(A, sa, B, X, info, first, last, n, k, scratch);
}

bool
cpu_has_avx2()
{
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return has;
}
#endif

// Both operators' threading: N systems in ranges of whole blocks of W lanes over torch's
// intra-op threads (an OpenMP region: libneml2 is built with OpenMP), each range solved by
// `solve(first, last, scratch)` with a scratch buffer of its own.
template <typename T, typename Solve>
void
for_system_ranges(int64_t N, int64_t n, int64_t k, const Solve & solve)
{
  constexpr int64_t W = neml2::ops::lanes<T>();
  // a block of 19 x 19 systems is about 10 us of work: 16 blocks per task
  at::parallel_for(0,
                   (N + W - 1) / W,
                   16,
                   [&](int64_t b0, int64_t b1)
                   {
                     std::vector<T> scratch(neml2::ops::dense_lu_scratch<T>(n, k));
                     solve(b0 * W, std::min(b1 * W, N), scratch.data());
                   });
}

std::tuple<at::Tensor, at::Tensor>
dense_lu_solve_cpu(const at::Tensor & A, const at::Tensor & B)
{
  check_shapes(A, B);
  const int64_t n = A.size(-1), k = B.size(-1);
  const auto st = A.scalar_type();
  if (n > kMaxN || (st != at::kDouble && st != at::kFloat))
    return dense_lu_solve_composite(A, B);
  auto X = B.contiguous().clone(); // solved in place
  const auto batch = A.sizes().slice(0, A.dim() - 2);
  auto info = at::zeros(batch, A.options().dtype(at::kInt));
  const int64_t N = info.numel();
  if (N == 0 || n == 0)
    return {X, info};
  // one batch axis: a view wherever the batch axes collapse (the kernel reads any strides,
  // so the seed-major Jacobian of an eager Newton step is read in place), a copy otherwise
  const auto Ac = A.reshape({N, n, n});
  const neml2::ops::Strides sa{Ac.stride(0), Ac.stride(1), Ac.stride(2)};
  AT_DISPATCH_FLOATING_TYPES(st,
                             "neml2::dense_lu_solve",
                             [&]
                             {
                               using T = scalar_t;
                               const T * a = Ac.const_data_ptr<T>();
                               T * x = X.mutable_data_ptr<T>();
                               int32_t * inf = info.mutable_data_ptr<int32_t>();
                               auto * solve = &neml2::ops::dense_lu_solve<T>;
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
                               if (cpu_has_avx2())
                                 solve = &dense_lu_solve_avx2<T>;
#endif
                               for_system_ranges<T>(
                                   N,
                                   n,
                                   k,
                                   [&](int64_t first, int64_t last, T * scratch)
                                   {
                                     solve(a, sa, x, x, inf, first, last, n, k, scratch);
                                   });
                             });
  return {X, info};
}

// the block operator's checks; returns whether the blocks cover every entry of A
bool
check_blocks(at::TensorList blocks,
             at::IntArrayRef rows,
             at::IntArrayRef cols,
             const at::Tensor & B)
{
  TORCH_CHECK(!blocks.empty() && rows.size() == blocks.size() && cols.size() == blocks.size(),
              "neml2::dense_lu_solve_blocks: one row and one column offset per block, got ",
              blocks.size(),
              " blocks, ",
              rows.size(),
              " rows, ",
              cols.size(),
              " columns");
  TORCH_CHECK(B.dim() == 3, "neml2::dense_lu_solve_blocks: B must be (N, n, k), got ", B.sizes());
  const int64_t N = B.size(0), n = B.size(1);
  std::vector<char> seen(static_cast<std::size_t>(n * n), 0);
  int64_t count = 0;
  for (std::size_t b = 0; b < blocks.size(); ++b)
  {
    const auto & blk = blocks[b];
    TORCH_CHECK(blk.dim() == 3 && blk.size(1) == N,
                "neml2::dense_lu_solve_blocks: block ",
                b,
                " must be (cs, N, rs) with N = ",
                N,
                ", got ",
                blk.sizes());
    TORCH_CHECK(blk.scalar_type() == B.scalar_type() && blk.device() == B.device(),
                "neml2::dense_lu_solve_blocks: block ",
                b,
                " has another dtype or device than B");
    const int64_t r0 = rows[b], c0 = cols[b], rs = blk.size(2), cs = blk.size(0);
    TORCH_CHECK(r0 >= 0 && c0 >= 0 && r0 + rs <= n && c0 + cs <= n,
                "neml2::dense_lu_solve_blocks: block ",
                b,
                " (rows ",
                r0,
                "+",
                rs,
                ", columns ",
                c0,
                "+",
                cs,
                ") lies outside the ",
                n,
                " x ",
                n,
                " matrix");
    for (int64_t i = r0; i < r0 + rs; ++i)
      for (int64_t j = c0; j < c0 + cs; ++j)
      {
        TORCH_CHECK(!seen[i * n + j],
                    "neml2::dense_lu_solve_blocks: block ",
                    b,
                    " overlaps another at entry (",
                    i,
                    ", ",
                    j,
                    ")");
        seen[i * n + j] = 1;
        ++count;
      }
  }
  return count == n * n;
}

std::tuple<at::Tensor, at::Tensor>
dense_lu_solve_blocks_composite(at::TensorList blocks,
                                at::IntArrayRef rows,
                                at::IntArrayRef cols,
                                const at::Tensor & B)
{
  check_blocks(blocks, rows, cols, B);
  const int64_t n = B.size(1);
  auto A = at::zeros({B.size(0), n, n}, B.options());
  for (std::size_t b = 0; b < blocks.size(); ++b)
    A.narrow(1, rows[b], blocks[b].size(2))
        .narrow(2, cols[b], blocks[b].size(0))
        .copy_(blocks[b].permute({1, 2, 0}));
  return dense_lu_solve_composite(A, B);
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
template <typename T>
__attribute__((target("avx2,fma"), flatten)) void
dense_lu_solve_blocks_avx2(const neml2::ops::Block<T> * blocks,
                           int64_t nblocks,
                           bool covered,
                           const T * B,
                           T * X,
                           std::int32_t * info,
                           int64_t first,
                           int64_t last,
                           int64_t n,
                           int64_t k,
                           T * scratch)
{
  neml2::ops::dense_lu_solve_blocks<T>(
      blocks, nblocks, covered, B, X, info, first, last, n, k, scratch);
}
#endif

std::tuple<at::Tensor, at::Tensor>
dense_lu_solve_blocks_cpu(at::TensorList blocks,
                          at::IntArrayRef rows,
                          at::IntArrayRef cols,
                          const at::Tensor & B)
{
  const bool covered = check_blocks(blocks, rows, cols, B);
  const int64_t N = B.size(0), n = B.size(1), k = B.size(2);
  const auto st = B.scalar_type();
  if (n > kMaxN || (st != at::kDouble && st != at::kFloat))
    return dense_lu_solve_blocks_composite(blocks, rows, cols, B);
  auto X = B.contiguous().clone(); // solved in place
  auto info = at::zeros({N}, B.options().dtype(at::kInt));
  if (N == 0 || n == 0)
    return {X, info};
  AT_DISPATCH_FLOATING_TYPES(
      st,
      "neml2::dense_lu_solve_blocks",
      [&]
      {
        using T = scalar_t;
        std::vector<neml2::ops::Block<T>> bl;
        bl.reserve(blocks.size());
        for (std::size_t b = 0; b < blocks.size(); ++b)
        {
          const auto & t = blocks[b];
          bl.push_back({t.const_data_ptr<T>(),
                        rows[b],
                        t.size(2),
                        cols[b],
                        t.size(0),
                        t.stride(0),
                        t.stride(1),
                        t.stride(2)});
        }
        T * x = X.mutable_data_ptr<T>();
        int32_t * inf = info.mutable_data_ptr<int32_t>();
        auto * solve = &neml2::ops::dense_lu_solve_blocks<T>;
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
        if (cpu_has_avx2())
          solve = &dense_lu_solve_blocks_avx2<T>;
#endif
        const auto nb = static_cast<int64_t>(bl.size());
        for_system_ranges<T>(N,
                             n,
                             k,
                             [&](int64_t first, int64_t last, T * scratch)
                             {
                               solve(bl.data(), nb, covered, x, x, inf, first, last, n, k, scratch);
                             });
      });
  return {X, info};
}

const neml2::ops::OperatorRegistration
    registration("dense_lu_solve",
                 "dense_lu_solve(Tensor A, Tensor B) -> (Tensor X, Tensor info)",
                 &dense_lu_solve_cpu,
                 &dense_lu_solve_composite);
const neml2::ops::OperatorRegistration
    blocks_registration("dense_lu_solve_blocks",
                        "dense_lu_solve_blocks(Tensor[] blocks, int[] rows, int[] cols, Tensor B) "
                        "-> (Tensor X, Tensor info)",
                        &dense_lu_solve_blocks_cpu,
                        &dense_lu_solve_blocks_composite);
} // namespace
