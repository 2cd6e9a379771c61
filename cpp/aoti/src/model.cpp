#include "neml2/aoti/model.h"
#include "neml2/aoti/batch.h"
#include "neml2/aoti/detail/model_helpers.h"
#include "neml2/aoti/detail/surface_impl.h"
#include "neml2/aoti/errors.h"
#include "neml2/aoti/json.h"
#include "neml2/aoti/version.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/csrc/inductor/aoti_package/model_package_loader.h>

#include <cmath>
#include <dlfcn.h>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;

namespace neml2::aoti
{
namespace
{
/// The most threads a batch is cut among (Model::Impl::chunk_threads): each loads its
/// own copy of the graph.
constexpr int64_t MAX_CHUNK_THREADS = 16;

/// The model library inside a .pt2 links libtorch.so, which a pure C++ host (linking
/// only libtorch_cpu / c10) has not loaded. Load it from the directory libtorch_cpu
/// came from, so no RPATH or LD_LIBRARY_PATH is needed.
void
ensure_libtorch_loaded()
{
  static const bool done = []()
  {
    Dl_info info;
    auto * sym = reinterpret_cast<void *>(
        &torch::inductor::AOTIModelPackageLoader::load_metadata_from_package);
    if (dladdr(sym, &info) && info.dli_fname)
    {
      const auto lib = fs::path(info.dli_fname).parent_path() / "libtorch.so";
      if (fs::exists(lib))
        dlopen(lib.c_str(), RTLD_NOW | RTLD_GLOBAL);
    }
    return true;
  }();
  (void)done;
}

/// Runs the compiled kernels of one call on the calling thread alone, for a batch of one
/// point. The kernels open an OpenMP parallel region over the batch axis with the calling
/// thread's thread count (they are compiled with dynamic threads); with one point, the
/// other threads have nothing to do, and waking them and joining them costs more than
/// the work (elasticity on 2 cores: 15 us per call against 6 us serial). The OpenMP
/// runtime is the one torch loaded, found by symbol: a host without it changes nothing.
class SerialRegion
{
public:
  explicit SerialRegion(bool serial)
  {
    static const auto api = []()
    {
      return std::make_pair(
          reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "omp_get_max_threads")),
          reinterpret_cast<void (*)(int)>(dlsym(RTLD_DEFAULT, "omp_set_num_threads")));
    }();
    if (!serial || !api.first || !api.second)
      return;
    _set = api.second;
    _saved = api.first();
    if (_saved > 1)
      _set(1);
    else
      _set = nullptr;
  }
  ~SerialRegion()
  {
    if (_set)
      _set(_saved);
  }
  SerialRegion(const SerialRegion &) = delete;
  SerialRegion & operator=(const SerialRegion &) = delete;

private:
  void (*_set)(int) = nullptr;
  int _saved = 1;
};

using detail::join;
using detail::parse_dtype;

/// A `kind` record of the artifact contract has every required key (schema.h, generated
/// from artifact_schema.json); the message is the one neml2.aoti's Python reader gives.
template <std::size_t N>
void
require(const Json & record,
        const std::array<std::string_view, N> & keys,
        const std::string & what,
        const std::string & inside)
{
  const std::string at = inside.empty() ? "" : " in " + inside;
  if (!record.is(Json::Kind::Object))
    throw FatalError(what + ": corrupt metadata (not a JSON object" + at + ")");
  for (const auto key : keys)
    if (!record.has(std::string(key)))
      throw FatalError(what + ": corrupt metadata (missing key '" + std::string(key) + "'" + at +
                       ")");
}

/// Every record nested in metadata.json (variables, derivatives, parameters, targets,
/// graphs) has its required keys.
void
require_records(const Json & j, const std::string & what)
{
  const auto each = [&](const char * list, const auto & keys)
  {
    if (!j.has(list))
      return;
    const auto & items = j.at(list, what).as_array(what + " " + list);
    for (std::size_t i = 0; i < items.size(); ++i)
      require(items[i], keys, what, std::string(list) + "[" + std::to_string(i) + "]");
  };
  each("inputs", schema::variable_required);
  each("outputs", schema::variable_required);
  each("derivatives", schema::derivative_required);
  each("parameters", schema::parameter_required);
  each("targets", schema::target_required);
  for (const auto & [name, g] : j.at("graphs", what).as_object(what + " graphs"))
    require(g, schema::graph_required, what, "graphs." + name);
}

Shape
read_shape(const Json & j, const std::string & what)
{
  Shape s;
  for (const auto & d : j.as_array(what))
    s.push_back(d.as_int(what));
  return s;
}

