// pybind11 binding of libneml2_eager: neml2.aoti._cpp_eager, whose public face is
// neml2.aoti.cpp_eager (the cpp-eager route from a Python host, for tests and the route
// matrix).
//
// The C++ class joins the host's interpreter (no second one) and takes the GIL per call;
// the binding releases it around each call. Its surface is that of every model class
// (bind_surface.h); C++ exceptions become neml2.tensors FatalError / ConvergenceError
// (error_translator.h). Never imported by `import neml2.aoti`: the deployment pair
// (neml2-tensors + neml2-aoti-runtime) has no neml2.models to run.
#include "bind_surface.h"
#include "error_translator.h"
#include "neml2/eager/model.h"

#include <pybind11/stl.h>
#include <torch/csrc/utils/pybind.h>

namespace py = pybind11;
using neml2::eager::Model;
using neml2::eager::Options;

PYBIND11_MODULE(_cpp_eager, m)
{
  m.doc() = "libneml2_eager: neml2 models run by the Python implementation behind a C++ class";

  neml2::python::register_error_translator();

  m.def("python_interpreter",
        &neml2::eager::python_interpreter,
        "The interpreter libneml2_eager runs (here: the host's).");

  py::class_<Model> cls(m, "Model");
  cls.def(py::init(
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
      .def_property_readonly(
          "input_sub_batch_ndim",
          [](const Model & self)
          {
            return self.input_sub_batch_ndim();
          },
          "{input: number of sub-batch axes} of the inputs that have any.");
  neml2::python::bind_surface(cls);
}
