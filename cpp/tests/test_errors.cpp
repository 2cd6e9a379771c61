#include "check.h"
#include "neml2/aoti/errors.h"

using namespace neml2::aoti;

int
main()
{
  // Both derive from the common base and report whether a host may retry.
  try
  {
    throw ConvergenceError("Newton failed at 3 points");
  }
  catch (const Exception & e)
  {
    CHECK(e.recoverable());
    CHECK(std::string(e.what()) == "Newton failed at 3 points");
  }
  try
  {
    throw FatalError("bad input");
  }
  catch (const Exception & e)
  {
    CHECK(!e.recoverable());
  }
  // A ConvergenceError is not a FatalError.
  CHECK_THROWS(ConvergenceError, throw ConvergenceError("x"), "x");
  bool caught_as_fatal = false;
  try
  {
    throw ConvergenceError("x");
  }
  catch (const FatalError &)
  {
    caught_as_fatal = true;
  }
  catch (const Exception &)
  {
  }
  CHECK(!caught_as_fatal);
  return neml2::test::finish("test_errors");
}
