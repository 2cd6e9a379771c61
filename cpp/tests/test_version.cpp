#include "check.h"
#include "neml2/aoti/errors.h"
#include "neml2/aoti/version.h"

#include <torch/version.h>

using namespace neml2::aoti;

int
main()
{
  CHECK(version() == "0.1.0");
  // The recorded torch version agrees with the headers we compiled against.
  const auto mm = parse_major_minor(torch_version(), "t");
  CHECK(mm.first == TORCH_VERSION_MAJOR);
  CHECK(mm.second == TORCH_VERSION_MINOR);

  CHECK(parse_major_minor("2.13.0+cu130", "t") == std::make_pair(2, 13));
  CHECK(parse_major_minor("2.13", "t") == std::make_pair(2, 13));
  CHECK(parse_major_minor("2.14.0a0", "t") == std::make_pair(2, 14));
  CHECK_THROWS(FatalError, parse_major_minor("two.13", "meta.json"), "meta.json: 'two.13'");
  CHECK_THROWS(FatalError, parse_major_minor("2", "m"), "not a version");
  CHECK_THROWS(FatalError, parse_major_minor("", "m"), "not a version");
  CHECK_THROWS(FatalError, parse_major_minor("2.x", "m"), "not a version");

  // Same minor with another patch or local tag is compatible.
  const std::string same =
      std::to_string(TORCH_VERSION_MAJOR) + "." + std::to_string(TORCH_VERSION_MINOR) + ".9+cpu";
  check_torch_compatible(same, "a.pt2");
  // Another minor is not, and the message says what to do.
  const std::string other =
      std::to_string(TORCH_VERSION_MAJOR) + "." + std::to_string(TORCH_VERSION_MINOR + 1) + ".0";
  CHECK_THROWS(FatalError,
               check_torch_compatible(other, "model/metadata.json"),
               "model/metadata.json was built with torch " + other);
  CHECK_THROWS(FatalError, check_torch_compatible(other, "m"), "recompile it with neml2-compile");
  return neml2::test::finish("test_version");
}
