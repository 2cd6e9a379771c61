// cpp-aoti per-call timing: `bench_cpp ARTIFACT INPUTS REPEAT [WARMUP_S]` loads the
// artifact, reads the inputs INPUTS.json + INPUTS.bin (raw little-endian float64, written
// by bench_aoti.py) and prints one JSON line with the median forward and jacobian times
// in microseconds over REPEAT calls. Before the timed calls it warms up: one call, then
// more until WARMUP_S seconds (default 0) have passed (at most 200 calls); the first
// call's time and the number of warm-up calls are printed too. A fresh process's first
// calls on a large batch are several times slower than its later ones (elasticity at 1e6
// points: ~4-8 calls that each page-fault 46 MB of fresh output memory, then none), which
// a single warm-up call does not cover.
#include "neml2/aoti/json.h"
#include "neml2/aoti/model.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

using namespace neml2::aoti;

namespace
{
std::string
slurp(const std::string & p, std::ios::openmode mode = std::ios::in)
{
  std::ifstream in(p, mode);
  if (!in)
    throw std::runtime_error("cannot read " + p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TensorMap
load(const std::string & stem)
{
  const Json j = Json::parse(slurp(stem + ".json"), stem + ".json");
  const std::string bytes = slurp(stem + ".bin", std::ios::binary);
  const auto all = at::empty({static_cast<int64_t>(bytes.size() / sizeof(double))}, at::kDouble);
  std::memcpy(all.data_ptr<double>(), bytes.data(), bytes.size());
  TensorMap out;
  for (const auto & [name, spec] : j.at("tensors", stem).as_object(stem))
  {
    Shape shape;
    int64_t numel = 1;
    for (const auto & d : spec.at("shape", name).as_array(name))
      numel *= shape.emplace_back(d.as_int(name));
    const auto off = spec.at("offset", name).as_int(name);
    if (name.rfind("input/", 0) == 0)
      out[name.substr(6)] = all.narrow(0, off, numel).reshape(shape).clone();
  }
  return out;
}

struct Timing
{
  double median_us;
  double first_us;
  int warmup_calls;
};

template <typename F>
Timing
median_us(F && f, int repeat, double warmup_s)
{
  using clock = std::chrono::steady_clock;
  const auto w0 = clock::now();
  f();
  const double first = std::chrono::duration<double, std::micro>(clock::now() - w0).count();
  int warm = 1;
  while (warm < 200 && std::chrono::duration<double>(clock::now() - w0).count() < warmup_s)
  {
    f();
    ++warm;
  }
  std::vector<double> t;
  for (int i = 0; i < repeat; ++i)
  {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    t.push_back(
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return {t[t.size() / 2], first, warm};
}
} // namespace

int
main(int argc, char ** argv)
{
  if (argc != 4 && argc != 5)
  {
    std::cerr << "usage: bench_cpp ARTIFACT INPUTS REPEAT [WARMUP_S]\n";
    return 2;
  }
  Model m(argv[1], "cpu", "float64");
  const auto x = load(argv[2]);
  const int repeat = std::max(1, std::atoi(argv[3]));
  const double warmup_s = argc == 5 ? std::atof(argv[4]) : 0.0;
  const Timing fwd = median_us(
      [&]
      {
        m.forward(x);
      },
      repeat,
      warmup_s);
  double jac = -1;
  if (!m.derivatives().empty())
    jac = median_us(
        [&]
        {
          m.jacobian(x);
        },
        repeat,
        warmup_s)
              .median_us;
  std::cout << "{\"forward_us\": " << fwd.median_us << ", \"forward_first_us\": " << fwd.first_us
            << ", \"forward_warmup_calls\": " << fwd.warmup_calls << ", \"jacobian_us\": " << jac
            << "}\n";
  return 0;
}
