// neml2::eager::Model: a neml2 input file evaluated by the Python models, from C++
// (the cpp-eager route).
//
// libneml2_eager embeds CPython on first use (or joins the interpreter when the host
// process is Python), loads the model with `neml2.load_model` and calls its name-keyed
// methods. No compile step: any model that runs in py-eager runs here, sub-batch models
// (crystal plasticity's per-slip axis, Taylor grains) included. Tensors cross the
// boundary without copies. The surface is that of neml2::aoti::Model; errors are
// neml2::aoti::FatalError (Python exceptions, with their type, message and origin) and
// neml2::aoti::ConvergenceError (neml2's ConvergenceError, recoverable).
//
// The library does not link libpython: the host does (a C++ executable links
// Python3::Python; a Python host already has it). See docs/cpp-eager.md.
#pragma once

#include "neml2/aoti/batch.h"
#include "neml2/aoti/model.h"

#include <ATen/Tensor.h>
#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace neml2::eager
{
using aoti::JacobianMap;
using aoti::Shape;
using aoti::TensorMap;

/// How to load a model; every field is optional.
struct Options
{
  /// "cpu" (default), "cuda", "cuda:1", ...
  std::string device;
  /// "float64" (default) or "float32".
  std::string dtype;
  /// HIT command-line overrides, e.g. "Models/elasticity/coefficients='2e5 0.3'".
  std::vector<std::string> overrides;
  /// Number of trailing sub-batch axes of an input variable's raw tensor
  /// (*B, *sub, *base), by variable name. A name without "~N" also covers its
  /// history lags. Defaults come from the file's [Settings]/example_batch_shape.
  std::map<std::string, int64_t> sub_batch_ndim;
};

class Model
{
public:
  /// Load `model_name` from the [Models] of `input_file` (neml2.load_model).
  Model(const std::string & input_file,
        const std::string & model_name,
        const Options & options = Options());
  ~Model();
  Model(Model &&) noexcept;
  Model & operator=(Model &&) noexcept;
  Model(const Model &) = delete;
  Model & operator=(const Model &) = delete;

  /// {output: (*B, *out_base)}; sub-batch outputs at (*B, *sub, *out_base).
  TensorMap forward(const TensorMap & inputs);
  /// Outputs and sum_i J[out][i] . t_i for every output (missing tangents are zero).
  std::pair<TensorMap, TensorMap> jvp(const TensorMap & inputs, const TensorMap & tangents);
  /// Outputs and every block J[out][in] at (*B, *out_base, *in_base).
  std::pair<TensorMap, JacobianMap> jacobian(const TensorMap & inputs);

  const std::vector<std::string> & input_names() const;
  const std::vector<std::string> & output_names() const;
  /// Variable types ("SR2", "Scalar", ...), inputs and outputs.
  const std::map<std::string, std::string> & variable_types() const;
  /// Base shapes in input_names() / output_names() order.
  const std::vector<Shape> & input_base_shapes() const;
  const std::vector<Shape> & output_base_shapes() const;
  /// The base shape of one variable by name; FatalError naming it and the known ones.
  const Shape & input_base_shape(const std::string & name) const;
  const Shape & output_base_shape(const std::string & name) const;
  /// Sub-batch axes of the inputs that have any (see Options::sub_batch_ndim).
  const std::map<std::string, int64_t> & input_sub_batch_ndim() const;
  /// Every (output, input) pair: all derivatives are available eagerly.
  const std::vector<std::pair<std::string, std::string>> & derivatives() const;
  c10::Device device() const;
  c10::ScalarType dtype() const;
  /// The input file and the torch version of the interpreter running the model.
  const std::string & path() const;
  const std::string & built_with_torch() const;

  /// Every parameter of the model by dotted name ("elasticity.E"), sharing storage
  /// with the Python model: in-place edits and replaced entries are seen by the next call.
  TensorMap & named_parameters();
  /// Replace a parameter wholesale (neml2's Model.set_parameter).
  void set_parameter(const std::string & name, const at::Tensor & value);

private:
  struct Impl;
  std::unique_ptr<Impl> _impl;
};

/// Same as the constructor.
Model load_model(const std::string & input_file,
                 const std::string & model_name,
                 const Options & options = Options());

/// The Python interpreter libneml2_eager runs (starting it if needed): its
/// sys.executable, and how it was chosen.
std::string python_interpreter();
} // namespace neml2::eager
