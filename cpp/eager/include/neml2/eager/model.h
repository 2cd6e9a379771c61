// neml2::eager::Model: a neml2 input file evaluated by the Python models, from C++
// (the cpp-eager route).
//
// libneml2_eager embeds CPython on first use (or joins the interpreter when the host
// process is Python), loads the model with `neml2.load_model` and calls its name-keyed
// methods. No compile step: any model that runs in py-eager runs here, sub-batch models
// (crystal plasticity's per-slip axis, Taylor grains) included. Tensors cross the
// boundary without copies. Errors are neml2::aoti::FatalError (Python exceptions, with
// their type, message and origin) and neml2::aoti::ConvergenceError (neml2's
// ConvergenceError, recoverable).
//
// The surface (neml2/aoti/surface.h) is that of every C++ model class. Here: the
// signature has the model's variables in input_spec / output_spec order, and every
// (output, input) pair as derivatives (all derivatives are available eagerly; a Jacobian
// block w.r.t. a sub-batch input is py-eager's, see docs/cpp-eager.md). Sub-batch sizes
// come with each call's tensors, so the sub-batch shapes hold one aoti::UNKNOWN_SIZE (-1)
// per axis: an input has the axes of Options::sub_batch_ndim (or the file's
// [Settings]/example_batch_shape); an output `x` has those of its history input `x~N`,
// and none when it has no such input (an output given sub-batch axes by a parameter
// shows them only in the results). path() is the input file, built_with_torch() the
// torch of the interpreter running the model. named_parameters() holds every parameter
// by dotted name ("elasticity.E"), sharing storage with the Python model: in-place edits
// and replaced entries are seen by the next call; set_parameter() is neml2's
// Model.set_parameter.
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
using aoti::Signature;
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

class Model : public aoti::Surface<Model>
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

private:
  friend class aoti::Surface<Model>;
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

extern template class neml2::aoti::Surface<neml2::eager::Model>;
