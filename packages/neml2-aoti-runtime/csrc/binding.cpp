// pybind11 binding of libneml2: neml2.aoti._core.
//
// C++ exceptions from libneml2 are translated onto the Python taxonomy in
// neml2.tensors (FatalError / ConvergenceError, error_translator.h), so Python hosts
// catch the same classes whichever route raised them. The model classes share one
// Python surface (bind_surface.h).
#include "bind_surface.h"
#include "error_translator.h"
#include "neml2/aoti/batch.h"
#include "neml2/aoti/errors.h"
#include "neml2/aoti/model.h"
#include "neml2/aoti/version.h"

#include <pybind11/stl.h>
#include <torch/csrc/utils/pybind.h>

namespace py = pybind11;
using namespace neml2::aoti;

void bind_dispatch(py::module_ & m); // dispatch.cpp: DispatchedModel

PYBIND11_MODULE(_core, m)
{
  m.doc() = "libneml2: runtime for compiled neml2 models";

  neml2::python::register_error_translator();

  m.def("version", &version, "Version of libneml2.");
  m.def("torch_version", &torch_version, "torch version libneml2 was compiled against.");
  m.def("ops_threading",
        &ops_threading,
        "How libneml2's operators share a batch among threads: 'openmp' or 'serial'.");
  m.def("check_torch_compatible",
        &check_torch_compatible,
        py::arg("built_with"),
        py::arg("what"),
        "Raise FatalError unless `built_with` has libneml2's torch major.minor.");
  m.def("batch_shape_of",
        &batch_shape_of,
        py::arg("name"),
        py::arg("value"),
        py::arg("base_shape"),
        "Batch shape of `value` given its variable's base shape.");
  m.def("broadcast_batch_shape",
        &broadcast_batch_shape,
        py::arg("inputs"),
        py::arg("base_shapes"),
        "Broadcast batch shape of name-keyed inputs at (*batch, *base).");
  // The cpp-aoti runtime; neml2.aoti.Model wraps it (py-aoti runs the same C++).
  py::class_<Model> model(m, "Model");
  model
      .def(py::init<const std::string &, const std::string &, const std::string &>(),
           py::arg("path"),
           py::arg("device") = "",
           py::arg("dtype") = "")
      .def("forward_into",
           &Model::forward_into,
           py::arg("inputs"),
           py::arg("outputs"),
           py::call_guard<py::gil_scoped_release>())
      .def_property_readonly("writes_into", &Model::writes_into)
      .def_property("points_per_call", &Model::points_per_call, &Model::set_points_per_call)
      .def_property("thread_chunks", &Model::thread_chunks, &Model::set_thread_chunks);
  neml2::python::bind_surface(model);

  bind_dispatch(m);

  // Used by the tests to check the translation of each C++ error class.
  m.def(
      "_raise",
      [](const std::string & kind, const std::string & msg)
      {
        if (kind == "convergence")
          throw ConvergenceError(msg);
        throw FatalError(msg);
      },
      py::arg("kind"),
      py::arg("message"));
}
