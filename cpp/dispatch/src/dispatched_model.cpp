#include "neml2/aoti/dispatched_model.h"
#include "neml2/aoti/batch.h"
#include "neml2/aoti/detail/model_helpers.h"
#include "neml2/aoti/detail/surface_impl.h"
#include "neml2/aoti/errors.h"
#include "worker_pool.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/detail/CUDAHooksInterface.h>
#include <c10/core/DeviceGuard.h>
#include <c10/util/Exception.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <dlfcn.h>
#include <filesystem>
#include <mutex>
#include <set>

namespace neml2::aoti
{
namespace
{
using detail::numel;

/// torch's CUDA hooks register when libtorch.so (which pulls in libtorch_cuda on
/// CUDA wheels) is loaded; a pure C++ host linking libtorch_cpu has not loaded it.
void
load_libtorch()
{
  static const bool done = []()
  {
    Dl_info info;
    if (dladdr(reinterpret_cast<void *>(&at::detail::getCUDAHooks), &info) && info.dli_fname)
    {
      const auto lib = std::filesystem::path(info.dli_fname).parent_path() / "libtorch.so";
      if (std::filesystem::exists(lib))
        dlopen(lib.c_str(), RTLD_NOW | RTLD_GLOBAL);
    }
    return true;
  }();
  (void)done;
}

int
cuda_device_count()
{
  load_libtorch();
  return at::detail::getCUDAHooks().getNumGPUs();
}

/// Intra-op threads of the calling thread only. ATen's OpenMP backend keeps the
/// count in OpenMP's per-thread ICV, so omp_set_num_threads in a worker thread
/// leaves the host's threads alone (at::set_num_threads would also change the
/// process-wide default). Other backends fall back to at::set_num_threads.
void
set_thread_intraop_threads(int n)
{
  at::internal::lazy_init_num_threads();
  using SetFn = void (*)(int);
  static const SetFn omp_set = []() -> SetFn
  {
    void * s = dlsym(RTLD_DEFAULT, "omp_set_num_threads");
    if (!s)
      if (void * h = dlopen("libgomp.so.1", RTLD_NOW | RTLD_NOLOAD))
        s = dlsym(h, "omp_set_num_threads");
    return reinterpret_cast<SetFn>(s);
  }();
  if (omp_set)
    omp_set(n);
  else
    at::set_num_threads(n);
}

c10::Device
parse_device(const std::string & spec, const std::string & what)
{
  const std::string known =
      "'cpu', 'cuda' or 'cuda:N' (available: " + detail::join(available_devices()) + ")";
  c10::Device d("cpu");
  try
  {
    d = c10::Device(spec);
  }
  catch (const std::exception &)
  {
    throw FatalError(what + " '" + spec + "' is not a device; use " + known);
  }
  if (d.is_cpu())
    return c10::Device("cpu");
  if (!d.is_cuda())
    throw FatalError(what + " '" + spec + "': unsupported device type; use " + known);
  const int index = d.has_index() ? d.index() : 0;
  if (index >= cuda_device_count())
    throw FatalError(what + " '" + spec + "': no such CUDA device; use " + known);
  return c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(index));
}

/// Rethrow `e` as the same neml2 exception type with `prefix` in front.
[[noreturn]] void
rethrow_with(std::exception_ptr e, const std::string & prefix)
{
  try
  {
    std::rethrow_exception(e);
  }
  catch (const ConvergenceError & x)
  {
    throw ConvergenceError(prefix + x.what());
  }
  catch (const FatalError & x)
  {
    throw FatalError(prefix + x.what());
  }
  catch (const c10::Error & x)
  {
    throw FatalError(prefix + x.what_without_backtrace());
  }
  catch (const std::exception & x)
  {
    throw FatalError(prefix + x.what());
  }
  catch (...)
  {
    throw FatalError(prefix + "unknown exception");
  }
}

/// Results of one call, every tensor at (n, ...): outputs, jvp values, Jacobian blocks.
struct Pieces
{
  TensorMap out, jvp;
  JacobianMap J;
};

/// One chunk's call: its worker's Model, the chunk's inputs and tangents, and where the
/// chunk lies in the batch (a call that stores its results in place returns no Pieces).
using ChunkCall =
    std::function<Pieces(Model &, const TensorMap & in, const TensorMap & tan, const Chunk &)>;

struct Worker
{
  WorkerInfo info;
  c10::Device device = c10::Device("cpu");
  std::unique_ptr<Model> model;
  /// Graphs this worker's Model has loaded (touched only by the worker's thread).
  std::set<std::string> loaded;
};

/// torch's AOTIModelPackageLoader constructor is not thread-safe (it parses the
/// package's JSON files into a function-static object: two loaders built at once
/// read each other's metadata, "No device information found", or crash), and
/// Model builds its loaders on first use. So every worker's first call of a
/// graph holds this process-wide lock; running loaded graphs is concurrent.
std::mutex &
loader_mutex()
{
  static std::mutex m;
  return m;
}

template <typename F>
auto
first_use_serialized(Worker & w, const std::string & graph, F && f)
{
  if (w.loaded.count(graph))
    return f();
  std::lock_guard<std::mutex> lock(loader_mutex());
  auto result = f();
  w.loaded.insert(graph);
  return result;
}

/// The device a worker's thread must make current (CUDA workers only).
std::optional<c10::Device>
cuda_device_of(const Worker & w)
{
  return w.device.is_cuda() ? std::optional<c10::Device>(w.device) : std::nullopt;
}
} // namespace

