// neml2::aoti::Model: a neml2-compile artifact loaded in C++ (the cpp-aoti route).
//
// The artifact is a directory with metadata.json and one .pt2 (AOT Inductor
// package) per graph and <device>/<dtype> target; see docs/aoti.md. Calls take
// and return name-keyed raw tensors at (*B, *base). Inputs are validated by
// name, trailing shape, dtype and device, their batch shapes broadcast, and the
// graphs run on the flattened batch. Errors are FatalError naming the variable
// or file; no Python is involved.
#pragma once

#include "neml2/aoti/batch.h"

#include <ATen/Tensor.h>
#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace neml2::aoti
{
/// The metadata schema this runtime reads.
constexpr int64_t SCHEMA_VERSION = 1;

using TensorMap = std::map<std::string, at::Tensor>;
using JacobianMap = std::map<std::string, TensorMap>;

class Model
{
public:
  /// Load the artifact at `path` (its directory or its metadata.json). `device`
  /// ("cpu", "cuda", "cuda:1") and `dtype` ("float64", "float32") pick a compiled
  /// target (a device index picks the GPU the graphs run on); empty picks the first
  /// one listed.
  explicit Model(const std::string & path,
                 const std::string & device = "",
                 const std::string & dtype = "");
  /// The same load, the target named by torch types: `Model(path, at::kCPU)`,
  /// `Model(path, at::Device("cuda:0"), at::kFloat)`. A target the artifact was not
  /// compiled for is a FatalError listing the compiled ones.
  Model(const std::string & path, at::Device device, at::ScalarType dtype = at::kDouble);
  ~Model();
  Model(Model &&) noexcept;
  Model & operator=(Model &&) noexcept;
  Model(const Model &) = delete;
  Model & operator=(const Model &) = delete;

  /// {output: (*B, *out_sub, *out_base)}.
  TensorMap forward(const TensorMap & inputs);
  /// As forward, storing the outputs into `outputs`: one tensor per output, each at
  /// (*B, *out_sub, *out_base) for the inputs' batch shape B, contiguous, of the
  /// model's dtype and device. An artifact compiled with `neml2-compile --write-into`
  /// has the kernels store them there (no output allocation, no copy); otherwise
  /// forward's results are copied in. Throws FatalError naming the output whose
  /// tensor does not fit, before anything is computed.
  void forward_into(const TensorMap & inputs, const TensorMap & outputs);
  /// Whether the artifact has the forward_into graph (neml2-compile --write-into).
  bool writes_into() const;
  /// Outputs and sum_i J[out][i] . t_i for every output whose blocks w.r.t. all
  /// tangent inputs were compiled (missing tangents are zero).
  std::pair<TensorMap, TensorMap> jvp(const TensorMap & inputs, const TensorMap & tangents);
  /// Outputs and the compiled blocks J[out][in] at (*B, *out_sub, *out_base, *in_sub, *in_base).
  std::pair<TensorMap, JacobianMap> jacobian(const TensorMap & inputs);

  const std::vector<std::string> & input_names() const;
  const std::vector<std::string> & output_names() const;
  /// Variable types as recorded by neml2-compile ("SR2", "Scalar", ...).
  const std::map<std::string, std::string> & variable_types() const;
  /// Base shapes in input_names() / output_names() order ({6} for SR2, {} for Scalar).
  const std::vector<Shape> & input_base_shapes() const;
  const std::vector<Shape> & output_base_shapes() const;
  /// The base shape of one variable by name; FatalError naming it and the known ones.
  const Shape & input_base_shape(const std::string & name) const;
  const Shape & output_base_shape(const std::string & name) const;
  /// Sub-batch shapes (e.g. the per-slip axis of crystal plasticity; empty for most
  /// variables). Tensors are (*B, *sub_batch, *base); Jacobian blocks
  /// (*B, *out_sub, *out_base, *in_sub, *in_base).
  const std::map<std::string, Shape> & input_sub_batch_shapes() const;
  const std::map<std::string, Shape> & output_sub_batch_shapes() const;
  /// Compiled (output, input) derivative pairs.
  const std::vector<std::pair<std::string, std::string>> & derivatives() const;
  c10::Device device() const;
  c10::ScalarType dtype() const;
  /// Directory of the artifact and the torch version it was built with.
  const std::string & path() const;
  const std::string & built_with_torch() const;

  /// Promoted parameters (neml2-compile -p); mutable, the next call sees changes.
  TensorMap & named_parameters();
  /// Replace a promoted parameter wholesale (same shape as compiled).
  void set_parameter(const std::string & name, const at::Tensor & value);

private:
  struct Impl;
  std::unique_ptr<Impl> _impl;
};
} // namespace neml2::aoti