/// The file `rel` that the metadata key `key` of the artifact `what` (its metadata.json,
/// in the folder `dir`) names: resolved, symlinks too, inside `dir`. A path leading out
/// (`..`, absolute, a symlink out) is refused before anything opens it.
std::string
artifact_file(const std::string & dir,
              const std::string & rel,
              const std::string & what,
              const std::string & key)
{
  std::error_code ec;
  auto root = fs::absolute(dir.empty() ? fs::path(".") : fs::path(dir), ec);
  if (!ec)
    root = fs::weakly_canonical(root, ec);
  const auto file = ec ? fs::path() : fs::weakly_canonical(root / rel, ec);
  const auto inside = file.lexically_relative(root);
  if (ec || rel.empty() || fs::path(rel).is_absolute() || inside.empty() || inside == "." ||
      *inside.begin() == "..")
    throw FatalError(what + ": " + key + " = '" + rel + "' lies outside the artifact directory " +
                     root.string() + "; refusing to open it");
  return (fs::path(dir) / rel).string();
}

/// The variables `names` of one kind with their types, base and sub-batch shapes.
std::vector<Signature::Variable>
variables(const std::vector<std::string> & names,
          const std::map<std::string, std::string> & types,
          const std::map<std::string, Shape> & base,
          const std::map<std::string, Shape> & sub)
{
  std::vector<Signature::Variable> out;
  for (const auto & n : names)
    out.push_back({n, types.at(n), base.at(n), sub.at(n)});
  return out;
}
} // namespace

struct Model::Impl
{
  std::string dir;
  std::string meta_path;
  std::string torch_built;
  std::vector<std::string> inputs, outputs;
  std::map<std::string, std::string> types;
  std::map<std::string, Shape> in_base, out_base;
  /// the same base shapes in `inputs` / `outputs` order
  std::vector<Shape> in_base_list, out_base_list;
  /// per-variable sub-batch shape (crystal plasticity: the per-slip axis), between B and base
  std::map<std::string, Shape> in_sub, out_sub;
  /// sub + base: what every tensor of the variable ends in
  std::map<std::string, Shape> in_trail, out_trail;
  std::vector<std::pair<std::string, std::string>> pairs;
  std::vector<std::string> param_names;
  TensorMap params;
  /// every parameter graph input in order: promoted ones and lifted constants
  std::vector<std::string> graph_params;
  TensorMap hidden;
  std::map<std::string, Shape> param_shapes;
  std::map<std::string, std::string> graphs; // graph -> .pt2 path
  std::map<std::string, bool> status;        // graph -> returns the Newton status last
  /// points per call of a graph that solves (0: the whole batch at once)
  int64_t points_per_call = DEFAULT_POINTS_PER_CALL;
  /// cut a batch of at most points_per_call points among the threads (chunk_threads)
  bool thread_chunks = true;
  /// graph -> its loaded package, one per thread that has solved a chunk (chunk_threads;
  /// each its own, as each worker of a DispatchedModel has its own Model)
  std::map<std::string, std::vector<std::unique_ptr<torch::inductor::AOTIModelPackageLoader>>>
      loaders;
  c10::Device device = c10::Device("cpu");
  c10::ScalarType dtype = at::kDouble;
  std::string target;
  /// inputs, outputs, types, shapes and pairs above as one value (signature())
  Signature sig;
  /// device, dtype, dir and torch_built above (device(), dtype(), ...)
  detail::LoadInfo info;

  // the surface (neml2/aoti/surface.h)
  TensorMap forward(const TensorMap & inputs);
  std::pair<TensorMap, TensorMap> jvp(const TensorMap & inputs, const TensorMap & tangents);
  std::pair<TensorMap, JacobianMap> jacobian(const TensorMap & inputs);
  const Signature & signature() const { return sig; }
  const detail::LoadInfo & load_info() const { return info; }
  TensorMap & named_parameters() { return params; }
  void set_parameter(const std::string & name, const at::Tensor & value);

  /// Read the artifact at `path` for the target of `device_type` ("cpu", "cuda"; empty:
  /// any) and `dtype_str` ("float64", "float32"; empty: any); `index` (-1: none) is the
  /// GPU the graphs run on.
  void load(const std::string & path,
            const std::string & device_type,
            c10::DeviceIndex index,
            const std::string & dtype_str);

  /// The loaded package of `graph` for chunk thread `slot` (0: every call on one thread),
  /// loaded on first use. Only finding a loaded one is safe from several threads at once
  /// (run() loads every slot its chunk threads use before they start).
  torch::inductor::AOTIModelPackageLoader & loader(const std::string & graph, std::size_t slot = 0)
  {
    const auto it = loaders.find(graph);
    if (it != loaders.end() && slot < it->second.size())
      return *it->second[slot];
    const auto g = graphs.find(graph);
    if (g == graphs.end())
      throw FatalError(dir + ": the artifact has no '" + graph +
                       "' graph; recompile with neml2-compile -d OUT:IN to get derivatives");
    auto & mine = loaders[graph];
    ensure_libtorch_loaded();
    while (mine.size() <= slot)
    {
      try
      {
        mine.push_back(std::make_unique<torch::inductor::AOTIModelPackageLoader>(
            g->second, "model", false, 1, device.has_index() ? device.index() : -1));
      }
      catch (const std::exception & e)
      {
        throw FatalError(g->second + ": cannot load the compiled graph: " + e.what());
      }
    }
    return *mine[slot];
  }

