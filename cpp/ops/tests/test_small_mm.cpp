// Tests of the torch-free small-matrix product loop (neml2/ops/small_mm.h): every size
// up to 4 x 4 x 4 (the fixed 3 x 3 x 3 and 3 x 3 x 1 builds, strided and dense, and the
// runtime-size one) against a plain triple loop, bit for bit; batches of one and three axes with
// broadcast (stride 0) and transposed operands; ranges that start and end inside the innermost and
// the middle axis (the carry into the outer axes), as at::parallel_for splits a batch.
#include "neml2/ops/small_mm.h"

#include "check.h"

#include <cstdio>
#include <random>
#include <vector>

using neml2::ops::MatmulLayout;

template <typename T, int M, int K, int N, bool Dense = false>
static void
run_sizes(std::int64_t m, std::int64_t k, std::int64_t n, std::mt19937_64 & g)
{
  // batch (P, Q, R): A has the full batch, each matrix stored transposed when `ta`; B is
  // broadcast along Q (stride 0) when `bcast`, else has the full batch too
  const std::int64_t P = 3, Q = 4, R = 5, NP = P * Q * R;
  std::normal_distribution<double> d;
  for (bool ta : {false, true})
    for (bool bcast : {false, true})
    {
      if (Dense && ta)
        continue; // the dense build reads row-major matrices only
      std::vector<T> A(NP * m * k), B(NP * k * n), C(NP * m * n, T(-1));
      for (auto & x : A)
        x = T(d(g));
      for (auto & x : B)
        x = T(d(g));
      MatmulLayout L;
      L.nd = 3;
      const std::int64_t sizes[3] = {P, Q, R};
      const std::int64_t sa[3] = {Q * R * m * k, R * m * k, m * k};
      const std::int64_t sb[3] = {bcast ? R * k * n : Q * R * k * n, bcast ? 0 : R * k * n, k * n};
      for (int a = 0; a < 3; ++a)
      {
        L.size[a] = sizes[a];
        L.sa[a] = sa[a];
        L.sb[a] = sb[a];
      }
      L.a_row = ta ? 1 : k; // transposed: entry (i, j) at j m + i
      L.a_col = ta ? m : 1;
      L.b_row = n;
      L.b_col = 1;
      L.m = m;
      L.k = k;
      L.n = n;
      // four ranges, starting and ending inside the innermost and the middle axis, so
      // that the carry runs into the middle and the outer axis
      const std::int64_t cuts[5] = {0, 3, 27, NP - 4, NP};
      for (int c = 0; c < 4; ++c)
        neml2::ops::small_mm<T, M, K, N, Dense>(
            A.data(), B.data(), C.data(), L, cuts[c], cuts[c + 1]);
      for (std::int64_t p = 0; p < NP; ++p)
      {
        const std::int64_t ip = p / (Q * R), iq = (p / R) % Q, ir = p % R;
        const T * a = A.data() + ip * sa[0] + iq * sa[1] + ir * sa[2];
        const T * b = B.data() + ip * sb[0] + iq * sb[1] + ir * sb[2];
        const T * c = C.data() + p * m * n;
        for (std::int64_t i = 0; i < m; ++i)
          for (std::int64_t j = 0; j < n; ++j)
          {
            T s = 0;
            for (std::int64_t l = 0; l < k; ++l)
              s += a[i * L.a_row + l * L.a_col] * b[l * n + j];
            CHECK(c[i * n + j] == s,
                  "m=%lld k=%lld n=%lld ta=%d bcast=%d p=%lld (%lld,%lld): %g != %g",
                  (long long)m,
                  (long long)k,
                  (long long)n,
                  int(ta),
                  int(bcast),
                  (long long)p,
                  (long long)i,
                  (long long)j,
                  double(c[i * n + j]),
                  double(s));
          }
      }
    }
}

template <typename T>
static void
run_all(std::mt19937_64 & g)
{
  for (std::int64_t m = 1; m <= 4; ++m)
    for (std::int64_t k = 1; k <= 4; ++k)
      for (std::int64_t n = 1; n <= 4; ++n)
        run_sizes<T, 0, 0, 0>(m, k, n, g);
  run_sizes<T, 3, 3, 3>(3, 3, 3, g);
  run_sizes<T, 3, 3, 1>(3, 3, 1, g);
  run_sizes<T, 3, 3, 3, true>(3, 3, 3, g);
  run_sizes<T, 3, 3, 1, true>(3, 3, 1, g);

  // one axis, one product per call: the carry never runs
  MatmulLayout L;
  L.nd = 1;
  L.size[0] = 4;
  L.sa[0] = 9;
  L.sb[0] = 0; // one B for all
  L.a_row = 3;
  L.a_col = 1;
  L.b_row = 3;
  L.b_col = 1;
  L.m = L.k = L.n = 3;
  std::vector<T> A(36), B(9), C(36);
  for (int i = 0; i < 36; ++i)
    A[i] = T(i);
  for (int i = 0; i < 9; ++i)
    B[i] = T(i == 0 || i == 4 || i == 8); // identity
  for (std::int64_t p = 0; p < 4; ++p)
    neml2::ops::small_mm<T, 3, 3, 3>(A.data(), B.data(), C.data(), L, p, p + 1);
  for (int i = 0; i < 36; ++i)
    CHECK(C[i] == A[i], "identity product, entry %d: %g != %g", i, double(C[i]), double(A[i]));
}

int
main()
{
  std::mt19937_64 g(7);
  run_all<double>(g);
  run_all<float>(g);
  if (failures)
    std::printf("%d failure(s)\n", failures);
  else
    std::printf("all small_mm tests passed\n");
  return failures ? 1 : 0;
}
