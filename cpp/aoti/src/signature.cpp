#include "neml2/aoti/signature.h"
#include "neml2/aoti/detail/model_helpers.h"
#include "neml2/aoti/errors.h"

#include <algorithm>

namespace neml2::aoti
{
namespace
{
/// Position of `name` in `names` (the variables of `kind`, "input" or "output"); FatalError
/// naming it, a close match and every known one when there is none.
std::size_t
position(const std::vector<std::string> & names, const std::string & name, const std::string & kind)
{
  const auto it = std::find(names.begin(), names.end(), name);
  if (it != names.end())
    return static_cast<std::size_t>(it - names.begin());
  throw FatalError("no " + kind + " variable '" + name + "'" + did_you_mean(name, names) +
                   "; the model's " + kind + "s are: " + detail::join(names, "(none)"));
}

/// Append `vars` (the variables of `kind`) to the names, base shapes and sub-batch shapes.
void
add(const std::vector<Signature::Variable> & vars,
    const std::string & kind,
    std::vector<std::string> & names,
    std::vector<Shape> & bases,
    std::map<std::string, Shape> & subs,
    std::map<std::string, std::string> & types)
{
  for (const auto & v : vars)
  {
    if (subs.count(v.name))
      throw FatalError(kind + " variable '" + v.name + "' is listed twice");
    for (auto d : v.base_shape)
      if (d < 0)
        throw FatalError(kind + " variable '" + v.name + "' has base shape " +
                         shape_str(v.base_shape) + " with a negative size");
    for (auto d : v.sub_batch_shape)
      if (d < 0 && d != UNKNOWN_SIZE)
        throw FatalError(kind + " variable '" + v.name + "' has sub-batch shape " +
                         shape_str(v.sub_batch_shape) + "; a size is >= 0, or " +
                         std::to_string(UNKNOWN_SIZE) + " when only a call fixes it");
    names.push_back(v.name);
    bases.push_back(v.base_shape);
    subs.emplace(v.name, v.sub_batch_shape);
    types.insert_or_assign(v.name, v.type);
  }
}

Shape
concat(Shape a, const Shape & b)
{
  a.insert(a.end(), b.begin(), b.end());
  return a;
}
} // namespace

Signature::Signature(const std::vector<Variable> & inputs,
                     const std::vector<Variable> & outputs,
                     DerivativePairs derivatives)
    : _derivatives(std::move(derivatives))
{
  add(inputs, "input", _in_names, _in_base, _in_sub, _types);
  add(outputs, "output", _out_names, _out_base, _out_sub, _types);
  for (const auto & [o, i] : _derivatives)
    if (!has_output(o) || !has_input(i))
      throw FatalError(
          "derivative " + o + ":" + i + " names an unknown " +
          (has_output(o)
               ? "input '" + i + "'; the model's inputs are: " + detail::join(_in_names, "(none)")
               : "output '" + o +
                     "'; the model's outputs are: " + detail::join(_out_names, "(none)")));
  for (std::size_t k = 0; k < _in_names.size(); ++k)
  {
    const auto & sub = _in_sub.at(_in_names[k]);
    if (!sub.empty())
      _in_sub_ndim[_in_names[k]] = static_cast<int64_t>(sub.size());
    _in_trail[_in_names[k]] = concat(sub, _in_base[k]);
  }
}

const Shape &
Signature::input_base_shape(const std::string & name) const
{
  return _in_base[position(_in_names, name, "input")];
}

const Shape &
Signature::output_base_shape(const std::string & name) const
{
  return _out_base[position(_out_names, name, "output")];
}

const Shape &
Signature::input_sub_batch_shape(const std::string & name) const
{
  position(_in_names, name, "input");
  return _in_sub.at(name);
}

const Shape &
Signature::output_sub_batch_shape(const std::string & name) const
{
  position(_out_names, name, "output");
  return _out_sub.at(name);
}

Shape
Signature::output_trailing_shape(const std::string & name) const
{
  return concat(output_sub_batch_shape(name), output_base_shape(name));
}
} // namespace neml2::aoti