  /// Validate, broadcast and flatten the inputs; returns the batch shape.
  Shape prepare(const TensorMap & x, std::vector<at::Tensor> & flat) const
  {
    for (const auto & [name, value] : x)
    {
      if (!in_base.count(name))
        throw FatalError("unknown input '" + name + "'" + did_you_mean(name, inputs) +
                         "; the model's inputs are: " + join(inputs));
      check_placement("input", name, value);
    }
    for (const auto & [name, value] : x)
      check_trailing("input", name, value);
    const Shape batch = broadcast_batch_shape(x, in_trail);
    int64_t n = 1;
    for (auto b : batch)
      n *= b;
    flat.clear();
    for (const auto & name : inputs)
    {
      const auto & base = in_trail.at(name);
      Shape full(batch);
      full.insert(full.end(), base.begin(), base.end());
      Shape flat_shape{n};
      flat_shape.insert(flat_shape.end(), base.begin(), base.end());
      const auto & value = x.at(name);
      // already (n, *trail) and dense (a 1-d batch): passed as is, no view ops
      if (value.sizes() == c10::IntArrayRef(flat_shape) && value.is_contiguous())
        flat.push_back(value);
      else
        flat.push_back(value.expand(full).reshape(flat_shape).contiguous());
    }
    return batch;
  }

  /// `value` (an input or a tangent) must be defined, of the model's dtype and on its
  /// device type: nothing is converted or moved implicitly (docs/routes.md, "Input dtype
  /// and device").
  void check_placement(const std::string & what,
                       const std::string & name,
                       const at::Tensor & value) const
  {
    if (!value.defined())
      throw FatalError(what + " '" + name + "' is an undefined tensor");
    if (value.scalar_type() != dtype)
      throw FatalError(what + " '" + name + "' has dtype " + dtype_name(value.scalar_type()) +
                       " but the model was compiled for " + dtype_name(dtype) + " (target " +
                       target + "; the " + what + " is on " + value.device().str() +
                       "); inputs are never converted implicitly");
    if (value.device().type() != device.type())
      throw FatalError(what + " '" + name + "' is on " + value.device().str() +
                       " but the model was compiled for " + device.str() + " (target " + target +
                       "; the " + what + " has dtype " + dtype_name(value.scalar_type()) +
                       "); inputs are never moved implicitly");
  }

  /// `value` must end in (*sub, *base) of input `name`; the message names the regions.
  void
  check_trailing(const std::string & what, const std::string & name, const at::Tensor & value) const
  {
    const auto & sub = in_sub.at(name);
    if (sub.empty() || !value.defined())
      return; // plain variables: broadcast_batch_shape says it
    const auto & trail = in_trail.at(name);
    const auto shape = value.sizes();
    const auto nt = trail.size();
    bool ok = shape.size() >= nt;
    for (std::size_t i = 0; ok && i < nt; ++i)
      ok = shape[shape.size() - nt + i] == trail[i];
    if (!ok)
      throw FatalError(what + " '" + name + "' has shape " + shape_str(shape) +
                       " but must end in its sub-batch shape " + shape_str(sub) +
                       " and base shape " + shape_str(in_base.at(name)) +
                       " (expected (*batch, *sub_batch, *base) = (*batch, " +
                       shape_str(trail).substr(1));
  }

  /// The trailing rank (sub-batch + base) of every tensor `graph` returns (its solve
  /// status aside): a tensor of one more dimension holds one entry per point, one of
  /// this rank is the same at every point.
  std::vector<std::size_t> result_ranks(const std::string & graph) const
  {
    std::vector<std::size_t> r;
    for (const auto & o : outputs)
      r.push_back(out_trail.at(o).size());
    if (graph == "jacobian")
      for (const auto & [o, i] : pairs)
        r.push_back(out_trail.at(o).size() + in_trail.at(i).size());
    return r;
  }

  /// How many threads solve a batch of `n` points of a graph that solves, one contiguous
  /// chunk each (1: one call with the intra-op threads inside its kernels). On a CPU
  /// target, a batch of at most points_per_call points (and at least CHUNK_ALIGNMENT per
  /// thread) is cut into one chunk per intra-op thread of the calling thread, each chunk
  /// solved on its thread alone: one fork/join a call, where one call on all the threads
  /// forks and joins them in every kernel of every Newton iteration (Perzyna at 1e3
  /// points, 15 iterations, on 2 cores: 4.2 ms a call in one call, 3.4-3.7 ms in two
  /// chunks; the fewer the joins, the less a slow passage of data between the cores,
  /// which doubled the one call's time at times, costs). A larger batch keeps its
  /// slices of points_per_call points, each on all the threads. Each chunk
  /// thread loads its own copy of the graph on first use (as each worker of a
  /// DispatchedModel does), at most MAX_CHUNK_THREADS of them.
  int chunk_threads(int64_t n, int64_t k) const
  {
#if NEML2_OPS_OPENMP
    if (!thread_chunks || !device.is_cpu() || k <= 0 || n > k || at::in_parallel_region())
      return 1;
    const int64_t t = std::min<int64_t>(at::get_num_threads(), MAX_CHUNK_THREADS);
    return static_cast<int>(std::max<int64_t>(1, std::min(t, n / CHUNK_ALIGNMENT)));
#else
    (void)n;
    (void)k;
    return 1; // no OpenMP: the chunks would run one after the other
#endif
  }

