// A fixed set of long-lived worker threads that run one function at once.
//
// Long-lived, so that what a thread sets for itself (its OpenMP thread count,
// its CUDA device) holds for every call, and a call does not pay for thread
// creation. Private to libneml2.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace neml2::aoti::detail
{
class WorkerPool
{
public:
  /// Start `n` threads; thread w runs `init(w)` before anything else.
  WorkerPool(std::size_t n, std::function<void(std::size_t)> init);
  ~WorkerPool();
  WorkerPool(const WorkerPool &) = delete;
  WorkerPool & operator=(const WorkerPool &) = delete;

  std::size_t size() const { return _threads.size(); }

  /// Run `f(w)` on every worker thread w at once and wait for all of them. An
  /// exception escaping `f` (or `init`) is rethrown here, the lowest w's first.
  void run(const std::function<void(std::size_t)> & f);

private:
  void loop(std::size_t w, const std::function<void(std::size_t)> & init);
  void shutdown();

  std::vector<std::thread> _threads;
  std::mutex _mutex;
  std::condition_variable _wake, _done;
  const std::function<void(std::size_t)> * _task = nullptr;
  uint64_t _generation = 0;
  std::size_t _pending = 0;
  bool _stop = false;
  std::vector<std::exception_ptr> _errors;
};
} // namespace neml2::aoti::detail
