// Library and torch version information, and the torch compatibility check
// that guards artifact loading (an artifact is only valid for the torch minor
// version it was built with).
#pragma once

#include <string>

namespace neml2::aoti
{
/// Version of libneml2, e.g. "0.1.0".
std::string version();

/// torch version libneml2 was compiled against, e.g. "2.13.0".
std::string torch_version();

/// How libneml2's operators (neml2::dense_lu_solve, ...) share a batch among threads:
/// "openmp" (at::parallel_for over torch's intra-op threads) or "serial" (built without
/// OpenMP: one thread whatever torch.set_num_threads says).
std::string ops_threading();

/// Parse "MAJOR.MINOR[.PATCH][+local]" into (major, minor).
/// Throws FatalError naming `what` if the string is not a version.
std::pair<int, int> parse_major_minor(const std::string & v, const std::string & what);

/// Throw FatalError unless `built_with` has the same major.minor as the torch
/// libneml2 runs against. `what` names the thing being checked (an artifact
/// path) so the message says which file needs rebuilding.
void check_torch_compatible(const std::string & built_with, const std::string & what);
} // namespace neml2::aoti
