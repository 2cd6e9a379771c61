// neml2::aoti::Signature: what a model takes and returns at the raw-tensor boundary.
//
// Its input and output variables (names in order, neml2 types, base shapes, sub-batch
// shapes) and the (output, input) pairs of its Jacobian blocks. Every C++ model class
// (aoti::Model, aoti::DispatchedModel, mpi::DistributedModel, eager::Model) returns one
// from signature(), and its metadata accessors (neml2/aoti/surface.h) read it. A tensor
// of variable v is (*B, *sub_batch(v), *base(v)); a Jacobian block J[o][i] is
// (*B, *sub_batch(o), *base(o), *sub_batch(i), *base(i)).
#pragma once

#include "neml2/aoti/batch.h"

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace neml2::aoti
{
/// (output, input) pairs whose Jacobian blocks a model provides.
using DerivativePairs = std::vector<std::pair<std::string, std::string>>;

/// A sub-batch axis whose size only a call fixes. cpp-eager (neml2::eager::Model) knows
/// how many sub-batch axes a variable has when it loads the model, not their sizes: each
/// such axis is UNKNOWN_SIZE in its sub-batch shapes.
constexpr int64_t UNKNOWN_SIZE = -1;

class Signature
{
public:
  /// One variable as the model declares it.
  struct Variable
  {
    std::string name;
    /// neml2 tensor type: "SR2", "Scalar", ...
    std::string type;
    /// {6} for an SR2, {} for a Scalar.
    Shape base_shape;
    /// The axes between the batch and the base ({12}: a per-slip axis; {} for most
    /// variables); UNKNOWN_SIZE for an axis whose size only a call fixes.
    Shape sub_batch_shape;
  };

  /// No variables and no derivatives.
  Signature() = default;
  /// `inputs` and `outputs` in the model's order. Throws FatalError naming the variable
  /// when a name is listed twice among the inputs (or the outputs), a base size is
  /// negative, a sub-batch size is neither >= 0 nor UNKNOWN_SIZE, or a derivative pair
  /// names an output or input the signature lacks.
  Signature(const std::vector<Variable> & inputs,
            const std::vector<Variable> & outputs,
            DerivativePairs derivatives);

  const std::vector<std::string> & input_names() const { return _in_names; }
  const std::vector<std::string> & output_names() const { return _out_names; }
  /// neml2 tensor types by name, inputs and outputs.
  const std::map<std::string, std::string> & variable_types() const { return _types; }
  /// Base shapes in input_names() / output_names() order.
  const std::vector<Shape> & input_base_shapes() const { return _in_base; }
  const std::vector<Shape> & output_base_shapes() const { return _out_base; }
  /// The base shape of one variable by name; FatalError naming it and the known ones.
  const Shape & input_base_shape(const std::string & name) const;
  const Shape & output_base_shape(const std::string & name) const;
  /// Sub-batch shapes by name, one entry per variable ({} for a variable without
  /// sub-batch axes; UNKNOWN_SIZE entries: see there).
  const std::map<std::string, Shape> & input_sub_batch_shapes() const { return _in_sub; }
  const std::map<std::string, Shape> & output_sub_batch_shapes() const { return _out_sub; }
  /// The sub-batch shape of one variable by name; FatalError naming it and the known ones.
  const Shape & input_sub_batch_shape(const std::string & name) const;
  const Shape & output_sub_batch_shape(const std::string & name) const;
  /// How many sub-batch axes each input that has any has, by name.
  const std::map<std::string, int64_t> & input_sub_batch_ndim() const { return _in_sub_ndim; }
  /// (*sub_batch, *base) by input name: what every tensor of the input ends in.
  const std::map<std::string, Shape> & input_trailing_shapes() const { return _in_trail; }
  /// (*sub_batch, *base) of one output; FatalError naming it and the known ones.
  Shape output_trailing_shape(const std::string & name) const;
  const DerivativePairs & derivatives() const { return _derivatives; }
  bool has_input(const std::string & name) const { return _in_sub.count(name) > 0; }
  bool has_output(const std::string & name) const { return _out_sub.count(name) > 0; }

private:
  std::vector<std::string> _in_names, _out_names;
  std::map<std::string, std::string> _types;
  std::vector<Shape> _in_base, _out_base;
  std::map<std::string, Shape> _in_sub, _out_sub;
  std::map<std::string, int64_t> _in_sub_ndim;
  std::map<std::string, Shape> _in_trail;
  DerivativePairs _derivatives;
};
} // namespace neml2::aoti