  /// Run `graph` on the flattened inputs (each (n, ...)), the parameters, then
  /// `trailing` (the output tensors of forward_into, each (n, ...)). A graph that solves
  /// (returns a Newton status) runs on at most `points_per_call` points at a time (0:
  /// all at once): the slices of the inputs, and of `trailing`, which each call stores
  /// into; on a CPU target a batch of at most that many points is cut into one chunk per
  /// thread, solved at once (chunk_threads). The results are joined in batch order.
  std::vector<at::Tensor> run(const std::string & graph,
                              std::vector<at::Tensor> flat,
                              const std::vector<at::Tensor> & trailing = {})
  {
    const int64_t n = flat.empty() ? 1 : flat.front().size(0);
    const auto st = status.find(graph);
    const bool solves = st != status.end() && st->second;
    const int64_t k = solves && !flat.empty() ? points_per_call : 0;
    const int threads = solves && !flat.empty() ? chunk_threads(n, k) : 1;
    int64_t failed = 0;
    if (threads == 1 && (k <= 0 || n <= k))
    {
      auto out = call(graph, std::move(flat), trailing, solves, failed);
      if (failed > 0)
        throw not_converged(failed, n, 0);
      return out;
    }
    // [begin, length) of every call: one chunk per thread (inner boundaries on multiples
    // of CHUNK_ALIGNMENT, nearest to an even split), or slices of k points
    std::vector<std::pair<int64_t, int64_t>> ranges;
    if (threads > 1)
    {
      for (const auto & [a, b] : aligned_parts(n, std::vector<double>(threads, 1.0)))
        if (b > a)
          ranges.emplace_back(a, b - a);
    }
    else
      for (int64_t a = 0; a < n; a += k)
        ranges.emplace_back(a, std::min(k, n - a));
    std::vector<std::vector<at::Tensor>> parts(ranges.size());
    std::vector<int64_t> fails(ranges.size(), 0);
    auto solve = [&](std::size_t i)
    {
      const auto [a, len] = ranges[i];
      std::vector<at::Tensor> in, dest;
      for (const auto & x : flat)
        in.push_back(x.narrow(0, a, len));
      for (const auto & x : trailing)
        dest.push_back(x.narrow(0, a, len));
      // a chunk's kernels on its thread alone (were nested parallel regions enabled)
      const SerialRegion serial(threads > 1);
      auto out = call(graph, std::move(in), dest, solves, fails[i], threads > 1 ? i : 0);
      if (!dest.empty())
      {
        if (out.size() != dest.size())
          throw FatalError(dir + ": the " + graph + " graph returned " +
                           std::to_string(out.size()) + " tensors, the metadata describes " +
                           std::to_string(dest.size()));
        // an output Inductor did not store in place is copied into its slice
        for (std::size_t j = 0; j < dest.size(); ++j)
          if (!out[j].is_same(dest[j]) && out[j].data_ptr() != dest[j].data_ptr())
            dest[j].copy_(out[j]);
        return;
      }
      parts[i] = std::move(out);
    };
    if (threads > 1)
    {
      for (std::size_t i = 0; i < ranges.size(); ++i)
        loader(graph, i); // loaded before the threads run: one package per chunk thread
      at::parallel_for(0,
                       static_cast<int64_t>(ranges.size()),
                       1,
                       [&](int64_t b, int64_t e)
                       {
                         for (int64_t i = b; i < e; ++i)
                           solve(static_cast<std::size_t>(i));
                       });
    }
    else
      for (std::size_t i = 0; i < ranges.size(); ++i)
        solve(i);
    for (auto f : fails)
      failed += f;
    if (failed > 0)
      throw not_converged(failed, n, threads > 1 ? 0 : k);
    if (!trailing.empty())
      return trailing;
    const auto ranks = result_ranks(graph);
    std::vector<at::Tensor> res;
    for (std::size_t i = 0; i < parts.front().size(); ++i)
    {
      const auto & first = parts.front()[i];
      if (i < ranks.size() && first.dim() == static_cast<int64_t>(ranks[i]))
      {
        res.push_back(first); // the same at every point
        continue;
      }
      std::vector<at::Tensor> pieces;
      for (const auto & p : parts)
        pieces.push_back(p.at(i));
      res.push_back(at::cat(pieces, 0));
    }
    return res;
  }

