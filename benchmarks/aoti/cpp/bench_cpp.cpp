// cpp-aoti per-call timing:
//
//   bench_cpp ARTIFACT INPUTS REPEAT [WARMUP_S] [--device DEVICE] [--outputs STEM]
//
// loads the artifact's DEVICE target (cpu by default; cuda, cuda:N), reads the inputs
// INPUTS.json + INPUTS.bin (raw little-endian float64, written by bench_aoti.py and the
// suite's _cpp_io.py), copies them to DEVICE and prints one JSON line with the median
// forward and jacobian times in microseconds over REPEAT calls. Before the timed calls it
// warms up: one call, then more until WARMUP_S seconds (default 0) have passed (at most
// 200 calls); the first call's time and the number of warm-up calls are printed too. A
// fresh process's first calls on a large batch are several times slower than its later
// ones (elasticity at 1e6 points: ~4-8 calls that each page-fault 46 MB of fresh output
// memory, then none), which a single warm-up call does not cover. On a GPU every call
// synchronizes the device before its clock is read (kernels are queued asynchronously).
//
// With --outputs STEM it then makes one more forward call and writes its outputs, as
// float64 on the CPU, to STEM.json ({"tensors": {"output/<name>": {"shape": [...],
// "offset": k}}}, offsets in float64 elements) + STEM.bin (raw little-endian float64):
// the inputs' format, read back by the suite for its agreement check.
#include "neml2/aoti/json.h"
#include "neml2/aoti/model.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>
#include <stdexcept>

using namespace neml2::aoti;

namespace
{
const char * const USAGE =
    "usage: bench_cpp ARTIFACT INPUTS REPEAT [WARMUP_S] [--device DEVICE] [--outputs STEM]\n";

/// A bad command line: main prints the message and the usage, and exits with 2.
struct UsageError : std::runtime_error
{
  using std::runtime_error::runtime_error;
};

struct Args
{
  std::string artifact, inputs, device = "cpu", outputs;
  int repeat = 1;
  double warmup_s = 0;
};

Args
parse(int argc, char ** argv)
{
  Args a;
  std::vector<std::string> pos;
  for (int i = 1; i < argc; ++i)
  {
    const std::string s = argv[i];
    if (s == "--device" || s == "--outputs")
    {
      if (i + 1 == argc)
        throw UsageError(s + " needs a value");
      (s == "--device" ? a.device : a.outputs) = argv[++i];
    }
    else if (s.rfind("--", 0) == 0)
      throw UsageError("unknown option " + s);
    else
      pos.push_back(s);
  }
  if (pos.size() != 3 && pos.size() != 4)
    throw UsageError("expected ARTIFACT INPUTS REPEAT [WARMUP_S], got " +
                     std::to_string(pos.size()) + " positional arguments");
  a.artifact = pos[0];
  a.inputs = pos[1];
  a.repeat = std::max(1, std::atoi(pos[2].c_str()));
  a.warmup_s = pos.size() == 4 ? std::atof(pos[3].c_str()) : 0.0;
  return a;
}

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

/// `s` as a JSON string literal.
std::string
quoted(const std::string & s)
{
  std::string q = "\"";
  for (const char c : s)
  {
    if (c == '"' || c == '\\')
      q += '\\';
    q += c;
  }
  return q + '"';
}

/// Write `tensors` as float64 on the CPU to STEM.json + STEM.bin (see the header).
void
save(const std::string & stem, const TensorMap & tensors)
{
  std::ofstream bin(stem + ".bin", std::ios::binary | std::ios::trunc);
  std::ostringstream index;
  index << "{\"tensors\": {";
  int64_t offset = 0;
  const char * sep = "";
  for (const auto & [name, t] : tensors)
  {
    const auto host = t.detach().to(at::kCPU, at::kDouble).contiguous();
    bin.write(reinterpret_cast<const char *>(host.data_ptr<double>()),
              static_cast<std::streamsize>(host.numel() * sizeof(double)));
    index << sep << quoted("output/" + name) << ": {\"shape\": [";
    for (int64_t d = 0; d < host.dim(); ++d)
      index << (d ? ", " : "") << host.size(d);
    index << "], \"offset\": " << offset << "}";
    offset += host.numel();
    sep = ", ";
  }
  index << "}}\n";
  bin.close();
  if (!bin)
    throw std::runtime_error("cannot write " + stem + ".bin");
  std::ofstream json(stem + ".json", std::ios::trunc);
  json << index.str();
  json.close();
  if (!json)
    throw std::runtime_error("cannot write " + stem + ".json");
}

/// Waits for the kernels queued on `device` (a no-op on the CPU, whose calls return when
/// done). Made after the model is loaded: loading it registers torch's CUDA hooks.
std::function<void()>
device_sync(const at::Device & device)
{
  if (device.is_cpu())
    return [] {};
  const auto index = device.has_index() ? device.index() : at::accelerator::getDeviceIndex();
  return [index]
  {
    at::accelerator::synchronizeDevice(index);
  };
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

int
run(const Args & a)
{
  Model m(a.artifact, a.device, "float64");
  const at::Device device(a.device);
  auto x = load(a.inputs);
  for (auto & [name, t] : x)
    t = t.to(device);
  const auto sync = device_sync(device);
  const Timing fwd = median_us(
      [&]
      {
        m.forward(x);
        sync();
      },
      a.repeat,
      a.warmup_s);
  double jac = -1;
  if (!m.derivatives().empty())
    jac = median_us(
              [&]
              {
                m.jacobian(x);
                sync();
              },
              a.repeat,
              a.warmup_s)
              .median_us;
  if (!a.outputs.empty())
    save(a.outputs, m.forward(x));
  std::cout << "{\"forward_us\": " << fwd.median_us << ", \"forward_first_us\": " << fwd.first_us
            << ", \"forward_warmup_calls\": " << fwd.warmup_calls << ", \"jacobian_us\": " << jac
            << ", \"device\": " << quoted(a.device) << "}\n";
  return 0;
}
} // namespace

int
main(int argc, char ** argv)
{
  try
  {
    return run(parse(argc, argv));
  }
  catch (const UsageError & e)
  {
    std::cerr << "bench_cpp: " << e.what() << "\n" << USAGE;
    return 2;
  }
  catch (const std::exception & e)
  {
    std::cerr << "bench_cpp: " << e.what() << "\n";
    return 1;
  }
}
