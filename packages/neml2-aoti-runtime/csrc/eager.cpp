// pybind11 binding of libneml2_eager: neml2.aoti._eager (the cpp-eager route from a
// Python host, for tests and the route matrix).
//
// The C++ class joins the host's interpreter (no second one) and takes the GIL per call;
// the binding releases it around each call. C++ exceptions become neml2.tensors
// FatalError / ConvergenceError. Never imported by `import neml2.aoti`: the deployment
// pair (neml2-tensors + neml2-aoti-runtime) has no neml2.models to run.
#include "neml2/aoti/batch.h"
#include "neml2/aoti/errors.h"
#include "neml2/eager/model.h"

#include <pybind11/stl.h>
#include <torch/csrc/utils/pybind.h>

namespace py = pybind11;
using neml2::aoti::ConvergenceError;
using neml2::aoti::FatalError;
using neml2::aoti::shapes_by_name;
using neml2::eager::Model;
using neml2::eager::Options;
using neml2::eager::Shape;

PYBIND11_MODULE(_eager, m)
{
  m.doc() = "libneml2_eager: neml2 models run by the Python implementation behind a C++ class";

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

  m.def("python_interpreter",
        &neml2::eager::python_interpreter,
        "The interpreter libneml2_eager runs (here: the host's).");

  py::class_<Model>(m, "Model")
      .def(py::init(
               [](const std::string & input_file,
                  const std::string & model_name,
                  const std::string & device,
                  const std::string & dtype,
                  const std::vector<std::string> & overrides,
                  const std::map<std::string, int64_t> & sub_batch_ndim)
               {
                 Options o;
                 o.device = device;
                 o.dtype = dtype;
                 o.overrides = overrides;
                 o.sub_batch_ndim = sub_batch_ndim;
                 return std::make_unique<Model>(input_file, model_name, o);
               }),
           py::arg("input_file"),
           py::arg("model_name"),
           py::arg("device") = "",
           py::arg("dtype") = "",
           py::arg("overrides") = std::vector<std::string>(),
           py::arg("sub_batch_ndim") = std::map<std::string, int64_t>(),
           py::call_guard<py::gil_scoped_release>())
      .def("forward", &Model::forward, py::arg("inputs"), py::call_guard<py::gil_scoped_release>())
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
      .def_property_readonly("input_sub_batch_ndim", &Model::input_sub_batch_ndim)
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
      .def(
          "named_parameters",
          [](Model & self)
          {
            return self.named_parameters();
          },
          "Parameters by dotted name; the tensors share storage with the model's.")
      .def("set_parameter",
           &Model::set_parameter,
           py::arg("name"),
           py::arg("value"),
           py::call_guard<py::gil_scoped_release>());
}