  /// One call of `graph` on `flat` (each (n, ...)), the parameters and `trailing`, with
  /// the package of chunk thread `slot`; adds the points whose solve failed to `failed`
  /// when the graph `solves`.
  std::vector<at::Tensor> call(const std::string & graph,
                               std::vector<at::Tensor> flat,
                               const std::vector<at::Tensor> & trailing,
                               bool solves,
                               int64_t & failed,
                               std::size_t slot = 0)
  {
    const int64_t n = flat.empty() ? 1 : flat.front().size(0);
    for (const auto & p : graph_params)
      flat.push_back((params.count(p) ? params.at(p) : hidden.at(p)).contiguous());
    flat.insert(flat.end(), trailing.begin(), trailing.end());
    auto & l = loader(graph, slot);
    std::vector<at::Tensor> out;
    {
      const SerialRegion serial(n == 1 && device.is_cpu());
      out = l.run(flat);
    }
    if (solves)
    {
      if (out.empty())
        throw FatalError(dir + ": the " + graph + " graph returned no solve status");
      failed += out.back().item<int64_t>();
      out.pop_back();
    }
    return out;
  }

  /// The error of a solve that failed at `failed` of `n` points, `k` points per call (0:
  /// one call).
  ConvergenceError not_converged(int64_t failed, int64_t n, int64_t k) const
  {
    return ConvergenceError(
        dir + ": the implicit solve did not converge at " + std::to_string(failed) + " of " +
        std::to_string(n) + " points (" +
        (k > 0 ? "solved " + std::to_string(k) + " points per call, points_per_call; " : "") +
        "the solver settings are compiled in; see 'solvers' in metadata.json)");
  }

  static at::Tensor unflatten(const at::Tensor & y, const Shape & batch, const Shape & base)
  {
    int64_t n = 1;
    for (auto b : batch)
      n *= b;
    at::Tensor t = y;
    if (t.dim() == static_cast<int64_t>(base.size())) // batch-independent
    {
      Shape full{n};
      full.insert(full.end(), base.begin(), base.end());
      t = t.expand(full);
    }
    Shape shape(batch);
    shape.insert(shape.end(), base.begin(), base.end());
    if (t.sizes() == c10::IntArrayRef(shape))
      return t;
    return t.reshape(shape);
  }
};

Model::Model(const std::string & path, const std::string & device, const std::string & dtype)
    : _impl(std::make_unique<Impl>())
{
  // "cuda:1": the target of the device type, run on that GPU
  std::string type = device;
  c10::DeviceIndex index = -1;
  if (device.find(':') != std::string::npos)
  {
    try
    {
      const c10::Device d(device);
      type = c10::DeviceTypeName(d.type(), /*lower_case=*/true);
      index = d.index();
    }
    catch (const std::exception &)
    {
      throw FatalError(path + ": invalid device '" + device + "' (e.g. cpu, cuda, cuda:1)");
    }
  }
  _impl->load(path, type, index, dtype);
}

Model::Model(const std::string & path, at::Device device, at::ScalarType dtype)
    : _impl(std::make_unique<Impl>())
{
  _impl->load(path,
              c10::DeviceTypeName(device.type(), /*lower_case=*/true),
              device.has_index() ? device.index() : -1,
              dtype_name(dtype));
}