struct DispatchedModel::Impl
{
  std::vector<Worker> workers;
  std::vector<WorkerInfo> infos;
  std::shared_ptr<Scheduler> scheduler;
  std::unique_ptr<detail::WorkerPool> pool;
  c10::Device home = c10::Device("cpu");
  c10::ScalarType dtype = at::kDouble;
  TensorMap params;
  std::mutex call;
  /// home, dtype, and the artifact's path and torch version (device(), dtype(), ...)
  detail::LoadInfo info;

  Model & front() { return *workers.front().model; }
  const Model & front() const { return *workers.front().model; }

  // the surface (neml2/aoti/surface.h)
  TensorMap forward(const TensorMap & inputs);
  std::pair<TensorMap, TensorMap> jvp(const TensorMap & inputs, const TensorMap & tangents);
  std::pair<TensorMap, JacobianMap> jacobian(const TensorMap & inputs);
  const Signature & signature() const { return front().signature(); }
  /// (*sub_batch, *base) per input: what every input tensor ends in.
  const std::map<std::string, Shape> & trail() const { return signature().input_trailing_shapes(); }
  const detail::LoadInfo & load_info() const { return info; }
  TensorMap & named_parameters() { return params; }
  void set_parameter(const std::string & name, const at::Tensor & value);

  /// Whether forward can store chunks in place: the artifact has forward_into and every
  /// worker computes where the results live (CPU workers, CPU home).
  bool writes_into()
  {
    if (!front().writes_into())
      return false;
    for (const auto & w : workers)
      if (w.device != home)
        return false;
    return true;
  }

  /// Copy the (possibly changed) parameters to every worker.
  void sync_parameters()
  {
    for (auto & w : workers)
    {
      auto & theirs = w.model->named_parameters();
      for (const auto & [k, v] : params)
        theirs[k] = v.device() == w.device ? v : v.to(w.device);
    }
  }

  /// Inputs (`what` "input") or tangents ("tangent") of the model's dtype, on the home
  /// device type: nothing is converted or moved implicitly.
  void check(const TensorMap & x, const std::string & what = "input") const
  {
    for (const auto & [name, v] : x)
    {
      if (!v.defined())
        continue; // broadcast_batch_shape names it
      if (v.scalar_type() != dtype)
        throw FatalError(what + " '" + name + "' has dtype " + dtype_name(v.scalar_type()) +
                         " but the model runs in " + dtype_name(dtype) + " on " + home.str() +
                         " (the " + what + " is on " + v.device().str() +
                         "); inputs are never converted implicitly");
      if (v.device().type() != home.type())
        throw FatalError(what + " '" + name + "' is on " + v.device().str() +
                         " but the dispatched model takes inputs on " + home.str() + " (in " +
                         dtype_name(dtype) + "; the " + what + " has dtype " +
                         dtype_name(v.scalar_type()) + "); inputs are never moved implicitly");
    }
  }

  /// The batch shape of `inputs`, checked (dtype, device) and broadcast.
  Shape batch_of(const TensorMap & inputs) const
  {
    check(inputs);
    return broadcast_batch_shape(inputs, trail());
  }

