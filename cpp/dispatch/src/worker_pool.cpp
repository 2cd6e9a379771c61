#include "worker_pool.h"

namespace neml2::aoti::detail
{
WorkerPool::WorkerPool(std::size_t n, std::function<void(std::size_t)> init) : _errors(n)
{
  // Every thread runs `init` as its first task, so its failure surfaces here.
  {
    std::lock_guard<std::mutex> lock(_mutex);
    _pending = n;
  }
  for (std::size_t w = 0; w < n; ++w)
    _threads.emplace_back(
        [this, w, init]()
        {
          loop(w, init);
        });
  std::unique_lock<std::mutex> lock(_mutex);
  _done.wait(lock,
             [this]()
             {
               return _pending == 0;
             });
  for (auto & e : _errors)
    if (e)
    {
      lock.unlock();
      shutdown();
      std::rethrow_exception(e);
    }
}

WorkerPool::~WorkerPool()
{
  shutdown();
}

void
WorkerPool::shutdown()
{
  {
    std::lock_guard<std::mutex> lock(_mutex);
    if (_stop)
      return;
    _stop = true;
  }
  _wake.notify_all();
  for (auto & t : _threads)
    if (t.joinable())
      t.join();
}

void
WorkerPool::loop(std::size_t w, const std::function<void(std::size_t)> & init)
{
  try
  {
    if (init)
      init(w);
  }
  catch (...)
  {
    _errors[w] = std::current_exception();
  }
  uint64_t seen = 0;
  {
    std::lock_guard<std::mutex> lock(_mutex);
    if (--_pending == 0)
      _done.notify_all();
  }
  for (;;)
  {
    const std::function<void(std::size_t)> * task = nullptr;
    {
      std::unique_lock<std::mutex> lock(_mutex);
      _wake.wait(lock,
                 [&]()
                 {
                   return _stop || _generation != seen;
                 });
      if (_stop)
        return;
      seen = _generation;
      task = _task;
    }
    try
    {
      (*task)(w);
    }
    catch (...)
    {
      _errors[w] = std::current_exception();
    }
    std::lock_guard<std::mutex> lock(_mutex);
    if (--_pending == 0)
      _done.notify_all();
  }
}

void
WorkerPool::run(const std::function<void(std::size_t)> & f)
{
  std::unique_lock<std::mutex> lock(_mutex);
  for (auto & e : _errors)
    e = nullptr;
  _task = &f;
  _pending = _threads.size();
  ++_generation;
  _wake.notify_all();
  _done.wait(lock,
             [this]()
             {
               return _pending == 0;
             });
  _task = nullptr;
  for (auto & e : _errors)
    if (e)
      std::rethrow_exception(e);
}
} // namespace neml2::aoti::detail
