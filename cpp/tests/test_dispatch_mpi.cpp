// neml2::mpi::DistributedModel under mpirun -np 2 on the "wobble" artifact
// (make_dispatch_artifact.py): the root's results equal one neml2::aoti::Model
// bit for bit for batch sizes that do not divide evenly (1, 7, 1001), for
// forward / jvp / jacobian and multi-dimensional batches; the other ranks get
// empty maps; the root's parameters reach every rank; a failure on one rank is
// thrown on every rank with its type, naming the rank and its range; bad input
// on the root is a FatalError everywhere. Exit status: failures over all ranks.
#include "check.h"
#include "neml2/aoti/errors.h"
#include "neml2/aoti/model.h"
#include "neml2/mpi/distributed_model.h"

#include <ATen/ATen.h>

#include <iostream>

using namespace neml2::aoti;
using neml2::mpi::DistributedModel;

namespace
{
const at::TensorOptions F64 = at::TensorOptions().dtype(at::kDouble);

bool
same(const TensorMap & a, const TensorMap & b)
{
  if (a.size() != b.size())
    return false;
  for (const auto & [k, v] : b)
    if (!a.count(k) || a.at(k).sizes() != v.sizes() || !at::equal(a.at(k), v))
      return false;
  return true;
}

TensorMap
inputs(std::vector<int64_t> batch, uint64_t seed)
{
  auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  auto eb = batch, sb = batch;
  eb.push_back(6);
  sb.push_back(3); // slip: a sub-batch axis of 3
  return {{"x", at::rand(batch, gen, F64)},
          {"strain", at::rand(eb, gen, F64) - 0.5},
          {"slip", at::rand(sb, gen, F64)}};
}

void
check_batch(DistributedModel & d, Model * ref, std::vector<int64_t> batch, uint64_t seed)
{
  const bool root = d.rank() == d.root();
  // only the root's inputs are read: the other ranks pass nothing
  const auto x = root ? inputs(batch, seed) : TensorMap{};
  TensorMap t;
  if (root)
    t = {{"strain", inputs(batch, seed + 1).at("strain")}};
  const auto out = d.forward(x);
  auto [o2, J] = d.jacobian(x);
  auto [o3, v] = d.jvp(x, t);
  if (!root)
  {
    CHECK(out.empty() && o2.empty() && J.empty() && o3.empty() && v.empty());
    return;
  }
  CHECK(same(out, ref->forward(x)));
  auto [r2, RJ] = ref->jacobian(x);
  CHECK(same(o2, r2));
  CHECK(J.size() == RJ.size());
  for (const auto & [o, row] : RJ)
    CHECK(J.count(o) && same(J.at(o), row));
  auto [r3, rv] = ref->jvp(x, t);
  CHECK(same(o3, r3));
  CHECK(same(v, rv));
}
} // namespace

int
main(int argc, char ** argv)
{
  MPI_Init(&argc, &argv);
  int failures = 0;
  {
    if (argc < 2)
    {
      std::cerr << "usage: mpirun -np 2 test_dispatch_mpi ARTIFACT_DIR\n";
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const std::string art = argv[1];
    DistributedModel d(art);
    CHECK(d.size() >= 2);
    const bool root = d.rank() == d.root();
    std::unique_ptr<Model> ref = root ? std::make_unique<Model>(art) : nullptr;
    for (int64_t n : {1, 7, 1001})
      check_batch(d, ref.get(), {n}, static_cast<uint64_t>(n));
    check_batch(d, ref.get(), {3, 7}, 3);
    check_batch(d, ref.get(), {}, 4);

    // the root's parameter reaches every rank
    if (root)
    {
      d.set_parameter("k", at::scalar_tensor(-0.5, F64));
      ref->set_parameter("k", at::scalar_tensor(-0.5, F64));
    }
    check_batch(d, ref.get(), {1001}, 5);

    // x < 0 is a failed solve in this artifact; the point lies in rank 1's range
    auto bad = root ? inputs({1001}, 6) : TensorMap{};
    if (root)
      bad.at("x")[700] = -1.0;
    CHECK_THROWS(ConvergenceError, d.forward(bad), "rank 1, points [512, 1001) of 1001: ");
    CHECK_THROWS(ConvergenceError, d.jacobian(bad), "did not converge at 1 of 489 points");
    // bad input on the root: a FatalError on every rank
    const auto ok = inputs({7}, 7);
    auto typo = ok;
    typo["strian"] = ok.at("x");
    CHECK_THROWS(FatalError, d.forward(root ? typo : TensorMap{}), "unknown input 'strian'");
    CHECK_THROWS(
        FatalError, d.jvp(ok, root ? TensorMap{{"y", ok.at("x")}} : TensorMap{}), "tangent for");
    // and the model still works afterwards
    check_batch(d, ref.get(), {7}, 8);

    // uneven rank weights
    neml2::mpi::DistributedOptions opts;
    opts.rank_weights = {1.0, 3.0};
    opts.workers = {"cpu", "cpu"};
    if (d.size() == 2)
    {
      DistributedModel w(art, MPI_COMM_WORLD, "float64", opts);
      if (root)
        ref->set_parameter("k", at::scalar_tensor(1.5, F64));
      check_batch(w, ref.get(), {1001}, 9);
    }
    opts.rank_weights = {1.0};
    CHECK_THROWS(FatalError, DistributedModel(art, MPI_COMM_WORLD, "", opts), "rank_weights");
    CHECK_THROWS(FatalError, DistributedModel(art + "/nothing"), "metadata.json not found");
  }
  int local = neml2::test::failures();
  MPI_Allreduce(&local, &failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0)
    std::cout << "test_dispatch_mpi: " << (failures ? "FAILED" : "ok") << " (" << failures
              << " failures over all ranks)\n";
  MPI_Finalize();
  return failures ? 1 : 0;
}
