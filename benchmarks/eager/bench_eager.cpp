// Per-call overhead of cpp-eager (neml2::eager::Model, embedded CPython) against
// cpp-aoti (neml2::aoti::Model, an AOT Inductor artifact) on linear elasticity.
//
//   bench_eager INPUT.i ARTIFACT_DIR [REPEATS]
//
// For batch 1 and 1e4, times forward and jacobian calls of both routes (after a
// warm-up) and prints a Markdown table of the median and minimum wall time per call.
#include "neml2/aoti/model.h"
#include "neml2/eager/model.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace
{
struct Stats
{
  double median_us, min_us;
};

Stats
time_calls(const std::function<void()> & f, int repeats)
{
  for (int i = 0; i < std::max(5, repeats / 10); ++i)
    f();
  std::vector<double> t;
  for (int i = 0; i < repeats; ++i)
  {
    const auto a = std::chrono::steady_clock::now();
    f();
    const auto b = std::chrono::steady_clock::now();
    t.push_back(std::chrono::duration<double, std::micro>(b - a).count());
  }
  std::sort(t.begin(), t.end());
  return {t[t.size() / 2], t.front()};
}
} // namespace

int
main(int argc, char ** argv)
{
  if (argc < 3)
  {
    std::fprintf(stderr, "usage: bench_eager INPUT.i ARTIFACT_DIR [REPEATS]\n");
    return 2;
  }
  const int repeats = argc > 3 ? std::stoi(argv[3]) : 200;
  at::set_num_threads(1);
  neml2::eager::Model eager(argv[1], "model");
  neml2::aoti::Model aoti(argv[2]);
  std::printf("interpreter: %s\n\n", neml2::eager::python_interpreter().c_str());
  std::printf("| batch | call | cpp-aoti median (us) | cpp-eager median (us) | "
              "eager - aoti (us) | cpp-aoti min (us) | cpp-eager min (us) |\n");
  std::printf("|---:|---|---:|---:|---:|---:|---:|\n");
  for (int64_t batch : {int64_t(1), int64_t(10000)})
  {
    const auto eps = at::rand({batch, 6}, at::kDouble) * 1e-3;
    const neml2::aoti::TensorMap x{{"strain", eps}};
    // same numbers from both routes before timing them
    const auto ya = aoti.forward(x).at("stress");
    const auto ye = eager.forward(x).at("stress");
    if (!at::allclose(ya, ye, 1e-12, 1e-14))
    {
      std::fprintf(stderr, "cpp-aoti and cpp-eager disagree at batch %ld\n", (long)batch);
      return 1;
    }
    const int n = batch == 1 ? repeats * 5 : repeats;
    for (const std::string call : {"forward", "jacobian"})
    {
      Stats a, e;
      if (call == "forward")
      {
        a = time_calls(
            [&]()
            {
              aoti.forward(x);
            },
            n);
        e = time_calls(
            [&]()
            {
              eager.forward(x);
            },
            n);
      }
      else
      {
        a = time_calls(
            [&]()
            {
              aoti.jacobian(x);
            },
            n);
        e = time_calls(
            [&]()
            {
              eager.jacobian(x);
            },
            n);
      }
      std::printf("| %ld | %s | %.1f | %.1f | %.1f | %.1f | %.1f |\n",
                  (long)batch,
                  call.c_str(),
                  a.median_us,
                  e.median_us,
                  e.median_us - a.median_us,
                  a.min_us,
                  e.min_us);
    }
  }
  return 0;
}
