// cpp-aoti per-call timing: `bench_cpp ARTIFACT INPUTS REPEAT` loads the artifact,
// reads the inputs INPUTS.json + INPUTS.bin (raw little-endian float64, written by
// bench_aoti.py) and prints one JSON line with the median forward and jacobian
// times in microseconds over REPEAT calls (after one warm-up call each).
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

template <typename F>
double
median_us(F && f, int repeat)
{
  f();
  std::vector<double> t;
  for (int i = 0; i < repeat; ++i)
  {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    t.push_back(
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}
} // namespace

int
main(int argc, char ** argv)
{
  if (argc != 4)
  {
    std::cerr << "usage: bench_cpp ARTIFACT INPUTS REPEAT\n";
    return 2;
  }
  Model m(argv[1], "cpu", "float64");
  const auto x = load(argv[2]);
  const int repeat = std::max(1, std::atoi(argv[3]));
  const double fwd = median_us(
      [&]
      {
        m.forward(x);
      },
      repeat);
  double jac = -1;
  if (!m.derivatives().empty())
    jac = median_us(
        [&]
        {
          m.jacobian(x);
        },
        repeat);
  std::cout << "{\"forward_us\": " << fwd << ", \"jacobian_us\": " << jac << "}\n";
  return 0;
}