void
Model::Impl::load(const std::string & path,
                  const std::string & device_type,
                  c10::DeviceIndex index,
                  const std::string & dtype_str)
{
  auto & m = *this;
  fs::path p(path);
  fs::path meta = fs::is_directory(p) ? p / "metadata.json" : p;
  m.meta_path = meta.string();
  m.dir = meta.parent_path().string();
  std::ifstream in(meta);
  if (!fs::is_regular_file(meta) || !in)
    throw FatalError(m.meta_path +
                     ": no neml2 AOTI artifact here (metadata.json not found or unreadable)");
  std::stringstream ss;
  ss << in.rdbuf();
  const Json j = Json::parse(ss.str(), m.meta_path);
  const std::string what = m.meta_path;
  try
  {
    require(j, schema::metadata_required, what, "");
    const auto version = j.at("schema_version", what).as_int(what + " schema_version");
    if (version != SCHEMA_VERSION)
      throw FatalError(what + ": metadata schema_version " + std::to_string(version) +
                       " is not the " + std::to_string(SCHEMA_VERSION) +
                       " this runtime reads; recompile it with this neml2-compile");
    m.torch_built = j.at("torch_version", what).as_string(what + " torch_version");
    check_torch_compatible(m.torch_built, what);
    require_records(j, what);
    for (const auto & [key, names, base, list, sub, trail] :
         {std::make_tuple("inputs", &m.inputs, &m.in_base, &m.in_base_list, &m.in_sub, &m.in_trail),
          std::make_tuple(
              "outputs", &m.outputs, &m.out_base, &m.out_base_list, &m.out_sub, &m.out_trail)})
      for (const auto & v : j.at(key, what).as_array(what + " " + key))
      {
        const auto & name = v.at("name", what + " " + key).as_string(what + " name");
        names->push_back(name);
        m.types[name] = v.at("type", what + " " + name).as_string(what + " type");
        (*base)[name] = read_shape(v.at("base_shape", what + " " + name), what + " base_shape");
        list->push_back((*base)[name]);
        // "sub_batch": [sizes] (0 in artifacts written before sub-batch support: none)
        Shape s;
        if (v.has("sub_batch") && !v.at("sub_batch", what).is(Json::Kind::Number))
          s = read_shape(v.at("sub_batch", what), what + " " + name + " sub_batch");
        (*sub)[name] = s;
        s.insert(s.end(), (*base)[name].begin(), (*base)[name].end());
        (*trail)[name] = s;
      }
    if (j.has("derivatives"))
      for (const auto & d : j.at("derivatives", what).as_array(what + " derivatives"))
      {
        const auto & o = d.at("output", what + " derivative").as_string(what + " output");
        const auto & i = d.at("input", what + " derivative").as_string(what + " input");
        if (!m.out_base.count(o) || !m.in_base.count(i))
          throw FatalError(what + ": derivative " + o + ":" + i + " names unknown variables");
        m.pairs.emplace_back(o, i);
      }
    const auto & targets = j.at("targets", what).as_array(what + " targets");
    const Json * chosen = nullptr;
    for (const auto & t : targets)
    {
      const auto & dev = t.at("device", what + " target").as_string(what + " device");
      const auto & dt = t.at("dtype", what + " target").as_string(what + " dtype");
      if ((device_type.empty() || device_type == dev) && (dtype_str.empty() || dtype_str == dt))
      {
        chosen = &t;
        break;
      }
    }
    if (!chosen)
    {
      std::string have;
      for (const auto & t : targets)
        have += (have.empty() ? "" : ", ") + t.at("device", what).as_string(what) + "/" +
                t.at("dtype", what).as_string(what);
      throw FatalError(what + ": no target for device " +
                       (device_type.empty() ? "any" : device_type) + " and dtype " +
                       (dtype_str.empty() ? "any" : dtype_str) +
                       "; compiled targets: " + (have.empty() ? "none" : have));
    }
    const auto & dev = chosen->at("device", what).as_string(what);
    const auto & dt = chosen->at("dtype", what).as_string(what);
    m.target = dev + "/" + dt;
    m.device = c10::Device(dev);
    if (index >= 0 && !m.device.is_cpu())
      m.device = c10::Device(m.device.type(), index);
    m.dtype = parse_dtype(dt, what);
    // a GPU wants the whole batch at once; slices pay off where caches are small
    m.points_per_call = m.device.is_cpu() ? DEFAULT_POINTS_PER_CALL : 0;
    const auto where = "targets[" + std::to_string(chosen - targets.data()) + "].graphs.";
    for (const auto & [g, rel] : chosen->at("graphs", what).as_object(what + " graphs"))
    {
      const auto file = artifact_file(m.dir, rel.as_string(what + " graph"), what, where + g);
      if (!fs::is_regular_file(file))
        throw FatalError(what + ": graph file " + file + " is missing");
      m.graphs[g] = file;
    }
    for (const auto & [g, spec] : j.at("graphs", what).as_object(what + " graphs"))
      m.status[g] = spec.has("status") && spec.at("status", what).as_bool(what + " status");
    if (!m.graphs.count("forward"))
      throw FatalError(what + ": the target " + m.target + " has no forward graph");
    if (j.has("parameters"))
      for (const auto & q : j.at("parameters", what).as_array(what + " parameters"))
      {
        const auto & name = q.at("name", what + " parameter").as_string(what + " name");
        const auto shape = read_shape(q.at("shape", what + " " + name), what + " shape");
        std::vector<double> vals;
        for (const auto & x : q.at("value", what + " " + name).as_array(what + " value"))
          vals.push_back(x.as_number(what + " value"));
        int64_t numel = 1;
        for (auto s : shape)
          numel *= s;
        if (numel != static_cast<int64_t>(vals.size()))
          throw FatalError(what + ": parameter '" + name + "' has " + std::to_string(vals.size()) +
                           " values for shape " + shape_str(shape));
        auto t = at::tensor(vals, at::TensorOptions().dtype(at::kDouble)).reshape(shape);
        const bool exposed = !q.has("exposed") || q.at("exposed", what).as_bool(what + " exposed");
        m.graph_params.push_back(name);
        if (exposed)
        {
          m.param_names.push_back(name);
          m.params[name] = t.to(m.device, m.dtype);
          m.param_shapes[name] = shape;
        }
        else
          m.hidden[name] = t.to(m.device, m.dtype);
      }
  }
  catch (const FatalError & e)
  {
    // Errors of the JSON accessors (a key missing, a value of the wrong kind)
    // mean a damaged file; the others (schema, torch, targets) say it themselves.
    const std::string msg = e.what();
    if (msg.find(" has no key '") != std::string::npos ||
        msg.find(" must be ") != std::string::npos)
      throw FatalError(what + ": corrupt metadata (" + msg + ")");
    throw;
  }
  try
  {
    m.sig = Signature(variables(m.inputs, m.types, m.in_base, m.in_sub),
                      variables(m.outputs, m.types, m.out_base, m.out_sub),
                      m.pairs);
  }
  catch (const FatalError & e)
  {
    throw FatalError(m.meta_path + ": " + e.what());
  }
  m.info = {m.device, m.dtype, m.dir, m.torch_built};
}