  static TensorMap
  flatten(const TensorMap & x, const std::map<std::string, Shape> & bases, const Shape & batch)
  {
    TensorMap flat;
    for (const auto & [k, v] : x)
      flat[k] = flatten_batch(v, batch, bases.at(k));
    return flat;
  }

  static TensorMap unflatten(const TensorMap & x, const Shape & batch)
  {
    TensorMap res;
    for (const auto & [k, v] : x)
    {
      Shape s(batch);
      s.insert(s.end(), v.sizes().begin() + 1, v.sizes().end());
      res[k] = v.reshape(s);
    }
    return res;
  }

  static TensorMap slice(const TensorMap & x, const Chunk & c, const c10::Device & d)
  {
    TensorMap s;
    for (const auto & [k, v] : x)
      s[k] = v.narrow(0, c.begin, c.size()).to(d);
    return s;
  }

  /// Run `call` (which runs `graph`) on the chunks of [0, n) that the scheduler plans; gather in
  /// order.
  Pieces dispatch(const std::string & graph,
                  int64_t n,
                  const TensorMap & in,
                  const TensorMap & tan,
                  const ChunkCall & call)
  {
    sync_parameters();
    std::mutex alloc;
    Pieces res;
    auto slot = [&](TensorMap & dst, const std::string & key, const at::Tensor & piece)
    {
      std::lock_guard<std::mutex> lock(alloc);
      auto it = dst.find(key);
      if (it == dst.end())
      {
        auto sizes = piece.sizes().vec();
        sizes[0] = n;
        it = dst.emplace(key, at::empty(sizes, piece.options().device(home))).first;
      }
      return it->second;
    };
    auto put = [&](TensorMap & dst, const TensorMap & src, const Chunk & c)
    {
      for (const auto & [k, v] : src)
      {
        if (v.dim() == 0 || v.size(0) != c.size())
          throw FatalError("result '" + k + "' of a chunk of " + std::to_string(c.size()) +
                           " points has shape " + shape_str(v.sizes()));
        slot(dst, k, v).narrow(0, c.begin, c.size()).copy_(v);
      }
    };

    Calibrate calibrate = [&](int64_t points)
    {
      const Chunk c{0, std::min(n, points)};
      std::vector<double> rate(workers.size(), 0.0);
      try
      {
        pool->run(
            [&](std::size_t w)
            {
              auto & wk = workers[w];
              c10::OptionalDeviceGuard g(cuda_device_of(wk));
              const auto a = slice(in, c, wk.device);
              first_use_serialized(wk,
                                   "forward",
                                   [&]()
                                   {
                                     return wk.model->forward(a);
                                   });
              const auto t0 = std::chrono::steady_clock::now();
              wk.model->forward(a);
              const std::chrono::duration<double> dt = std::chrono::steady_clock::now() - t0;
              rate[w] = static_cast<double>(c.size()) / std::max(dt.count(), 1e-9);
            });
      }
      catch (...)
      {
        rethrow_with(std::current_exception(),
                     "calibration on points [0, " + std::to_string(c.end) + ") of " +
                         std::to_string(n) + ": ");
      }
      return rate;
    };

    const ChunkSource next = scheduler->plan(n, infos, calibrate);
    std::atomic<bool> stop{false};
    std::atomic<int64_t> covered{0};
    struct Failure
    {
      Chunk chunk;
      std::size_t worker;
      std::exception_ptr error;
    };
    std::vector<Failure> failures;
    std::mutex failed;
    pool->run(
        [&](std::size_t w)
        {
          auto & wk = workers[w];
          c10::OptionalDeviceGuard g(cuda_device_of(wk));
          while (!stop.load())
          {
            std::optional<Chunk> c;
            try
            {
              c = next(w);
              if (!c)
                break;
              if (c->begin < 0 || c->end > n || c->size() <= 0)
                throw FatalError("scheduler '" + scheduler->name() + "' planned the chunk [" +
                                 std::to_string(c->begin) + ", " + std::to_string(c->end) +
                                 ") outside the batch");
              auto p = first_use_serialized(
                  wk,
                  graph,
                  [&]()
                  {
                    return call(*wk.model, slice(in, *c, wk.device), slice(tan, *c, wk.device), *c);
                  });
              put(res.out, p.out, *c);
              put(res.jvp, p.jvp, *c);
              for (const auto & [o, row] : p.J)
              {
                TensorMap * dst = nullptr;
                {
                  std::lock_guard<std::mutex> lock(alloc);
                  dst = &res.J[o];
                }
                put(*dst, row, *c);
              }
              covered += c->size();
            }
            catch (...)
            {
              std::lock_guard<std::mutex> lock(failed);
              failures.push_back({c.value_or(Chunk{0, n}), w, std::current_exception()});
              stop = true;
              break;
            }
          }
        });
    if (!failures.empty())
    {
      const auto & f = *std::min_element(failures.begin(),
                                         failures.end(),
                                         [](const Failure & a, const Failure & b)
                                         {
                                           return a.chunk.begin < b.chunk.begin;
                                         });
      rethrow_with(f.error,
                   "points [" + std::to_string(f.chunk.begin) + ", " + std::to_string(f.chunk.end) +
                       ") of " + std::to_string(n) + " (worker " + std::to_string(f.worker) + ", " +
                       workers[f.worker].info.device + "): ");
    }
    if (covered.load() != n)
      throw FatalError("scheduler '" + scheduler->name() + "' covered " +
                       std::to_string(covered.load()) + " of " + std::to_string(n) + " points");
    return res;
  }
};

