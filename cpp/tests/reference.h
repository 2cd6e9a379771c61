// Reading the py-eager references that make_artifact.py writes for the C++ tests: a
// stem.json (name -> shape, offset) beside a stem.bin of little-endian float64.
#pragma once

#include "neml2/aoti/json.h"
#include "neml2/aoti/surface.h"

#include <ATen/ATen.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <ios>
#include <sstream>
#include <stdexcept>
#include <string>

namespace neml2::test
{
/// The whole file at `p` (a runtime_error naming it if it cannot be read).
inline std::string
slurp(const std::filesystem::path & p, std::ios::openmode mode = std::ios::in)
{
  std::ifstream in(p, mode);
  if (!in)
    throw std::runtime_error("cannot read " + p.string());
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// name -> tensor of one reference file pair (stem.json + stem.bin). The tests run on
/// little-endian hosts only.
inline aoti::TensorMap
load_reference(const std::filesystem::path & stem)
{
  using aoti::Json;
  const auto json = stem.string() + ".json";
  const Json j = Json::parse(slurp(json), json);
  const std::string bytes = slurp(stem.string() + ".bin", std::ios::binary);
  const auto all = at::empty({static_cast<int64_t>(bytes.size() / sizeof(double))}, at::kDouble);
  std::memcpy(all.data_ptr<double>(), bytes.data(), bytes.size());
  aoti::TensorMap out;
  for (const auto & [name, spec] : j.at("tensors", json).as_object(json))
  {
    aoti::Shape shape;
    int64_t numel = 1;
    for (const auto & d : spec.at("shape", name).as_array(name))
    {
      shape.push_back(d.as_int(name));
      numel *= shape.back();
    }
    out[name] = all.narrow(0, spec.at("offset", name).as_int(name), numel).reshape(shape).clone();
  }
  return out;
}
} // namespace neml2::test
