// Schedulers of neml2::aoti::DispatchedModel: how one batched call is cut into
// chunks and which worker runs which chunk.
//
// A scheduler only plans; the DispatchedModel owns the workers (one thread
// each), runs the chunks and reassembles the results in batch order. Every
// point of the flattened batch [0, n) lands in exactly one chunk.
#pragma once

#include "neml2/aoti/batch.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace neml2::aoti
{
/// (Automatic chunk boundaries fall on multiples of CHUNK_ALIGNMENT, batch.h.)

/// A contiguous range [begin, end) of the flattened batch.
struct Chunk
{
  int64_t begin = 0;
  int64_t end = 0;
  int64_t size() const { return end - begin; }
};

/// What a scheduler may know about a worker.
struct WorkerInfo
{
  /// Where the worker runs its chunks: "cpu", "cuda:0", ...
  std::string device;
  /// Intra-op threads of the worker (CPU workers; 1 for CUDA workers).
  int threads = 1;
};

/// Worker `w`'s next chunk, or nullopt when it is done. The workers call it
/// concurrently, each with its own `w` (never two calls with the same `w` at once).
using ChunkSource = std::function<std::optional<Chunk>(std::size_t worker)>;

/// Measured throughput of every worker (points per second) on the first `points`
/// points of the current call's inputs, all workers running at once.
using Calibrate = std::function<std::vector<double>(int64_t points)>;

class Scheduler
{
public:
  virtual ~Scheduler() = default;
  /// "round-robin", "hybrid", "queue", ...
  virtual std::string name() const = 0;
  /// The chunks of one call over `n` >= 1 points. `calibrate` may be called
  /// (before returning) to time the workers on the call's own inputs.
  virtual ChunkSource
  plan(int64_t n, const std::vector<WorkerInfo> & workers, const Calibrate & calibrate) = 0;
};

/// Chunk k = [k c, (k+1) c) goes to worker k mod W. `chunk_size` 0 (default):
/// c = ceil(n / W) rounded up to CHUNK_ALIGNMENT, i.e. at most one contiguous
/// chunk per worker.
class RoundRobinScheduler : public Scheduler
{
public:
  explicit RoundRobinScheduler(int64_t chunk_size = 0);
  std::string name() const override { return "round-robin"; }
  ChunkSource
  plan(int64_t n, const std::vector<WorkerInfo> & workers, const Calibrate & calibrate) override;

private:
  int64_t _chunk;
};

/// Static split weighted by device capacity: worker w gets one contiguous chunk
/// of about n * weight_w / sum(weights) points (boundaries rounded to
/// CHUNK_ALIGNMENT). With no `weights`, the first
/// call with at least `calibration_points` points times every worker on that
/// many of its points (one warm-up and one timed run each) and keeps the
/// measured throughputs as weights; smaller calls before that split evenly.
class HybridScheduler : public Scheduler
{
public:
  explicit HybridScheduler(std::vector<double> weights = {}, int64_t calibration_points = 2048);
  std::string name() const override { return "hybrid"; }
  ChunkSource
  plan(int64_t n, const std::vector<WorkerInfo> & workers, const Calibrate & calibrate) override;
  /// The weights in use (given or measured; empty before calibration).
  std::vector<double> weights() const;

private:
  mutable std::mutex _mutex;
  std::vector<double> _weights;
  int64_t _calibration_points;
};

/// Asynchronous work queue: the workers pull fixed-size chunks, in batch order,
/// until the batch is exhausted, so a faster worker simply takes more of them.
/// `chunk_size` 0 (default): ceil(n / (4 W)) rounded up to CHUNK_ALIGNMENT.
class QueueScheduler : public Scheduler
{
public:
  explicit QueueScheduler(int64_t chunk_size = 0);
  std::string name() const override { return "queue"; }
  ChunkSource
  plan(int64_t n, const std::vector<WorkerInfo> & workers, const Calibrate & calibrate) override;

private:
  int64_t _chunk;
};

/// A scheduler by name ("round-robin", "hybrid", "queue") with its default
/// options; FatalError naming the known ones otherwise.
std::shared_ptr<Scheduler> make_scheduler(const std::string & name);
} // namespace neml2::aoti