DispatchedModel::DispatchedModel(const std::string & path,
                                 const std::vector<std::string> & workers,
                                 std::shared_ptr<Scheduler> scheduler,
                                 const std::string & device,
                                 const std::string & dtype,
                                 const DispatchOptions & options)
    : _impl(std::make_unique<Impl>())
{
  auto & m = *_impl;
  if (workers.empty())
    throw FatalError("DispatchedModel needs at least one worker (e.g. {\"cpu\", \"cpu\"})");
  if (options.threads_per_worker < 0)
    throw FatalError("DispatchOptions::threads_per_worker must be >= 0 (0: automatic)");
  m.home = parse_device(device, "device");
  m.scheduler = scheduler ? std::move(scheduler) : std::make_shared<RoundRobinScheduler>();
  std::size_t ncpu = 0;
  for (const auto & spec : workers)
    ncpu += parse_device(spec, "worker").is_cpu();
  const int threads =
      options.threads_per_worker > 0
          ? options.threads_per_worker
          : std::max(1, at::get_num_threads() / static_cast<int>(std::max<std::size_t>(ncpu, 1)));
  std::string dt = dtype;
  for (const auto & spec : workers)
  {
    Worker w;
    w.device = parse_device(spec, "worker");
    w.info.device = w.device.str();
    w.info.threads = w.device.is_cpu() ? threads : 1;
    c10::OptionalDeviceGuard g(cuda_device_of(w));
    w.model = std::make_unique<Model>(path, c10::DeviceTypeName(w.device.type(), true), dt);
    if (dt.empty()) // the first worker picked the dtype; the others follow it
      dt = dtype_name(w.model->dtype());
    m.infos.push_back(w.info);
    m.workers.push_back(std::move(w));
  }
  m.dtype = m.front().dtype();
  for (const auto & [k, v] : m.front().named_parameters())
    m.params[k] = v.to(m.home).clone();
  m.info = {m.home, m.dtype, m.front().path(), m.front().built_with_torch()};
  m.pool = std::make_unique<detail::WorkerPool>(m.workers.size(),
                                                [&m](std::size_t w)
                                                {
                                                  if (m.workers[w].device.is_cpu())
                                                    set_thread_intraop_threads(
                                                        m.workers[w].info.threads);
                                                });
}

DispatchedModel::~DispatchedModel() = default;

TensorMap
DispatchedModel::Impl::forward(const TensorMap & inputs)
{
  auto & m = *this;
  std::lock_guard<std::mutex> lock(m.call);
  const Shape batch = m.batch_of(inputs);
  const int64_t n = numel(batch);
  if (n == 0)
    return m.front().forward(inputs);
  if (m.writes_into())
  {
    // every worker stores its chunk straight into the gathered result: one pass over
    // the outputs' memory instead of two (compute, then copy)
    TensorMap dest;
    for (const auto & name : signature().output_names())
    {
      Shape s{n};
      const auto trail = signature().output_trailing_shape(name);
      s.insert(s.end(), trail.begin(), trail.end());
      dest[name] = at::empty(s, at::TensorOptions().dtype(m.dtype).device(m.home));
    }
    m.dispatch("forward_into",
               n,
               flatten(inputs, m.trail(), batch),
               {},
               [&dest](Model & model, const TensorMap & a, const TensorMap &, const Chunk & c)
               {
                 TensorMap part;
                 for (const auto & [k, v] : dest)
                   part[k] = v.narrow(0, c.begin, c.size());
                 model.forward_into(a, part);
                 return Pieces{};
               });
    return unflatten(dest, batch);
  }
  const auto p = m.dispatch("forward",
                            n,
                            flatten(inputs, m.trail(), batch),
                            {},
                            [](Model & model, const TensorMap & a, const TensorMap &, const Chunk &)
                            {
                              return Pieces{model.forward(a), {}, {}};
                            });
  return unflatten(p.out, batch);
}

