#include "neml2/mpi/distributed_model.h"
#include "neml2/aoti/batch.h"
#include "neml2/aoti/detail/model_helpers.h"
#include "neml2/aoti/detail/surface_impl.h"
#include "neml2/aoti/errors.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <climits>
#include <functional>
#include <thread>

namespace neml2::mpi
{
using aoti::ConvergenceError;
using aoti::dtype_name;
using aoti::FatalError;

namespace
{
using aoti::detail::numel;

enum Status : int64_t
{
  OK = 0,
  FATAL = 1,
  CONVERGENCE = 2
};

/// Results of one call, every tensor at (n, ...): outputs, jvp values, Jacobian blocks.
struct Pieces
{
  TensorMap out, jvp;
  JacobianMap J;
};

int
as_count(int64_t v)
{
  if (v > INT_MAX)
    throw FatalError("a buffer of " + std::to_string(v) +
                     " values exceeds MPI's int counts; split the call into smaller batches");
  return static_cast<int>(v);
}

MPI_Datatype
mpi_type(c10::ScalarType t)
{
  return t == at::kFloat ? MPI_FLOAT : MPI_DOUBLE;
}

/// `s` on rank `from`, broadcast to every rank.
std::string
bcast_string(std::string s, int from, MPI_Comm comm)
{
  int64_t len = static_cast<int64_t>(s.size());
  MPI_Bcast(&len, 1, MPI_INT64_T, from, comm);
  s.resize(static_cast<std::size_t>(len));
  if (len)
    MPI_Bcast(s.data(), as_count(len), MPI_CHAR, from, comm);
  return s;
}

int64_t
status_of(std::exception_ptr e, std::string & msg)
{
  try
  {
    std::rethrow_exception(e);
  }
  catch (const ConvergenceError & x)
  {
    msg = x.what();
    return CONVERGENCE;
  }
  catch (const std::exception & x)
  {
    msg = x.what();
    return FATAL;
  }
  catch (...)
  {
    msg = "unknown exception";
    return FATAL;
  }
}

/// Every rank learns whether any rank failed; the lowest failing rank's error is
/// then thrown on all of them (same type, same message).
void
agree(int64_t status, const std::string & msg, MPI_Comm comm)
{
  int size = 0, rank = 0;
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(comm, &rank);
  std::vector<int64_t> all(static_cast<std::size_t>(size));
  MPI_Allgather(&status, 1, MPI_INT64_T, all.data(), 1, MPI_INT64_T, comm);
  for (int r = 0; r < size; ++r)
    if (all[static_cast<std::size_t>(r)] != OK)
    {
      const auto m = bcast_string(rank == r ? msg : std::string(), r, comm);
      if (all[static_cast<std::size_t>(r)] == CONVERGENCE)
        throw ConvergenceError(m);
      throw FatalError(m);
    }
}

/// One result tensor in the schema the ranks share: kind ('o' output, 'v' jvp,
/// 'J' block), names and the trailing shape after the batch axis.
struct Entry
{
  char kind = 'o';
  std::string a, b;
  Shape trail;
};

std::string
encode(const Pieces & p)
{
  std::string s;
  auto add = [&](char kind, const std::string & a, const std::string & b, const at::Tensor & t)
  {
    s += kind;
    s += '\x1f' + a + '\x1f' + b + '\x1f';
    for (int64_t i = 1; i < t.dim(); ++i)
      s += std::to_string(t.size(i)) + ",";
    s += '\n';
  };
  for (const auto & [k, t] : p.out)
    add('o', k, "", t);
  for (const auto & [k, t] : p.jvp)
    add('v', k, "", t);
  for (const auto & [o, row] : p.J)
    for (const auto & [i, t] : row)
      add('J', o, i, t);
  return s;
}

std::vector<Entry>
decode(const std::string & s)
{
  std::vector<Entry> out;
  std::size_t pos = 0;
  while (pos < s.size())
  {
    const auto end = s.find('\n', pos);
    const std::string line = s.substr(pos, end - pos);
    pos = end + 1;
    const auto f1 = line.find('\x1f'), f2 = line.find('\x1f', f1 + 1),
               f3 = line.find('\x1f', f2 + 1);
    Entry e;
    e.kind = line[0];
    e.a = line.substr(f1 + 1, f2 - f1 - 1);
    e.b = line.substr(f2 + 1, f3 - f2 - 1);
    std::size_t q = f3 + 1;
    while (q < line.size())
    {
      const auto c = line.find(',', q);
      e.trail.push_back(std::stoll(line.substr(q, c - q)));
      q = c + 1;
    }
    out.push_back(std::move(e));
  }
  return out;
}

const at::Tensor &
lookup(const Pieces & p, const Entry & e)
{
  if (e.kind == 'o')
    return p.out.at(e.a);
  if (e.kind == 'v')
    return p.jvp.at(e.a);
  return p.J.at(e.a).at(e.b);
}

at::Tensor &
slot(Pieces & p, const Entry & e)
{
  if (e.kind == 'o')
    return p.out[e.a];
  if (e.kind == 'v')
    return p.jvp[e.a];
  return p.J[e.a][e.b];
}

using LocalCall =
    std::function<Pieces(aoti::DispatchedModel &, const TensorMap &, const TensorMap &)>;
} // namespace

struct DistributedModel::Impl
{
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0, size = 1, root = 0;
  std::unique_ptr<aoti::DispatchedModel> local;
  std::vector<double> weights;
  std::map<std::string, Shape> param_shapes;
  /// the CPU, local's dtype, the artifact's path and torch version (device(), dtype(), ...)
  aoti::detail::LoadInfo info;

