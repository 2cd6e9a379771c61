// neml2::aoti::Surface: the surface every C++ model class has, declared once.
//
// aoti::Model, aoti::DispatchedModel, mpi::DistributedModel and eager::Model derive from
// Surface<themselves>. The calls (forward, jvp, jacobian), the signature and the
// accessors that read it (neml2/aoti/signature.h), where the model computes (device,
// dtype), what it was loaded from (path, built_with_torch) and its parameters are
// declared here, once: the four classes have them all, with the same types, and code
// written against one works with the others. Each class implements them in its private
// Impl (neml2/aoti/detail/surface_impl.h); the class's own header says what is
// particular to it (which derivatives exist, how errors name their points, ...).
#pragma once

#include "neml2/aoti/signature.h"

#include <ATen/Tensor.h>
#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace neml2::aoti
{
/// Tensors by variable name.
using TensorMap = std::map<std::string, at::Tensor>;
/// Jacobian blocks J[output][input].
using JacobianMap = std::map<std::string, TensorMap>;

template <class Derived> class Surface
{
public:
  /// {output: (*B, *out_sub, *out_base)} for {input: (*B, *in_sub, *in_base)}: every
  /// input given, of the model's dtype and device type, their batch shapes broadcast to B.
  TensorMap forward(const TensorMap & inputs);
  /// The outputs, and {output: sum_i J[output][i] . t_i} for every output whose blocks
  /// w.r.t. all given tangents t_i (keyed and shaped like the inputs) exist; a missing
  /// tangent counts as zero.
  std::pair<TensorMap, TensorMap> jvp(const TensorMap & inputs, const TensorMap & tangents);
  /// The outputs, and the blocks J[out][in] at (*B, *out_sub, *out_base, *in_sub,
  /// *in_base) of every pair in derivatives().
  std::pair<TensorMap, JacobianMap> jacobian(const TensorMap & inputs);

  /// The model's variables, their types and shapes, and its derivative pairs; the
  /// accessors below read it.
  const Signature & signature() const;
  const std::vector<std::string> & input_names() const { return signature().input_names(); }
  const std::vector<std::string> & output_names() const { return signature().output_names(); }
  /// neml2 tensor types by name ("SR2", "Scalar", ...), inputs and outputs.
  const std::map<std::string, std::string> & variable_types() const
  {
    return signature().variable_types();
  }
  /// Base shapes in input_names() / output_names() order ({6} for SR2, {} for Scalar).
  const std::vector<Shape> & input_base_shapes() const { return signature().input_base_shapes(); }
  const std::vector<Shape> & output_base_shapes() const { return signature().output_base_shapes(); }
  /// The base shape of one variable by name; FatalError naming it and the known ones.
  const Shape & input_base_shape(const std::string & name) const
  {
    return signature().input_base_shape(name);
  }
  const Shape & output_base_shape(const std::string & name) const
  {
    return signature().output_base_shape(name);
  }
  /// Sub-batch shapes by name, one entry per variable (e.g. the per-slip axis of crystal
  /// plasticity; {} for most variables). UNKNOWN_SIZE (-1) marks an axis whose size
  /// only a call fixes (cpp-eager).
  const std::map<std::string, Shape> & input_sub_batch_shapes() const
  {
    return signature().input_sub_batch_shapes();
  }
  const std::map<std::string, Shape> & output_sub_batch_shapes() const
  {
    return signature().output_sub_batch_shapes();
  }
  /// How many sub-batch axes each input that has any has, by name.
  const std::map<std::string, int64_t> & input_sub_batch_ndim() const
  {
    return signature().input_sub_batch_ndim();
  }
  /// The (output, input) pairs whose Jacobian blocks the model provides.
  const DerivativePairs & derivatives() const { return signature().derivatives(); }

  /// Where inputs are expected and outputs returned.
  c10::Device device() const;
  /// The dtype of inputs, outputs and parameters.
  c10::ScalarType dtype() const;
  /// The artifact directory (compiled routes) or the input file (cpp-eager).
  const std::string & path() const;
  /// The torch version the artifact was built with (cpp-eager: the interpreter's).
  const std::string & built_with_torch() const;

  /// The parameters by name, on device(): mutable, the next call sees a change made in
  /// place or an entry replaced.
  TensorMap & named_parameters();
  /// Replace parameter `name` wholesale (a FatalError names an unknown one, or a shape
  /// other than the model's).
  void set_parameter(const std::string & name, const at::Tensor & value);

protected:
  Surface() = default;
  ~Surface() = default;
  Surface(const Surface &) = default;
  Surface(Surface &&) noexcept = default;
  Surface & operator=(const Surface &) = default;
  Surface & operator=(Surface &&) noexcept = default;

private:
  /// The class's Impl (its private _impl; the class befriends its Surface). Used only
  /// where the Impl is defined (neml2/aoti/detail/surface_impl.h).
  auto & impl() { return *static_cast<Derived &>(*this)._impl; }
  const auto & impl() const { return *static_cast<const Derived &>(*this)._impl; }
};
} // namespace neml2::aoti
