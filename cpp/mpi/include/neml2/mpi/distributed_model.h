// neml2::mpi::DistributedModel: the cpp-dispatch route across MPI ranks.
//
// Library neml2::mpi (libneml2_mpi), built only when MPI is found
// (NEML2_WITH_MPI=AUTO|ON|OFF); libneml2 itself never needs MPI.
//
// Convention: the root rank holds the full batch. Every call is collective:
// all ranks of the communicator call it together (SPMD); only the root's
// inputs are read (the others may pass empty maps). The root validates and
// broadcasts the inputs' batch, splits the flattened batch into one contiguous
// range per rank (MPI_Scatterv), every rank evaluates its range with its own
// DispatchedModel (its local workers and scheduler), and the root gathers the
// results in order (MPI_Gatherv) and returns them; the other ranks return empty
// maps. A failure on any rank is thrown on every rank with the same type
// (FatalError, ConvergenceError) and message, naming the rank and its range, so
// every rank can react (e.g. cut the time step) consistently. The root's
// promoted parameters are broadcast at every call. See docs/cpp-dispatch.md.
//
// The surface (neml2/aoti/surface.h) is that of every C++ model class. Here forward,
// jvp and jacobian are collective and answer as aoti::Model's on the root, with empty
// maps on the other ranks; signature() is the artifact's (that of local(), the same on
// every rank); device() is the CPU (MPI moves host buffers); named_parameters() are
// the promoted parameters, the root's broadcast to every rank at each call;
// set_parameter() is local (validated as aoti::Model's) and takes effect on the root.
#pragma once

#include "neml2/aoti/dispatched_model.h"

#include <mpi.h>

#include <memory>
#include <string>
#include <vector>

namespace neml2::mpi
{
using aoti::JacobianMap;
using aoti::Shape;
using aoti::Signature;
using aoti::TensorMap;

struct DistributedOptions
{
  /// Workers of each rank's DispatchedModel.
  std::vector<std::string> workers = {"cpu"};
  /// Scheduler of each rank's DispatchedModel; null: round-robin.
  std::shared_ptr<aoti::Scheduler> scheduler;
  /// Intra-op threads of each CPU worker; 0: the cores of the node divided by
  /// the ranks on the node (MPI_COMM_TYPE_SHARED) and by their CPU workers.
  int threads_per_worker = 0;
  /// Share of the batch per rank (one weight per rank); empty: even.
  std::vector<double> rank_weights;
  /// The rank that holds the batch.
  int root = 0;
};

class DistributedModel : public aoti::Surface<DistributedModel>
{
public:
  /// Collective over `comm`: every rank loads the artifact at `path` (the same
  /// path, visible on every node) for the CPU in `dtype` ("" = the first listed).
  explicit DistributedModel(const std::string & path,
                            MPI_Comm comm = MPI_COMM_WORLD,
                            const std::string & dtype = "",
                            const DistributedOptions & options = {});
  ~DistributedModel();
  DistributedModel(const DistributedModel &) = delete;
  DistributedModel & operator=(const DistributedModel &) = delete;

  int rank() const;
  int size() const;
  int root() const;
  /// This rank's DispatchedModel.
  aoti::DispatchedModel & local();

private:
  friend class aoti::Surface<DistributedModel>;
  struct Impl;
  std::unique_ptr<Impl> _impl;
};
} // namespace neml2::mpi

extern template class neml2::aoti::Surface<neml2::mpi::DistributedModel>;
