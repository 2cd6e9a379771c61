// neml2::aoti::DispatchedModel: one batched call split into chunks across
// several workers (the cpp-dispatch route).
//
// Each worker is one thread owning its own neml2::aoti::Model on its device
// ("cpu" workers share the cores; "cuda:N" workers each drive one GPU). A
// Scheduler cuts the flattened batch into chunks; the workers run them and
// write their results into the full output in batch order, so the result is
// the one a single Model gives. See docs/cpp-dispatch.md.
//
// The surface (neml2/aoti/surface.h) is that of every C++ model class, with the meaning
// it has on neml2::aoti::Model: signature() is the artifact's (every worker's Model
// reports it); device() is where inputs are expected and outputs returned; the
// tangents of jvp() broadcast with the inputs; named_parameters() are the promoted
// parameters on device(), and a change reaches every worker at the next call;
// set_parameter() is validated as Model's and replaces the parameter on every worker.
// A failing chunk throws the chunk's exception type (FatalError, ConvergenceError) with
// "points [b, e) of N (worker w, dev): " in front of its message.
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

class DispatchedModel : public Surface<DispatchedModel>
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

  /// The workers, in the order given.
  const std::vector<WorkerInfo> & workers() const;
  Scheduler & scheduler();
  void set_scheduler(std::shared_ptr<Scheduler> scheduler);

private:
  friend class Surface<DispatchedModel>;
  struct Impl;
  std::unique_ptr<Impl> _impl;
};

/// "cpu" followed by "cuda:N" for every CUDA device torch can see.
std::vector<std::string> available_devices();
} // namespace neml2::aoti

extern template class neml2::aoti::Surface<neml2::aoti::DispatchedModel>;
