// Error taxonomy shared by every neml2 route.
//
// FatalError: bad input, bad artifact, bad option; the message names the file,
// option or variable. ConvergenceError: an implicit solve failed; the host may
// cut its time step and retry (recoverable() == true). The Python binding maps
// both onto neml2.tensors.FatalError / neml2.tensors.ConvergenceError.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace neml2::aoti
{
class Exception : public std::runtime_error
{
public:
  using std::runtime_error::runtime_error;
  /// True when the caller may recover, e.g. by cutting its step and retrying.
  virtual bool recoverable() const noexcept = 0;
};

class FatalError : public Exception
{
public:
  using Exception::Exception;
  bool recoverable() const noexcept override { return false; }
};

class ConvergenceError : public Exception
{
public:
  using Exception::Exception;
  bool recoverable() const noexcept override { return true; }
};

/// " (did you mean 'x'?)" for the name of `known` closest to the misspelt `name` (at
/// most 40% of its characters edited, transpositions counting once), else "". The
/// Python routes suggest with difflib the same way.
std::string did_you_mean(const std::string & name, const std::vector<std::string> & known);
} // namespace neml2::aoti
