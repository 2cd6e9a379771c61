// The Python surface every C++ model class shares, bound once for any of them:
// neml2.aoti._core.Model (neml2::aoti::Model, wrapped by neml2.aoti.Model),
// neml2.aoti.DispatchedModel and neml2.aoti.cpp_eager.Model (neml2::eager::Model).
//
// Calls take and return dicts of tensors ({input: (*B, *in_sub, *in_base)}) and release
// the GIL while C++ runs. The signature properties have one Python type on every class:
// names as lists, types as dicts, shapes as lists of tuples in names order, derivatives
// as (output, input) tuples, device a torch.device, dtype a torch.dtype, path a
// pathlib.Path. Each module binds its constructor and its own extras itself.
#pragma once

#include "neml2/aoti/batch.h"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <torch/csrc/utils/pybind.h>

#include <map>
#include <string>
#include <vector>

namespace neml2::python
{
namespace py = pybind11;

/// [tuple(shape)]: `shapes` as Python lists them.
inline py::list
shape_tuples(const std::vector<aoti::Shape> & shapes)
{
  py::list out;
  for (const auto & s : shapes)
    out.append(py::tuple(py::cast(s)));
  return out;
}

/// [tuple(by_name[n]) for n in names].
inline py::list
shape_tuples(const std::vector<std::string> & names,
             const std::map<std::string, aoti::Shape> & by_name)
{
  py::list out;
  for (const auto & n : names)
    out.append(py::tuple(py::cast(by_name.at(n))));
  return out;
}

/// {n: types[n] for n in names}.
inline std::map<std::string, std::string>
types_of(const std::vector<std::string> & names, const std::map<std::string, std::string> & types)
{
  std::map<std::string, std::string> out;
  for (const auto & n : names)
    out[n] = types.at(n);
  return out;
}

/// Bind the shared surface of model class `M` onto `cls`: forward (and __call__), jvp,
/// jacobian, the signature properties, device, dtype, path, built_with_torch,
/// named_parameters() and set_parameter(name, value).
template <class M, class... Options>
py::class_<M, Options...> &
bind_surface(py::class_<M, Options...> & cls)
{
  using Release = py::call_guard<py::gil_scoped_release>;
  cls.def("forward",
          &M::forward,
          py::arg("inputs"),
          Release(),
          "{output: (*B, *out_sub, *out_base)} for {input: (*B, *in_sub, *in_base)}.")
      .def("__call__", &M::forward, py::arg("inputs"), Release(), "The same as forward.")
      .def("jvp",
           &M::jvp,
           py::arg("inputs"),
           py::arg("tangents"),
           Release(),
           "(outputs, {output: sum_i J[output][i] . tangents[i]}) for every output whose "
           "blocks w.r.t. all given tangents exist (a missing tangent counts as zero).")
      .def("jacobian",
           &M::jacobian,
           py::arg("inputs"),
           Release(),
           "(outputs, J): J[out][in] at (*B, *out_sub, *out_base, *in_sub, *in_base) for "
           "every pair in derivatives.")
      .def_property_readonly(
          "input_names", &M::input_names, "Input variable names, in the model's order.")
      .def_property_readonly(
          "output_names", &M::output_names, "Output variable names, in the model's order.")
      .def_property_readonly(
          "variable_types",
          &M::variable_types,
          "{name: neml2 tensor type} of every input and output (\"SR2\", \"Scalar\", ...).")
      .def_property_readonly(
          "input_types",
          [](const M & self)
          {
            return types_of(self.input_names(), self.variable_types());
          },
          "{input: neml2 tensor type}.")
      .def_property_readonly(
          "output_types",
          [](const M & self)
          {
            return types_of(self.output_names(), self.variable_types());
          },
          "{output: neml2 tensor type}.")
      .def_property_readonly(
          "input_base_shapes",
          [](const M & self)
          {
            return shape_tuples(self.input_base_shapes());
          },
          "Base shape of every input, in input_names order: (6,) for an SR2, () for a Scalar.")
      .def_property_readonly(
          "output_base_shapes",
          [](const M & self)
          {
            return shape_tuples(self.output_base_shapes());
          },
          "Base shape of every output, in output_names order.")
      .def_property_readonly(
          "input_sub_batch_shapes",
          [](const M & self)
          {
            return shape_tuples(self.input_names(), self.input_sub_batch_shapes());
          },
          "Sub-batch shape of every input, in input_names order (often (); -1 for an axis "
          "whose size only a call fixes).")
      .def_property_readonly(
          "output_sub_batch_shapes",
          [](const M & self)
          {
            return shape_tuples(self.output_names(), self.output_sub_batch_shapes());
          },
          "Sub-batch shape of every output, in output_names order.")
      .def_property_readonly("derivatives",
                             &M::derivatives,
                             "The (output, input) pairs whose Jacobian blocks the model provides.")
      .def_property_readonly(
          "device", &M::device, "Where inputs are expected and outputs returned (torch.device).")
      .def_property_readonly(
          "dtype", &M::dtype, "The dtype of inputs, outputs and parameters (torch.dtype).")
      .def_property_readonly(
          "path",
          [](const M & self)
          {
            return py::module_::import("pathlib").attr("Path")(self.path());
          },
          "The artifact directory or input file (pathlib.Path).")
      .def_property_readonly(
          "built_with_torch", &M::built_with_torch, "The torch version the model was built with.")
      .def(
          "named_parameters",
          [](M & self)
          {
            return self.named_parameters();
          },
          "{name: tensor}: the model's parameters, sharing storage with it (an in-place "
          "change is seen by the next call).")
      .def(
          "set_parameter",
          [](M & self, const std::string & name, const py::object & value)
          {
            // a tensor as given (the C++ model refuses one that is not floating-point);
            // a number or nested list has no dtype of its own: the model's
            const auto torch = py::module_::import("torch");
            const auto t = py::isinstance(value, torch.attr("Tensor"))
                               ? py::cast<at::Tensor>(value)
                               : py::cast<at::Tensor>(torch.attr("as_tensor")(
                                     value, py::arg("dtype") = self.dtype()));
            py::gil_scoped_release release;
            self.set_parameter(name, t);
          },
          py::arg("name"),
          py::arg("value"),
          "Replace parameter *name* wholesale by *value* (a floating-point tensor, number or "
          "nested list, converted to the model's dtype; every value finite).");
  return cls;
}
} // namespace neml2::python
