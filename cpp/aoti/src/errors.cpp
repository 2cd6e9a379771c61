#include "neml2/aoti/errors.h"

// The exception classes are header-only; this translation unit anchors their
// vtables in libneml2 so that typeid/catch works across shared-library
// boundaries (host <-> libneml2 <-> Python binding).
namespace neml2::aoti
{
namespace
{
[[maybe_unused]] void
anchor()
{
  FatalError f("");
  ConvergenceError c("");
  (void)f.recoverable();
  (void)c.recoverable();
}
} // namespace
} // namespace neml2::aoti
