// The translation of libneml2's exceptions onto neml2.tensors' taxonomy, defined once
// for every extension module of the wheel (neml2.aoti._core, neml2.aoti._cpp_eager):
// neml2::aoti::FatalError -> neml2.tensors.FatalError, neml2::aoti::ConvergenceError ->
// neml2.tensors.ConvergenceError, so Python hosts catch the same classes whichever route
// raised them. Other exceptions are left to pybind11 (and torch's translators).
#pragma once

#include "neml2/aoti/errors.h"

#include <pybind11/pybind11.h>

#include <exception>

namespace neml2::python
{
/// Register the translation; each extension module calls it once when it is imported.
inline void
register_error_translator()
{
  namespace py = pybind11;
  py::register_exception_translator(
      [](std::exception_ptr p)
      {
        try
        {
          if (p)
            std::rethrow_exception(p);
        }
        catch (const aoti::ConvergenceError & e)
        {
          PyErr_SetString(py::module_::import("neml2.tensors").attr("ConvergenceError").ptr(),
                          e.what());
        }
        catch (const aoti::FatalError & e)
        {
          PyErr_SetString(py::module_::import("neml2.tensors").attr("FatalError").ptr(), e.what());
        }
      });
}
} // namespace neml2::python
