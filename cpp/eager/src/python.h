// Private: the embedded (or host) CPython interpreter behind libneml2_eager.
#pragma once

#include <torch/csrc/python_headers.h>

#include <string>
#include <utility>

namespace neml2::eager::detail
{
/// An owned PyObject reference (decref'd on destruction; hold the GIL).
class Ref
{
public:
  Ref() = default;
  /// Take ownership of a new reference (may be null).
  explicit Ref(PyObject * p) noexcept : _p(p) {}
  static Ref borrow(PyObject * p) noexcept
  {
    Py_XINCREF(p);
    return Ref(p);
  }
  ~Ref() { Py_XDECREF(_p); }
  Ref(Ref && o) noexcept : _p(std::exchange(o._p, nullptr)) {}
  Ref & operator=(Ref && o) noexcept
  {
    if (this != &o)
    {
      Py_XDECREF(_p);
      _p = std::exchange(o._p, nullptr);
    }
    return *this;
  }
  Ref(const Ref &) = delete;
  Ref & operator=(const Ref &) = delete;
  PyObject * get() const noexcept { return _p; }
  PyObject * release() noexcept { return std::exchange(_p, nullptr); }
  explicit operator bool() const noexcept { return _p != nullptr; }

private:
  PyObject * _p = nullptr;
};

/// Holds the GIL for its lifetime (re-entrant; works from any thread).
class Gil
{
public:
  Gil();
  ~Gil();
  Gil(const Gil &) = delete;
  Gil & operator=(const Gil &) = delete;

private:
  PyGILState_STATE _state;
};

/// The Python objects libneml2_eager calls (borrowed, alive forever).
struct Handles
{
  PyObject * load_model = nullptr;        // neml2.load_model
  PyObject * load_input = nullptr;        // neml2.load_input
  PyObject * convergence_error = nullptr; // neml2.tensors.ConvergenceError
  std::string torch_version;              // torch.__version__
};

/// Start CPython (or join the host's), import neml2; thread-safe, idempotent.
/// Throws FatalError when no interpreter can be started or neml2 cannot be imported.
/// Call without holding the GIL.
const Handles & interpreter();

/// sys.executable and how it was chosen (for messages).
std::string interpreter_description();

/// True while Python can run code (false during and after finalization).
bool python_alive() noexcept;

/// Throw the pending Python exception as aoti::ConvergenceError (neml2's
/// ConvergenceError) or aoti::FatalError, its message prefixed by `context`. Hold the GIL.
[[noreturn]] void throw_python_error(const std::string & context);

/// `p`, or throw_python_error(context) when `p` is null.
inline PyObject *
check(PyObject * p, const std::string & context)
{
  if (!p)
    throw_python_error(context);
  return p;
}
} // namespace neml2::eager::detail
