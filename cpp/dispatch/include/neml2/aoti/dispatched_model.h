// neml2::aoti::DispatchedModel: one batched call split into chunks across
// several workers (the cpp-dispatch route).
//
// Each worker is one thread owning its own neml2::aoti::Model on its device
// ("cpu" workers share the cores; "cuda:N" workers each drive one GPU). A
// Scheduler cuts the flattened batch into chunks; the workers run them and
// write their results into the full output in batch order, so the result is
// the one a single Model gives. The surface is neml2::aoti::Model's. See
// docs/cpp-dispatch.md.
#pragma once

#include "neml2/aoti/model.h"
#include "neml2/aoti/scheduler.h"

#include <memory>
#include <string>
#include <vector>

namespace neml2::aoti
{
struct DispatchOptions
{
  /// Intra-op threads of each CPU worker; 0 (default): the intra-op threads of
  /// the constructing thread (at::get_num_threads()) divided evenly among the
  /// CPU workers, at least 1, so the workers together do not oversubscribe.
  int threads_per_worker = 0;
};

class DispatchedModel
{
public:
  /// Load the artifact at `path` once per worker. `workers`: "cpu" (one worker
  /// thread on the CPU; repeat it for more), "cuda" / "cuda:N" (one per GPU);
  /// see available_devices(). `scheduler`: null means round-robin. `device`:
  /// where inputs are expected and outputs returned ("cpu" default). `dtype`:
  /// the compiled dtype ("float64", "float32"; empty: the first one listed).
  explicit DispatchedModel(const std::string & path,
                           const std::vector<std::string> & workers = {"cpu", "cpu"},
                           std::shared_ptr<Scheduler> scheduler = nullptr,
                           const std::string & device = "cpu",
                           const std::string & dtype = "",
                           const DispatchOptions & options = {});
  ~DispatchedModel();
  DispatchedModel(const DispatchedModel &) = delete;
  DispatchedModel & operator=(const DispatchedModel &) = delete;

  /// As Model::forward. A failing chunk throws the chunk's exception type
  /// (FatalError, ConvergenceError) with "points [b, e) of N (worker w, dev): "
  /// in front of its message.
  TensorMap forward(const TensorMap & inputs);
  /// As Model::jvp (tangents broadcast with the inputs).
  std::pair<TensorMap, TensorMap> jvp(const TensorMap & inputs, const TensorMap & tangents);
  /// As Model::jacobian.
  std::pair<TensorMap, JacobianMap> jacobian(const TensorMap & inputs);

  const std::vector<std::string> & input_names() const;
  const std::vector<std::string> & output_names() const;
  const std::map<std::string, std::string> & variable_types() const;
  /// Base shapes in input_names() / output_names() order.
  const std::vector<Shape> & input_base_shapes() const;
  const std::vector<Shape> & output_base_shapes() const;
  /// The base shape of one variable by name; FatalError naming it and the known ones.
  const Shape & input_base_shape(const std::string & name) const;
  const Shape & output_base_shape(const std::string & name) const;
  /// Sub-batch shapes, as Model's: tensors are (*B, *sub_batch, *base).
  const std::map<std::string, Shape> & input_sub_batch_shapes() const;
  const std::map<std::string, Shape> & output_sub_batch_shapes() const;
  const std::vector<std::pair<std::string, std::string>> & derivatives() const;
  /// Where inputs are expected and outputs returned.
  c10::Device device() const;
  c10::ScalarType dtype() const;
  const std::string & path() const;
  const std::string & built_with_torch() const;

  /// Promoted parameters on `device()`; mutable, every worker sees the change
  /// at the next call.
  TensorMap & named_parameters();
  /// Replace a promoted parameter (validated as Model::set_parameter) on every worker.
  void set_parameter(const std::string & name, const at::Tensor & value);

  /// The workers, in the order given.
  const std::vector<WorkerInfo> & workers() const;
  Scheduler & scheduler();
  void set_scheduler(std::shared_ptr<Scheduler> scheduler);

private:
  struct Impl;
  std::unique_ptr<Impl> _impl;
};

/// "cpu" followed by "cuda:N" for every CUDA device torch can see.
std::vector<std::string> available_devices();
} // namespace neml2::aoti