Model::~Model() = default;
Model::Model(Model &&) noexcept = default;
Model & Model::operator=(Model &&) noexcept = default;

TensorMap
Model::Impl::forward(const TensorMap & inputs)
{
  auto & m = *this;
  std::vector<at::Tensor> flat;
  const auto batch = m.prepare(inputs, flat);
  const auto out = m.run("forward", std::move(flat));
  TensorMap res;
  for (std::size_t k = 0; k < m.outputs.size(); ++k)
    res[m.outputs[k]] = unflatten(out.at(k), batch, m.out_trail.at(m.outputs[k]));
  return res;
}

void
Model::forward_into(const TensorMap & inputs, const TensorMap & outputs)
{
  auto & m = *_impl;
  std::vector<at::Tensor> flat;
  const auto batch = m.prepare(inputs, flat);
  int64_t n = 1;
  for (auto b : batch)
    n *= b;
  for (const auto & [name, t] : outputs)
    if (!m.out_trail.count(name))
      throw FatalError("forward_into: unknown output '" + name +
                       "'; the model's outputs are: " + join(m.outputs));
  std::vector<at::Tensor> dest;
  for (const auto & name : m.outputs)
  {
    const auto it = outputs.find(name);
    if (it == outputs.end() || !it->second.defined())
      throw FatalError("forward_into: no tensor for output '" + name +
                       "'; give one per output: " + join(m.outputs));
    const auto & t = it->second;
    Shape want(batch);
    const auto & trail = m.out_trail.at(name);
    want.insert(want.end(), trail.begin(), trail.end());
    if (t.sizes() != c10::IntArrayRef(want))
      throw FatalError("forward_into: output '" + name + "' has shape " + shape_str(t.sizes()) +
                       " but the inputs make it " + shape_str(want) +
                       " (*batch, *sub_batch, *base)");
    if (t.scalar_type() != m.dtype || t.device() != m.device)
      throw FatalError("forward_into: output '" + name + "' is " + dtype_name(t.scalar_type()) +
                       " on " + t.device().str() + "; the model computes " + dtype_name(m.dtype) +
                       " on " + m.device.str());
    if (!t.is_contiguous())
      throw FatalError("forward_into: output '" + name + "' is not contiguous");
    Shape flat_shape{n};
    flat_shape.insert(flat_shape.end(), trail.begin(), trail.end());
    dest.push_back(t.view(flat_shape));
  }
  if (!m.graphs.count("forward_into"))
  {
    const auto res = m.forward(inputs);
    for (const auto & name : m.outputs)
      outputs.at(name).copy_(res.at(name));
    return;
  }
  const auto out = m.run("forward_into", std::move(flat), dest);
  if (out.size() != dest.size())
    throw FatalError(m.dir + ": the forward_into graph returned " + std::to_string(out.size()) +
                     " tensors, the metadata describes " + std::to_string(dest.size()));
  // the kernels stored into `dest`; a graph that returned another tensor (an output
  // Inductor did not store in place) is copied in
  for (std::size_t k = 0; k < dest.size(); ++k)
    if (!out[k].is_same(dest[k]) && out[k].data_ptr() != dest[k].data_ptr())
      dest[k].copy_(out[k]);
}

int64_t
Model::points_per_call() const
{
  return _impl->points_per_call;
}

void
Model::set_points_per_call(int64_t points)
{
  if (points < 0)
    throw FatalError("points_per_call must be 0 (the whole batch in one call) or positive, not " +
                     std::to_string(points));
  _impl->points_per_call = points;
}

bool
Model::thread_chunks() const
{
  return _impl->thread_chunks;
}

void
Model::set_thread_chunks(bool on)
{
  _impl->thread_chunks = on;
}

bool
Model::writes_into() const
{
  return _impl->graphs.count("forward_into") > 0;
}

std::pair<TensorMap, JacobianMap>
Model::Impl::jacobian(const TensorMap & inputs)
{
  auto & m = *this;
  if (m.pairs.empty())
    throw FatalError(m.dir + ": the artifact was compiled without derivatives; recompile with "
                             "neml2-compile -d OUT:IN (e.g. -d : for the full Jacobian)");
  std::vector<at::Tensor> flat;
  const auto batch = m.prepare(inputs, flat);
  const auto res = m.run("jacobian", std::move(flat));
  const auto nout = m.outputs.size();
  if (res.size() != nout + m.pairs.size())
    throw FatalError(m.dir + ": the jacobian graph returned " + std::to_string(res.size()) +
                     " tensors, the metadata describes " + std::to_string(nout + m.pairs.size()));
  TensorMap out;
  for (std::size_t k = 0; k < nout; ++k)
    out[m.outputs[k]] = unflatten(res[k], batch, m.out_trail.at(m.outputs[k]));
  JacobianMap J;
  for (std::size_t k = 0; k < m.pairs.size(); ++k)
  {
    const auto & [o, i] = m.pairs[k];
    Shape base = m.out_trail.at(o);
    const auto & ib = m.in_trail.at(i);
    base.insert(base.end(), ib.begin(), ib.end());
    J[o][i] = unflatten(res[nout + k], batch, base);
  }
  return {out, J};
}

