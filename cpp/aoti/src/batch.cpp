#include "neml2/aoti/batch.h"
#include "neml2/aoti/detail/model_helpers.h"
#include "neml2/aoti/errors.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <sstream>

namespace neml2::aoti
{
std::vector<std::pair<int64_t, int64_t>>
aligned_parts(int64_t n, const std::vector<double> & weights)
{
  const double total = std::accumulate(weights.begin(), weights.end(), 0.0);
  std::vector<std::pair<int64_t, int64_t>> parts;
  double acc = 0;
  int64_t begin = 0;
  for (std::size_t i = 0; i < weights.size(); ++i)
  {
    acc += weights[i];
    const double cut = static_cast<double>(n) * acc / total / CHUNK_ALIGNMENT;
    const int64_t end =
        i + 1 == weights.size()
            ? n
            : std::min(n, static_cast<int64_t>(std::llround(cut)) * CHUNK_ALIGNMENT);
    parts.emplace_back(begin, std::max(begin, end));
    begin = std::max(begin, end);
  }
  return parts;
}

std::string
shape_str(at::IntArrayRef shape)
{
  std::ostringstream os;
  os << "(";
  for (std::size_t i = 0; i < shape.size(); ++i)
    os << (i ? ", " : "") << shape[i];
  if (shape.size() == 1)
    os << ",";
  os << ")";
  return os.str();
}

std::string
dtype_name(c10::ScalarType t)
{
  switch (t)
  {
  case at::kDouble:
    return "float64";
  case at::kFloat:
    return "float32";
  case at::kHalf:
    return "float16";
  case at::kBFloat16:
    return "bfloat16";
  case at::kLong:
    return "int64";
  case at::kInt:
    return "int32";
  case at::kShort:
    return "int16";
  case at::kChar:
    return "int8";
  case at::kByte:
    return "uint8";
  case at::kBool:
    return "bool";
  case at::kComplexFloat:
    return "complex64";
  case at::kComplexDouble:
    return "complex128";
  default:
    return c10::toString(t);
  }
}

Shape
batch_shape_of(const std::string & name, const at::Tensor & value, const Shape & base)
{
  if (!value.defined())
    throw FatalError("input '" + name + "' is an undefined tensor");
  const auto shape = value.sizes();
  const auto nb = static_cast<int64_t>(base.size());
  const auto nd = static_cast<int64_t>(shape.size());
  bool ok = nd >= nb;
  for (int64_t i = 0; ok && i < nb; ++i)
    ok = shape[nd - nb + i] == base[i];
  if (!ok)
    throw FatalError("input '" + name + "' has shape " + shape_str(shape) +
                     " but must end in its base shape " + shape_str(base) +
                     " (expected (*batch, *base))");
  return Shape(shape.begin(), shape.end() - nb);
}

at::Tensor
flatten_batch(const at::Tensor & value, const Shape & batch, const Shape & base)
{
  Shape full(batch), flat{1};
  for (auto b : batch)
    flat[0] *= b;
  full.insert(full.end(), base.begin(), base.end());
  flat.insert(flat.end(), base.begin(), base.end());
  return value.expand(full).reshape(flat);
}

Shape
broadcast_batch_shape(const std::map<std::string, at::Tensor> & inputs,
                      const std::map<std::string, Shape> & base_shapes)
{
  // an unknown name first: a misspelt input is also a missing one, and the
  // misspelling is what to report
  for (const auto & [name, value] : inputs)
    if (!base_shapes.count(name))
    {
      std::vector<std::string> names;
      for (const auto & kv : base_shapes)
        names.push_back(kv.first);
      throw FatalError("unknown input '" + name + "'" + did_you_mean(name, names) +
                       "; the model's inputs are: " + detail::join(names));
    }
  for (const auto & [name, base] : base_shapes)
    if (!inputs.count(name))
      throw FatalError("missing input '" + name + "'");

  Shape result;
  std::string first;
  for (const auto & [name, value] : inputs)
  {
    const auto it = base_shapes.find(name);
    const auto b = batch_shape_of(name, value, it->second);
    if (first.empty())
    {
      result = b;
      first = name;
      continue;
    }
    // Right-aligned broadcasting of `result` (so far) with `b`.
    const auto n = std::max(result.size(), b.size());
    Shape merged(n, 1);
    for (std::size_t i = 0; i < n; ++i)
    {
      const int64_t x = i < result.size() ? result[result.size() - 1 - i] : 1;
      const int64_t y = i < b.size() ? b[b.size() - 1 - i] : 1;
      if (x != y && x != 1 && y != 1)
        throw FatalError("input '" + name + "' has batch shape " + shape_str(b) +
                         ", which does not broadcast with batch shape " + shape_str(result) +
                         " of the inputs before it (first: '" + first + "')");
      merged[n - 1 - i] = x == 1 ? y : x;
    }
    result = std::move(merged);
  }
  return result;
}
} // namespace neml2::aoti
