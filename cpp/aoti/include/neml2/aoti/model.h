// neml2::aoti::Model: a neml2-compile artifact loaded in C++ (the cpp-aoti route).
//
// The artifact is a directory with metadata.json and one .pt2 (AOT Inductor
// package) per graph and <device>/<dtype> target; see docs/aoti.md. Calls take
// and return name-keyed raw tensors at (*B, *sub_batch, *base). Inputs are validated
// by name, trailing shape, dtype and device, their batch shapes broadcast, and the
// graphs run on the flattened batch. Errors are FatalError naming the variable
// or file; no Python is involved.
//
// The surface (neml2/aoti/surface.h) is that of every C++ model class. Here:
// signature() is metadata.json's; derivatives() are the pairs compiled with
// neml2-compile -d (jacobian() of an artifact without any is a FatalError saying how to
// recompile; jvp() uses the outputs whose blocks w.r.t. every given tangent were
// compiled); a failed implicit solve is a ConvergenceError; named_parameters() are the
// promoted ones (neml2-compile -p), set_parameter() keeps their compiled shape; path()
// is the artifact directory.
#pragma once

#include "neml2/aoti/batch.h"
#include "neml2/aoti/schema.h"
#include "neml2/aoti/signature.h"
#include "neml2/aoti/surface.h"

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
/// The metadata schema this runtime reads (schema.h, generated from the runtime's
/// artifact_schema.json, the one declaration of the artifact contract).
constexpr int64_t SCHEMA_VERSION = schema::VERSION;
/// The default of Model::points_per_call on a CPU target (a GPU target's is 0: the whole
/// batch in one call). 2048 rather than 8192: on a 2-core AMD EPYC the benchmark
/// workloads' compiled implicit models ran 5-32 % faster at 1e4 points (the numbers:
/// the neml2-aoti-runtime CHANGELOG).
constexpr int64_t DEFAULT_POINTS_PER_CALL = 2048;

class Model : public Surface<Model>
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

  /// As forward, storing the outputs into `outputs`: one tensor per output, each at
  /// (*B, *out_sub, *out_base) for the inputs' batch shape B, contiguous, of the
  /// model's dtype and device. An artifact compiled with `neml2-compile --write-into`
  /// has the kernels store them there (no output allocation, no copy); otherwise
  /// forward's results are copied in. Throws FatalError naming the output whose
  /// tensor does not fit, before anything is computed.
  void forward_into(const TensorMap & inputs, const TensorMap & outputs);
  /// Whether the artifact has the forward_into graph (neml2-compile --write-into).
  bool writes_into() const;
  /// How many points one call of a graph that solves (an implicit model's Newton loop)
  /// takes: a larger batch is solved in slices of this many points, one after the other,
  /// each slice's loop stopping when its own points have converged, its working set
  /// cache-sized; the results are joined in batch order. 0: the whole batch in one call.
  /// Graphs without a solve always take the whole batch. Default DEFAULT_POINTS_PER_CALL
  /// on a CPU target, 0 on a GPU.
  int64_t points_per_call() const;
  /// Set points_per_call(); FatalError for a negative count.
  void set_points_per_call(int64_t points);
  /// Whether, on a CPU target, a batch of a graph that solves with at most
  /// points_per_call() points is cut into one contiguous chunk per intra-op thread of the
  /// calling thread (at least CHUNK_ALIGNMENT points each, at most 16 chunks), each chunk
  /// solved on its thread alone: one fork/join of the threads a call instead of several
  /// in every Newton iteration. Default true. The results agree with one call's to the
  /// solver's tolerance; false: one call on all the threads, results independent of the
  /// thread count.
  bool thread_chunks() const;
  /// Set thread_chunks().
  void set_thread_chunks(bool on);

private:
  friend class Surface<Model>;
  struct Impl;
  std::unique_ptr<Impl> _impl;
};
} // namespace neml2::aoti

extern template class neml2::aoti::Surface<neml2::aoti::Model>;