  at::TensorOptions options() const { return at::TensorOptions().dtype(local->dtype()); }

  // the surface (neml2/aoti/surface.h)
  TensorMap forward(const TensorMap & inputs);
  std::pair<TensorMap, TensorMap> jvp(const TensorMap & inputs, const TensorMap & tangents);
  std::pair<TensorMap, JacobianMap> jacobian(const TensorMap & inputs);
  const Signature & signature() const { return local->signature(); }
  const aoti::detail::LoadInfo & load_info() const { return info; }
  TensorMap & named_parameters() { return local->named_parameters(); }
  void set_parameter(const std::string & name, const at::Tensor & value)
  {
    local->set_parameter(name, value);
  }

  /// One contiguous range per rank, boundaries aligned as DispatchedModel's.
  void split(int64_t n, std::vector<int64_t> & begin, std::vector<int64_t> & count) const
  {
    aoti::HybridScheduler s(weights);
    const auto next =
        s.plan(n, std::vector<aoti::WorkerInfo>(static_cast<std::size_t>(size)), nullptr);
    begin.assign(static_cast<std::size_t>(size), 0);
    count.assign(static_cast<std::size_t>(size), 0);
    for (std::size_t r = 0; r < begin.size(); ++r)
      if (const auto c = next(r))
      {
        begin[r] = c->begin;
        count[r] = c->size();
      }
  }

  /// Root: validate and flatten to contiguous (n, *base); returns the batch shape.
  Shape prepare(const TensorMap & inputs,
                const TensorMap * tangents,
                TensorMap & flat_in,
                TensorMap & flat_tan,
                int64_t & mask) const
  {
    const auto & bases = local->signature().input_trailing_shapes(); // (*sub_batch, *base)
    const auto & names = local->input_names();
    for (const auto & [name, v] : inputs)
      if (v.defined())
      {
        if (v.scalar_type() != local->dtype())
          throw FatalError("input '" + name + "' has dtype " + dtype_name(v.scalar_type()) +
                           " but the model runs in " + dtype_name(local->dtype()));
        if (!v.device().is_cpu())
          throw FatalError("input '" + name + "' is on " + v.device().str() +
                           "; the distributed model takes inputs on the CPU");
      }
    TensorMap all(inputs), tan;
    std::map<std::string, Shape> all_bases(bases);
    mask = 0;
    if (tangents)
      for (const auto & [k, t] : *tangents)
      {
        const auto it = std::find(names.begin(), names.end(), k);
        if (it == names.end())
          throw FatalError("tangent for unknown input '" + k + "'" + aoti::did_you_mean(k, names) +
                           "; the model's inputs are: " + aoti::detail::join(names));
        // nothing is converted or moved implicitly (docs/routes.md, "Input dtype and device")
        if (t.defined() && t.scalar_type() != local->dtype())
          throw FatalError("tangent '" + k + "' has dtype " + dtype_name(t.scalar_type()) +
                           " but the model runs in " + dtype_name(local->dtype()) +
                           " on cpu; inputs are never converted implicitly");
        if (t.defined() && !t.device().is_cpu())
          throw FatalError("tangent '" + k + "' is on " + t.device().str() +
                           "; the distributed model takes inputs on the CPU");
        mask |= int64_t(1) << (it - names.begin());
        tan[k] = t.defined() ? t.to(at::kCPU, local->dtype()) : t;
        all["tangent of " + k] = tan[k];
        all_bases["tangent of " + k] = bases.at(k);
      }
    const Shape batch = aoti::broadcast_batch_shape(all, all_bases);
    for (const auto & [k, v] : inputs)
      flat_in[k] = aoti::flatten_batch(v, batch, bases.at(k)).contiguous();
    for (const auto & [k, v] : tan)
      flat_tan[k] = aoti::flatten_batch(v, batch, bases.at(k)).contiguous();
    for (const auto & [k, shape] : param_shapes)
    {
      const auto & p = local->named_parameters().at(k);
      if (!p.defined() || p.sizes().vec() != shape)
        throw FatalError("parameter '" + k + "' was changed to shape " +
                         (p.defined() ? aoti::shape_str(p.sizes()) : "(undefined)") +
                         " but was compiled with shape " + aoti::shape_str(shape));
    }
    return batch;
  }

