// Private to the sources of neml2's C++ model classes (installed with the headers, never
// included by them): the small helpers those sources share. How they list names in
// messages, read a dtype option, and count the elements of a shape.
#pragma once

#include "neml2/aoti/batch.h"
#include "neml2/aoti/errors.h"

#include <c10/core/ScalarType.h>

#include <cstdint>
#include <string>
#include <vector>

namespace neml2::aoti::detail
{
/// "a, b, c": `names` joined for a message; `none` when there are none.
inline std::string
join(const std::vector<std::string> & names, const std::string & none = "")
{
  std::string out;
  for (const auto & s : names)
    out += (out.empty() ? "" : ", ") + s;
  return out.empty() ? none : out;
}

/// The dtype a target or option names ("float64", "float32"); the inverse of dtype_name
/// for the dtypes neml2 compiles. Throws FatalError prefixed with `where` (the file or
/// model) for any other name.
inline c10::ScalarType
parse_dtype(const std::string & name, const std::string & where)
{
  if (name == "float64")
    return c10::kDouble;
  if (name == "float32")
    return c10::kFloat;
  throw FatalError(where + ": unknown dtype '" + name + "' (float64 or float32)");
}

/// The number of elements of `shape`: the product of its sizes, 1 for ().
inline int64_t
numel(const Shape & shape)
{
  int64_t n = 1;
  for (auto d : shape)
    n *= d;
  return n;
}
} // namespace neml2::aoti::detail
