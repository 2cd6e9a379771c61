// Batch-shape bookkeeping at the raw-tensor boundary of a compiled model.
//
// Inputs arrive as name -> tensor at (*B, *base_shape). Every route validates
// that each tensor ends in its variable's base shape and that the batch shapes
// broadcast, and reports the offending variable by name.
#pragma once

#include <ATen/Tensor.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace neml2::aoti
{
using Shape = std::vector<int64_t>;

/// Boundaries of the chunks a batch is cut into (DispatchedModel's schedulers, Model's
/// per-thread chunks) fall on multiples of this many points. Compiled kernels vectorize
/// over the batch and finish with a scalar tail whose last bit can differ; aligned
/// boundaries put every point in the same SIMD lane as a single call would, so the
/// results are bitwise identical.
constexpr int64_t CHUNK_ALIGNMENT = 64;

/// [begin, end) of `n` points cut into one contiguous part per weight, in order, each
/// about n * weight / sum(weights) points: the inner boundaries are the multiples of
/// CHUNK_ALIGNMENT nearest to the exact ones, the last part ends at n. A part may be
/// empty (begin == end). DispatchedModel's HybridScheduler and Model's per-thread chunks.
std::vector<std::pair<int64_t, int64_t>> aligned_parts(int64_t n,
                                                       const std::vector<double> & weights);

/// Batch shape of `value` given its variable's base shape.
/// Throws FatalError naming `name` if `value` does not end in `base`.
Shape batch_shape_of(const std::string & name, const at::Tensor & value, const Shape & base);

/// Broadcast batch shape of all `inputs`; `base_shapes` gives each variable's
/// base shape. Throws FatalError if an input is missing from `base_shapes`,
/// an expected input is missing from `inputs`, a base shape disagrees, or two
/// batch shapes do not broadcast (naming both variables and shapes).
Shape broadcast_batch_shape(const std::map<std::string, at::Tensor> & inputs,
                            const std::map<std::string, Shape> & base_shapes);

/// `value` (batch shape broadcastable to `batch`) expanded to `batch` and
/// flattened to (prod(batch), *base); a view where torch can make one.
at::Tensor flatten_batch(const at::Tensor & value, const Shape & batch, const Shape & base);

/// "(2, 3)" style rendering used in error messages.
std::string shape_str(at::IntArrayRef shape);

/// torch's name of a dtype as Python spells it after "torch.": float64, float32,
/// bfloat16, int64, complex128, ... (error messages of every route).
std::string dtype_name(c10::ScalarType t);
} // namespace neml2::aoti
