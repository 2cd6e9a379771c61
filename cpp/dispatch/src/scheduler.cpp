#include "neml2/aoti/scheduler.h"
#include "neml2/aoti/errors.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <numeric>

namespace neml2::aoti
{
namespace
{
int64_t
ceil_div(int64_t a, int64_t b)
{
  return (a + b - 1) / b;
}

int64_t
align_up(int64_t a)
{
  return std::max<int64_t>(1, ceil_div(a, CHUNK_ALIGNMENT)) * CHUNK_ALIGNMENT;
}

/// Every worker runs the chunks listed for it, in order.
ChunkSource
from_lists(std::vector<std::vector<Chunk>> lists)
{
  auto state = std::make_shared<std::vector<std::vector<Chunk>>>(std::move(lists));
  auto cursor = std::make_shared<std::vector<std::size_t>>(state->size(), 0);
  return [state, cursor](std::size_t w) -> std::optional<Chunk>
  {
    if (w >= state->size())
      return std::nullopt;
    auto & i = (*cursor)[w];
    if (i >= (*state)[w].size())
      return std::nullopt;
    return (*state)[w][i++];
  };
}

void
check_chunk_size(int64_t c, const char * who)
{
  if (c < 0)
    throw FatalError(std::string(who) + ": chunk_size must be >= 0 (0: automatic), got " +
                     std::to_string(c));
}
} // namespace

RoundRobinScheduler::RoundRobinScheduler(int64_t chunk_size) : _chunk(chunk_size)
{
  check_chunk_size(chunk_size, "RoundRobinScheduler");
}

ChunkSource
RoundRobinScheduler::plan(int64_t n, const std::vector<WorkerInfo> & workers, const Calibrate &)
{
  const auto nw = static_cast<int64_t>(workers.size());
  const int64_t c = _chunk > 0 ? _chunk : align_up(ceil_div(n, nw));
  std::vector<std::vector<Chunk>> lists(workers.size());
  for (int64_t k = 0; k * c < n; ++k)
    lists[static_cast<std::size_t>(k % nw)].push_back({k * c, std::min(n, (k + 1) * c)});
  return from_lists(std::move(lists));
}

HybridScheduler::HybridScheduler(std::vector<double> weights, int64_t calibration_points)
    : _weights(std::move(weights)), _calibration_points(calibration_points)
{
  for (auto w : _weights)
    if (!(w >= 0) || !std::isfinite(w))
      throw FatalError("HybridScheduler: weights must be finite and >= 0");
  if (!_weights.empty() && std::accumulate(_weights.begin(), _weights.end(), 0.0) <= 0)
    throw FatalError("HybridScheduler: at least one weight must be > 0");
  if (calibration_points < 1)
    throw FatalError("HybridScheduler: calibration_points must be >= 1");
}

std::vector<double>
HybridScheduler::weights() const
{
  std::lock_guard<std::mutex> lock(_mutex);
  return _weights;
}

ChunkSource
HybridScheduler::plan(int64_t n,
                      const std::vector<WorkerInfo> & workers,
                      const Calibrate & calibrate)
{
  std::vector<double> w;
  {
    std::lock_guard<std::mutex> lock(_mutex);
    if (_weights.empty() && n >= _calibration_points && calibrate)
      _weights = calibrate(_calibration_points);
    w = _weights;
  }
  if (w.size() != workers.size())
  {
    if (!w.empty())
      throw FatalError("HybridScheduler: " + std::to_string(w.size()) + " weights for " +
                       std::to_string(workers.size()) + " workers");
    w.assign(workers.size(), 1.0); // not calibrated yet: even split
  }
  std::vector<std::vector<Chunk>> lists(workers.size());
  const auto parts = aligned_parts(n, w);
  for (std::size_t i = 0; i < parts.size(); ++i)
    if (parts[i].second > parts[i].first)
      lists[i].push_back({parts[i].first, parts[i].second});
  return from_lists(std::move(lists));
}

QueueScheduler::QueueScheduler(int64_t chunk_size) : _chunk(chunk_size)
{
  check_chunk_size(chunk_size, "QueueScheduler");
}

ChunkSource
QueueScheduler::plan(int64_t n, const std::vector<WorkerInfo> & workers, const Calibrate &)
{
  const auto nw = static_cast<int64_t>(workers.size());
  const int64_t c = _chunk > 0 ? _chunk : align_up(ceil_div(n, 4 * nw));
  auto next = std::make_shared<std::atomic<int64_t>>(0);
  return [next, n, c](std::size_t) -> std::optional<Chunk>
  {
    const int64_t b = next->fetch_add(c);
    if (b >= n)
      return std::nullopt;
    return Chunk{b, std::min(n, b + c)};
  };
}

std::shared_ptr<Scheduler>
make_scheduler(const std::string & name)
{
  if (name == "round-robin")
    return std::make_shared<RoundRobinScheduler>();
  if (name == "hybrid")
    return std::make_shared<HybridScheduler>();
  if (name == "queue")
    return std::make_shared<QueueScheduler>();
  throw FatalError("unknown scheduler '" + name + "'; known: round-robin, hybrid, queue");
}
} // namespace neml2::aoti
