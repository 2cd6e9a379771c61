// Tests of the torch-free batched LU kernel (neml2/ops/dense_lu.h): residuals of random
// systems of every size 1..40 with 1-3 right-hand sides and batch sizes that leave a
// partial block, the pivoting (a zero leading entry), singular lanes (info and
// non-finite results in that lane only), X aliasing B, float and double, matrices read
// row-major or in the seed-major layout of an eager Newton step's Jacobian, and the same
// matrices given by their blocks (dense_lu_solve_blocks: bitwise the dense kernel's
// results, with a block left out and a block shared by every system).
#include "neml2/ops/dense_lu.h"

#include "check.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

template <typename T>
static void
run(std::int64_t N,
    std::int64_t n,
    std::int64_t k,
    std::mt19937_64 & g,
    bool alias,
    bool seed_major = false)
{
  // row-major: (N, n, n); seed-major: (n, N, n), entry (p, i, j) at (j N + p) n + i
  const neml2::ops::Strides sa =
      seed_major ? neml2::ops::Strides{n, 1, N * n} : neml2::ops::Strides{n * n, n, 1};
  std::normal_distribution<double> d;
  std::vector<T> A(N * n * n), B(N * n * k), X(N * n * k);
  for (std::int64_t p = 0; p < N; ++p)
    for (std::int64_t i = 0; i < n; ++i)
    {
      for (std::int64_t j = 0; j < n; ++j)
        A[p * sa.sp + i * sa.si + j * sa.sj] =
            T(d(g) + (i == j ? 2.0 * std::sqrt(double(n)) : 0.0));
      for (std::int64_t c = 0; c < k; ++c)
        B[(p * n + i) * k + c] = T(d(g));
    }
  if (n > 1) // the first system needs a row swap at column 0
    A[0] = T(0);
  std::vector<std::int32_t> info(N, -1);
  std::vector<T> scratch(neml2::ops::dense_lu_scratch<T>(n, k));
  std::vector<T> Bcopy = B;
  T * out = alias ? B.data() : X.data();
  neml2::ops::dense_lu_solve<T>(
      A.data(), sa, B.data(), out, info.data(), 0, N, n, k, scratch.data());
  const double tol = (sizeof(T) == 4 ? 1e-5 : 1e-13) * double(n); // rounding grows with n
  double worst = 0;
  for (std::int64_t p = 0; p < N; ++p)
  {
    CHECK(info[p] == 0,
          "N=%lld n=%lld k=%lld: info[%lld] = %d",
          (long long)N,
          (long long)n,
          (long long)k,
          (long long)p,
          info[p]);
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t c = 0; c < k; ++c)
      {
        double s = -double(Bcopy[(p * n + i) * k + c]);
        for (std::int64_t j = 0; j < n; ++j)
          s += double(A[p * sa.sp + i * sa.si + j * sa.sj]) * double(out[(p * n + j) * k + c]);
        worst = std::max(worst, std::isfinite(s) ? std::abs(s) : INFINITY);
      }
  }
  CHECK(worst <= tol,
        "N=%lld n=%lld k=%lld alias=%d seed_major=%d: residual %.3e",
        (long long)N,
        (long long)n,
        (long long)k,
        int(alias),
        int(seed_major),
        worst);
}

template <typename T>
static void
singular_lane()
{
  // 11 systems of size 3 (a full block and a partial one for doubles); system 4 has a zero
  // second column after elimination, system 9 is all zero
  const std::int64_t N = 11, n = 3;
  std::vector<T> A(N * n * n), B(N * n, T(1)), X(N * n);
  for (std::int64_t p = 0; p < N; ++p)
    for (std::int64_t i = 0; i < n; ++i)
      A[(p * n + i) * n + i] = T(1 + p);
  T * A4 = A.data() + 4 * n * n;
  const T rank2[9] = {1, 2, 0, 2, 4, 0, 0, 0, 5}; // first two rows parallel
  std::copy(rank2, rank2 + 9, A4);
  std::fill(A.begin() + 9 * n * n, A.begin() + 10 * n * n, T(0));
  std::vector<std::int32_t> info(N, -1);
  std::vector<T> scratch(neml2::ops::dense_lu_scratch<T>(n, 1));
  neml2::ops::dense_lu_solve<T>(
      A.data(), {n * n, n, 1}, B.data(), X.data(), info.data(), 0, N, n, 1, scratch.data());
  for (std::int64_t p = 0; p < N; ++p)
  {
    const int want = p == 4 ? 2 : p == 9 ? 1 : 0;
    CHECK(info[p] == want, "singular: info[%lld] = %d, want %d", (long long)p, info[p], want);
    bool finite = true;
    for (std::int64_t i = 0; i < n; ++i)
      finite = finite && std::isfinite(double(X[p * n + i]));
    CHECK(finite == (want == 0), "singular: system %lld finite=%d", (long long)p, int(finite));
    if (want == 0)
      for (std::int64_t i = 0; i < n; ++i)
        CHECK(std::abs(double(X[p * n + i]) - 1.0 / double(1 + p)) < 1e-6,
              "singular: system %lld x[%lld] = %g",
              (long long)p,
              (long long)i,
              double(X[p * n + i]));
  }
}

