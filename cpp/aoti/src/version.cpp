#include "neml2/aoti/version.h"
#include "neml2/aoti/errors.h"

#include <cctype>
#include <utility>

namespace neml2::aoti
{
std::string
version()
{
  return NEML2_VERSION_STRING;
}

std::string
torch_version()
{
  return NEML2_TORCH_VERSION_STRING;
}

std::string
ops_threading()
{
  return NEML2_OPS_OPENMP ? "openmp" : "serial";
}

std::pair<int, int>
parse_major_minor(const std::string & v, const std::string & what)
{
  int parts[2] = {0, 0};
  std::size_t i = 0;
  for (int k = 0; k < 2; ++k)
  {
    const std::size_t start = i;
    while (i < v.size() && std::isdigit(static_cast<unsigned char>(v[i])))
      ++i;
    if (i == start || i - start > 6)
      throw FatalError(what + ": '" + v + "' is not a version (expected MAJOR.MINOR[.PATCH])");
    parts[k] = std::stoi(v.substr(start, i - start));
    if (k == 0)
    {
      if (i >= v.size() || v[i] != '.')
        throw FatalError(what + ": '" + v + "' is not a version (expected MAJOR.MINOR[.PATCH])");
      ++i;
    }
  }
  if (i < v.size() && v[i] != '.' && v[i] != '+' && !std::isalpha(static_cast<unsigned char>(v[i])))
    throw FatalError(what + ": '" + v + "' is not a version (expected MAJOR.MINOR[.PATCH])");
  return {parts[0], parts[1]};
}

void
check_torch_compatible(const std::string & built_with, const std::string & what)
{
  const auto ours = parse_major_minor(torch_version(), "libneml2 torch version");
  const auto theirs = parse_major_minor(built_with, what + " torch version");
  if (ours != theirs)
    throw FatalError(what + " was built with torch " + built_with +
                     " but this libneml2 runs torch " + torch_version() +
                     "; recompile it with neml2-compile under torch " + std::to_string(ours.first) +
                     "." + std::to_string(ours.second) + ".x");
}
} // namespace neml2::aoti
