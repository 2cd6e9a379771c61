// pybind11 binding of libneml2: neml2.aoti._core.
//
// C++ exceptions from libneml2 are translated onto the Python taxonomy in
// neml2.tensors (FatalError / ConvergenceError), so Python hosts catch the
// same classes whichever route raised them.
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

  py::register_exception_translator(
      [](std::exception_ptr p)
      {
        try
        {
          if (p)
            std::rethrow_exception(p);
        }
        catch (const ConvergenceError & e)
        {
          PyErr_SetString(py::module_::import("neml2.tensors").attr("ConvergenceError").ptr(),
                          e.what());
        }
        catch (const FatalError & e)
        {
          PyErr_SetString(py::module_::import("neml2.tensors").attr("FatalError").ptr(), e.what());
        }
      });

  m.def("version", &version, "Version of libneml2.");
  m.def("torch_version", &torch_version, "torch version libneml2 was compiled against.");
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
  py::class_<Model>(m, "Model")
      .def(py::init<const std::string &, const std::string &, const std::string &>(),
           py::arg("path"),
           py::arg("device") = "",
           py::arg("dtype") = "")
      .def("forward", &Model::forward, py::arg("inputs"), py::call_guard<py::gil_scoped_release>())
      .def("forward_into",
           &Model::forward_into,
           py::arg("inputs"),
           py::arg("outputs"),
           py::call_guard<py::gil_scoped_release>())
      .def_property_readonly("writes_into", &Model::writes_into)
      .def("jvp",
           &Model::jvp,
           py::arg("inputs"),
           py::arg("tangents"),
           py::call_guard<py::gil_scoped_release>())
      .def(
          "jacobian", &Model::jacobian, py::arg("inputs"), py::call_guard<py::gil_scoped_release>())
      .def_property_readonly("input_names", &Model::input_names)
      .def_property_readonly("output_names", &Model::output_names)
      .def_property_readonly("variable_types", &Model::variable_types)
      .def_property_readonly("input_base_shapes",
                             [](const Model & self)
                             {
                               return shapes_by_name(self.input_names(), self.input_base_shapes());
                             })
      .def_property_readonly("output_base_shapes",
                             [](const Model & self)
                             {
                               return shapes_by_name(self.output_names(),
                                                     self.output_base_shapes());
                             })
      .def_property_readonly("input_sub_batch_shapes", &Model::input_sub_batch_shapes)
      .def_property_readonly("output_sub_batch_shapes", &Model::output_sub_batch_shapes)
      .def_property_readonly("derivatives", &Model::derivatives)
      .def_property_readonly("device",
                             [](const Model & self)
                             {
                               return self.device().str();
                             })
      .def_property_readonly("dtype",
                             [](const Model & self)
                             {
                               return std::string(c10::toString(self.dtype()));
                             })
      .def_property_readonly("path", &Model::path)
      .def_property_readonly("built_with_torch", &Model::built_with_torch)
      .def("named_parameters",
           [](Model & self)
           {
             return self.named_parameters();
           })
      .def("set_parameter", &Model::set_parameter, py::arg("name"), py::arg("value"));

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