std::pair<TensorMap, JacobianMap>
DispatchedModel::Impl::jacobian(const TensorMap & inputs)
{
  auto & m = *this;
  std::lock_guard<std::mutex> lock(m.call);
  const Shape batch = m.batch_of(inputs);
  const int64_t n = numel(batch);
  if (n == 0 || signature().derivatives().empty()) // the latter: Model says what to recompile
    return m.front().jacobian(inputs);
  const auto p = m.dispatch("jacobian",
                            n,
                            flatten(inputs, m.trail(), batch),
                            {},
                            [](Model & model, const TensorMap & a, const TensorMap &, const Chunk &)
                            {
                              auto [out, J] = model.jacobian(a);
                              return Pieces{std::move(out), {}, std::move(J)};
                            });
  JacobianMap J;
  for (const auto & [o, row] : p.J)
    J[o] = unflatten(row, batch);
  return {unflatten(p.out, batch), J};
}

std::pair<TensorMap, TensorMap>
DispatchedModel::Impl::jvp(const TensorMap & inputs, const TensorMap & tangents)
{
  auto & m = *this;
  std::lock_guard<std::mutex> lock(m.call);
  m.check(inputs);
  const auto & bases = m.trail();
  for (const auto & [k, t] : tangents)
    if (!bases.count(k))
      return m.front().jvp(inputs, tangents); // Model names the unknown tangent
  m.check(tangents, "tangent");
  // One batch for inputs and tangents: broadcast them together, naming the tangents.
  TensorMap all(inputs);
  std::map<std::string, Shape> all_bases(bases);
  TensorMap tan;
  for (const auto & [k, t] : tangents)
  {
    tan[k] = t.defined() ? t.to(m.home, m.dtype) : t;
    all["tangent of " + k] = tan[k];
    all_bases["tangent of " + k] = bases.at(k);
  }
  const Shape batch = broadcast_batch_shape(all, all_bases);
  const int64_t n = numel(batch);
  if (n == 0)
    return m.front().jvp(inputs, tangents);
  const auto p =
      m.dispatch("jacobian", // jvp contracts the jacobian graph's blocks
                 n,
                 flatten(inputs, bases, batch),
                 flatten(tan, bases, batch),
                 [](Model & model, const TensorMap & a, const TensorMap & t, const Chunk &)
                 {
                   auto [out, jv] = model.jvp(a, t);
                   return Pieces{std::move(out), std::move(jv), {}};
                 });
  return {unflatten(p.out, batch), unflatten(p.jvp, batch)};
}

void
DispatchedModel::Impl::set_parameter(const std::string & name, const at::Tensor & value)
{
  auto & m = *this;
  std::lock_guard<std::mutex> lock(m.call);
  m.front().set_parameter(name, value); // validates name and shape
  m.params[name] = value.to(m.home, m.dtype).clone();
}

const std::vector<WorkerInfo> &
DispatchedModel::workers() const
{
  return _impl->infos;
}

Scheduler &
DispatchedModel::scheduler()
{
  return *_impl->scheduler;
}

void
DispatchedModel::set_scheduler(std::shared_ptr<Scheduler> scheduler)
{
  if (!scheduler)
    throw FatalError("set_scheduler: the scheduler is null");
  std::lock_guard<std::mutex> lock(_impl->call);
  _impl->scheduler = std::move(scheduler);
}

std::vector<std::string>
available_devices()
{
  std::vector<std::string> d{"cpu"};
  const int n = cuda_device_count();
  for (int i = 0; i < n; ++i)
    d.push_back("cuda:" + std::to_string(i));
  return d;
}
} // namespace neml2::aoti

template class neml2::aoti::Surface<neml2::aoti::DispatchedModel>;