  /// This rank's part of `full` (root) along the batch axis.
  at::Tensor scatter(const at::Tensor & full,
                     const Shape & trail,
                     const std::vector<int64_t> & begin,
                     const std::vector<int64_t> & count) const
  {
    const int64_t per = numel(trail);
    std::vector<int> counts(begin.size()), displs(begin.size());
    for (std::size_t r = 0; r < begin.size(); ++r)
    {
      counts[r] = as_count(count[r] * per);
      displs[r] = as_count(begin[r] * per);
    }
    Shape s{count[static_cast<std::size_t>(rank)]};
    s.insert(s.end(), trail.begin(), trail.end());
    at::Tensor mine = at::empty(s, options());
    const auto type = mpi_type(local->dtype());
    MPI_Scatterv(rank == root ? full.data_ptr() : nullptr,
                 counts.data(),
                 displs.data(),
                 type,
                 mine.data_ptr(),
                 counts[static_cast<std::size_t>(rank)],
                 type,
                 root,
                 comm);
    return mine;
  }

  Pieces call(const TensorMap & inputs, const TensorMap * tangents, Shape & batch, LocalCall f)
  {
    // 1. the root validates and says how many points there are
    int64_t head[3] = {OK, 0, 0}; // status, n, tangent mask
    std::string msg;
    TensorMap flat_in, flat_tan;
    if (rank == root)
      try
      {
        batch = prepare(inputs, tangents, flat_in, flat_tan, head[2]);
        head[1] = numel(batch);
      }
      catch (...)
      {
        head[0] = status_of(std::current_exception(), msg);
      }
    MPI_Bcast(head, 3, MPI_INT64_T, root, comm);
    if (head[0] != OK)
      agree(rank == root ? head[0] : OK, msg, comm);
    const int64_t n = head[1];
    if (n == 0) // nothing to split: the root answers alone
      return rank == root ? f(*local, inputs, tangents ? *tangents : TensorMap{}) : Pieces{};

    // 2. the root's parameters
    for (const auto & [k, shape] : param_shapes)
    {
      at::Tensor p = rank == root ? local->named_parameters().at(k).to(at::kCPU).contiguous()
                                  : at::empty(shape, options());
      MPI_Bcast(p.data_ptr(), as_count(numel(shape)), mpi_type(local->dtype()), root, comm);
      if (rank != root)
        local->named_parameters()[k] = p;
    }

    // 3. one range per rank
    std::vector<int64_t> begin, count;
    split(n, begin, count);
    const auto & names = local->input_names();
    const auto & bases = local->signature().input_trailing_shapes(); // (*sub_batch, *base)
    TensorMap in, tan;
    for (std::size_t i = 0; i < names.size(); ++i)
    {
      const auto & k = names[i];
      in[k] = scatter(rank == root ? flat_in.at(k) : at::Tensor(), bases.at(k), begin, count);
      if (head[2] & (int64_t(1) << i))
        tan[k] = scatter(rank == root ? flat_tan.at(k) : at::Tensor(), bases.at(k), begin, count);
    }

    // 4. every rank evaluates its range; a failure anywhere is thrown everywhere
    const auto me = static_cast<std::size_t>(rank);
    Pieces mine;
    int64_t status = OK;
    if (count[me] > 0)
      try
      {
        mine = f(*local, in, tan);
      }
      catch (...)
      {
        status = status_of(std::current_exception(), msg);
        msg = "rank " + std::to_string(rank) + ", points [" + std::to_string(begin[me]) + ", " +
              std::to_string(begin[me] + count[me]) + ") of " + std::to_string(n) + ": " + msg;
      }
    agree(status, msg, comm);

    // 5. the first rank with points tells the others what it computed; the root gathers
    int src = 0;
    while (count[static_cast<std::size_t>(src)] == 0)
      ++src;
    const auto schema = decode(bcast_string(rank == src ? encode(mine) : "", src, comm));
    Pieces res;
    for (const auto & e : schema)
    {
      const int64_t per = numel(e.trail);
      std::vector<int> counts(begin.size()), displs(begin.size());
      for (std::size_t r = 0; r < begin.size(); ++r)
      {
        counts[r] = as_count(count[r] * per);
        displs[r] = as_count(begin[r] * per);
      }
      at::Tensor piece = count[me] > 0 ? lookup(mine, e).contiguous() : at::empty({0}, options());
      at::Tensor full;
      if (rank == root)
      {
        Shape s{n};
        s.insert(s.end(), e.trail.begin(), e.trail.end());
        full = at::empty(s, options());
      }
      const auto type = mpi_type(local->dtype());
      MPI_Gatherv(piece.data_ptr(),
                  counts[me],
                  type,
                  rank == root ? full.data_ptr() : nullptr,
                  counts.data(),
                  displs.data(),
                  type,
                  root,
                  comm);
      if (rank == root)
      {
        Shape s(batch);
        s.insert(s.end(), e.trail.begin(), e.trail.end());
        slot(res, e) = full.reshape(s);
      }
    }
    return res;
  }
};

DistributedModel::DistributedModel(const std::string & path,
                                   MPI_Comm comm,
                                   const std::string & dtype,
                                   const DistributedOptions & options)
    : _impl(std::make_unique<Impl>())
{
  auto & m = *_impl;
  m.comm = comm;
  MPI_Comm_rank(comm, &m.rank);
  MPI_Comm_size(comm, &m.size);
  m.root = options.root;
  std::string msg;
  int64_t status = OK;
  try
  {
    if (m.root < 0 || m.root >= m.size)
      throw FatalError("DistributedOptions::root = " + std::to_string(m.root) +
                       " is not a rank of the communicator (size " + std::to_string(m.size) + ")");
    if (!options.rank_weights.empty() &&
        options.rank_weights.size() != static_cast<std::size_t>(m.size))
      throw FatalError("DistributedOptions::rank_weights has " +
                       std::to_string(options.rank_weights.size()) + " weights for " +
                       std::to_string(m.size) + " ranks");
    m.weights = options.rank_weights;
    aoti::HybridScheduler check(m.weights); // validates the weights
    aoti::DispatchOptions local;
    local.threads_per_worker = options.threads_per_worker;
    if (local.threads_per_worker == 0)
    {
      // the cores of this node shared by its ranks and their CPU workers
      MPI_Comm node;
      MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, m.rank, MPI_INFO_NULL, &node);
      int on_node = 1;
      MPI_Comm_size(node, &on_node);
      MPI_Comm_free(&node);
      const auto cpu = std::count(options.workers.begin(), options.workers.end(), "cpu");
      const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
      local.threads_per_worker =
          std::max(1, cores / (on_node * static_cast<int>(std::max<int64_t>(cpu, 1))));
    }
    m.local = std::make_unique<aoti::DispatchedModel>(
        path, options.workers, options.scheduler, "cpu", dtype, local);
    for (const auto & [k, v] : m.local->named_parameters())
      m.param_shapes[k] = v.sizes().vec();
    m.info = {c10::Device("cpu"), m.local->dtype(), m.local->path(), m.local->built_with_torch()};
  }
  catch (...)
  {
    status = status_of(std::current_exception(), msg);
    msg = "rank " + std::to_string(m.rank) + ": " + msg;
  }
  agree(status, msg, comm);
}