// A split into row/column groups of sizes `cuts`, each block (cs, N, rs) as a tangent: the
// block solve gives the dense kernel's bits. Block (1, 0) is left out (zeros in A) and
// block (0, 1) is the same for every system (a stride of 0 along the systems).
template <typename T>
static void
blocks_match_dense(std::int64_t N, const std::vector<std::int64_t> & cuts, std::mt19937_64 & g)
{
  std::int64_t n = 0;
  std::vector<std::int64_t> off;
  for (auto c : cuts)
  {
    off.push_back(n);
    n += c;
  }
  const std::int64_t k = 2;
  std::normal_distribution<double> d;
  std::vector<T> A(N * n * n), B(N * n * k), X1(N * n * k), X2(N * n * k);
  for (auto & b : B)
    b = T(d(g));
  std::vector<std::vector<T>> data;
  std::vector<neml2::ops::Block<T>> blocks;
  const std::int64_t G = static_cast<std::int64_t>(cuts.size());
  for (std::int64_t bi = 0; bi < G; ++bi)
    for (std::int64_t bj = 0; bj < G; ++bj)
    {
      const std::int64_t r0 = off[bi], rs = cuts[bi], c0 = off[bj], cs = cuts[bj];
      if (G > 1 && bi == 1 && bj == 0)
        continue; // left out: zeros
      const bool shared = G > 1 && bi == 0 && bj == 1;
      std::vector<T> blk(cs * (shared ? 1 : N) * rs);
      for (auto & v : blk)
        v = T(d(g));
      for (std::int64_t p = 0; p < N; ++p)
        for (std::int64_t i = 0; i < rs; ++i)
          for (std::int64_t j = 0; j < cs; ++j)
          {
            T & a = A[p * n * n + (r0 + i) * n + c0 + j];
            a = blk[(j * (shared ? 1 : N) + (shared ? 0 : p)) * rs + i];
            if (r0 + i == c0 + j)
            {
              a += T(2.0 * std::sqrt(double(n)));
              if (!shared)
                blk[(j * N + p) * rs + i] = a;
            }
          }
      data.push_back(std::move(blk));
      blocks.push_back({nullptr, r0, rs, c0, cs, (shared ? 1 : N) * rs, shared ? 0 : rs, 1});
    }
  for (std::size_t b = 0; b < blocks.size(); ++b)
    blocks[b].data = data[b].data();
  std::vector<std::int32_t> i1(N, -1), i2(N, -1);
  std::vector<T> scratch(neml2::ops::dense_lu_scratch<T>(n, k));
  neml2::ops::dense_lu_solve<T>(A.data(),
                                neml2::ops::Strides{n * n, n, 1},
                                B.data(),
                                X1.data(),
                                i1.data(),
                                0,
                                N,
                                n,
                                k,
                                scratch.data());
  neml2::ops::dense_lu_solve_blocks<T>(blocks.data(),
                                       static_cast<std::int64_t>(blocks.size()),
                                       G == 1,
                                       B.data(),
                                       X2.data(),
                                       i2.data(),
                                       0,
                                       N,
                                       n,
                                       k,
                                       scratch.data());
  bool same = i1 == i2;
  for (std::size_t e = 0; e < X1.size(); ++e)
    same = same && (X1[e] == X2[e] || (std::isnan(X1[e]) && std::isnan(X2[e])));
  CHECK(same,
        "blocks: N=%lld n=%lld groups=%lld: not the dense kernel's results",
        (long long)N,
        (long long)n,
        (long long)G);
}

int
main()
{
  std::mt19937_64 g(20261128);
  for (std::int64_t n = 1; n <= 40; ++n)
    for (std::int64_t k = 1; k <= 3; ++k)
    {
      run<double>(37, n, k, g, false);
      run<float>(37, n, k, g, k == 2);
    }
  run<double>(8, 19, 1, g, true);  // exactly one block
  run<double>(1, 19, 1, g, false); // one system, seven padded lanes
  run<float>(16, 7, 1, g, false);
  for (std::int64_t n : {1, 2, 7, 19, 33})
  {
    run<double>(37, n, 1, g, false, true); // a partial block read seed-major
    run<float>(37, n, 2, g, true, true);
  }
  blocks_match_dense<double>(37, {6, 1, 6, 6, 6, 6}, g); // Chaboche 4: 31 unknowns
  blocks_match_dense<double>(13, {6, 1}, g);
  blocks_match_dense<float>(37, {3, 4, 2}, g);
  blocks_match_dense<double>(5, {19}, g); // one block covering A
  singular_lane<double>();
  singular_lane<float>();
  if (failures)
  {
    std::printf("%d failure(s)\n", failures);
    return 1;
  }
  std::printf("test_dense_lu: all passed\n");
  return 0;
}