std::pair<TensorMap, TensorMap>
Model::Impl::jvp(const TensorMap & inputs, const TensorMap & tangents)
{
  auto & m = *this;
  std::vector<std::string> given;
  for (const auto & [name, t] : tangents)
  {
    if (!m.in_base.count(name))
      throw FatalError("tangent for unknown input '" + name + "'" + did_you_mean(name, m.inputs) +
                       "; the model's inputs are: " + join(m.inputs));
    m.check_placement("tangent", name, t);
  }
  for (const auto & name : m.inputs)
    if (tangents.count(name))
      given.push_back(name);
  std::vector<std::string> usable;
  for (const auto & o : m.outputs)
  {
    bool ok = true;
    for (const auto & i : given)
      ok = ok && std::find(m.pairs.begin(), m.pairs.end(), std::make_pair(o, i)) != m.pairs.end();
    if (ok)
      usable.push_back(o);
  }
  if (usable.empty())
  {
    std::vector<std::string> known;
    for (const auto & [o, i] : m.pairs)
      known.push_back(o + ":" + i);
    throw FatalError("no output has compiled derivatives w.r.t. all of " + join(given) +
                     " (compiled pairs: " + (known.empty() ? "none" : join(known)) +
                     "); recompile with neml2-compile -d :" + (given.empty() ? "" : given[0]));
  }
  auto [out, J] = jacobian(inputs);
  TensorMap res;
  for (const auto & o : usable)
  {
    const auto nbo = static_cast<int64_t>(m.out_trail.at(o).size());
    at::Tensor acc = at::zeros_like(out.at(o));
    for (const auto & i : given)
    {
      const auto & base = m.in_trail.at(i);
      const auto nbi = static_cast<int64_t>(base.size());
      const at::Tensor t = tangents.at(i).to(m.device, m.dtype);
      m.check_trailing("tangent of input", i, t);
      const auto tbatch = batch_shape_of("tangent of " + i, t, base);
      Shape shape(tbatch);
      shape.insert(shape.end(), static_cast<std::size_t>(nbo), 1);
      shape.insert(shape.end(), base.begin(), base.end());
      at::Tensor prod;
      try
      {
        prod = J.at(o).at(i) * t.reshape(shape);
      }
      catch (const std::exception &)
      {
        throw FatalError("tangent of '" + i + "' has batch shape " + shape_str(tbatch) +
                         ", which does not broadcast with the inputs' batch shape");
      }
      acc = acc + (nbi ? prod.flatten(-nbi).sum(-1) : prod);
    }
    res[o] = acc;
  }
  return {out, res};
}

void
Model::Impl::set_parameter(const std::string & name, const at::Tensor & value)
{
  auto & m = *this;
  if (!m.params.count(name))
    throw FatalError("no promoted parameter '" + name +
                     "'; promoted: " + (m.param_names.empty() ? "(none)" : join(m.param_names)) +
                     " (promote one with neml2-compile -p NAME)");
  if (!value.defined() || value.sizes().vec() != m.param_shapes.at(name))
    throw FatalError("parameter '" + name + "' has shape " +
                     (value.defined() ? shape_str(value.sizes()) : "(undefined)") +
                     " but was compiled with shape " + shape_str(m.param_shapes.at(name)));
  // the rules of neml2.tensors.checked_parameter: floating point (never cast), finite
  if (!at::isFloatingType(value.scalar_type()))
    throw FatalError("parameter '" + name + "' is " + dtype_name(m.dtype) +
                     ": the value has dtype " + dtype_name(value.scalar_type()) +
                     ", which is not floating-point (it is never cast)");
  auto v = value.to(m.device, m.dtype).clone();
  const auto bad = at::logical_not(at::isfinite(v)).flatten();
  if (bad.any().item<bool>())
  {
    auto k = bad.nonzero()[0][0].item<int64_t>();
    const double x = v.flatten()[k].item<double>();
    std::ostringstream os;
    os << "parameter '" << name << "' has the non-finite value ";
    if (std::isnan(x))
      os << "nan"; // as Python writes it (printf may write -nan)
    else
      os << (x < 0 ? "-inf" : "inf");
    if (v.dim() > 0)
    {
      Shape index(static_cast<std::size_t>(v.dim()));
      for (auto d = v.dim(); d-- > 0;)
      {
        index[static_cast<std::size_t>(d)] = k % v.size(d);
        k /= v.size(d);
      }
      os << " at index " << shape_str(index);
    }
    throw FatalError(os.str() + ": a parameter must be finite");
  }
  m.params[name] = std::move(v);
}
} // namespace neml2::aoti

template class neml2::aoti::Surface<neml2::aoti::Model>;