DistributedModel::~DistributedModel() = default;

TensorMap
DistributedModel::Impl::forward(const TensorMap & inputs)
{
  Shape batch;
  return call(inputs,
              nullptr,
              batch,
              [](aoti::DispatchedModel & d, const TensorMap & a, const TensorMap &)
              {
                return Pieces{d.forward(a), {}, {}};
              })
      .out;
}

std::pair<TensorMap, JacobianMap>
DistributedModel::Impl::jacobian(const TensorMap & inputs)
{
  Shape batch;
  auto p = call(inputs,
                nullptr,
                batch,
                [](aoti::DispatchedModel & d, const TensorMap & a, const TensorMap &)
                {
                  auto [out, J] = d.jacobian(a);
                  return Pieces{std::move(out), {}, std::move(J)};
                });
  return {std::move(p.out), std::move(p.J)};
}

std::pair<TensorMap, TensorMap>
DistributedModel::Impl::jvp(const TensorMap & inputs, const TensorMap & tangents)
{
  Shape batch;
  auto p = call(inputs,
                &tangents,
                batch,
                [](aoti::DispatchedModel & d, const TensorMap & a, const TensorMap & t)
                {
                  auto [out, jv] = d.jvp(a, t);
                  return Pieces{std::move(out), std::move(jv), {}};
                });
  return {std::move(p.out), std::move(p.jvp)};
}

int
DistributedModel::rank() const
{
  return _impl->rank;
}

int
DistributedModel::size() const
{
  return _impl->size;
}

int
DistributedModel::root() const
{
  return _impl->root;
}

aoti::DispatchedModel &
DistributedModel::local()
{
  return *_impl->local;
}
} // namespace neml2::mpi

template class neml2::aoti::Surface<neml2::mpi::DistributedModel>;
