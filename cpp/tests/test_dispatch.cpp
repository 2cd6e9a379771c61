// neml2::aoti::DispatchedModel on the "wobble" artifact (make_dispatch_artifact.py,
// a ctest fixture): with 2 CPU workers and every scheduler, forward / jvp /
// jacobian equal a single neml2::aoti::Model for batch sizes that do not divide
// evenly (1, 7, 1001) and for multi-dimensional and broadcast batches; a failing
// chunk raises its own exception type naming its range; parameters reach every
// worker; schedulers cover the batch exactly; bad options are FatalErrors. Also
// neml2::aoti::Model::points_per_call (one Model solving its batch in slices).
#include "check.h"
#include "neml2/aoti/dispatched_model.h"
#include "neml2/aoti/errors.h"

#include <ATen/ATen.h>

#include <filesystem>
#include <fstream>
#include <iostream>

using namespace neml2::aoti;
namespace fs = std::filesystem;

namespace
{
const at::TensorOptions F64 = at::TensorOptions().dtype(at::kDouble);
int bitwise = 0, close_only = 0;

/// Identical, or equal to 1e-14 (relative to max(1, |b|)); counts which.
bool
same(const at::Tensor & a, const at::Tensor & b)
{
  if (a.sizes() != b.sizes() || a.scalar_type() != b.scalar_type())
    return false;
  if (at::equal(a, b))
  {
    ++bitwise;
    return true;
  }
  const bool ok = ((a - b).abs() <= 1e-14 * b.abs().clamp_min(1.0)).all().item<bool>();
  close_only += ok;
  return ok;
}

bool
same(const TensorMap & a, const TensorMap & b)
{
  if (a.size() != b.size())
    return false;
  for (const auto & [k, v] : b)
    if (!a.count(k) || !same(a.at(k), v))
      return false;
  return true;
}

/// x at batch `xb`; strain and the per-slip input slip (sub-batch 3) at batch `eb`.
TensorMap
inputs(std::vector<int64_t> xb, std::vector<int64_t> eb, uint64_t seed)
{
  auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  auto sb = eb;
  eb.push_back(6);
  sb.push_back(3);
  return {{"x", at::rand(xb, gen, F64)},
          {"strain", at::rand(eb, gen, F64) - 0.5},
          {"slip", at::rand(sb, gen, F64)}};
}

/// forward, jvp (both tangents, one tangent) and jacobian agree with `ref`.
void
check_same(DispatchedModel & d,
           Model & ref,
           const TensorMap & x,
           const std::string & what,
           bool require_bitwise = true)
{
  const int close_at_start = close_only;
  std::cout << "  " << what;
  int before = close_only;
  auto note = [&](const char * op)
  {
    if (close_only != before)
      std::cout << " [" << op << ": " << close_only - before << " not bitwise]";
    before = close_only;
  };
  CHECK(same(d.forward(x), ref.forward(x)));
  note("forward");
  auto [o1, J1] = d.jacobian(x);
  auto [o2, J2] = ref.jacobian(x);
  CHECK(same(o1, o2));
  CHECK(J1.size() == J2.size());
  for (const auto & [o, row] : J2)
    CHECK(J1.count(o) && same(J1.at(o), row));
  note("jacobian");
  auto gen = at::make_generator<at::CPUGeneratorImpl>(7);
  TensorMap t{{"x", at::rand(x.at("x").sizes(), gen, F64)},
              {"strain", at::rand(x.at("strain").sizes(), gen, F64)}};
  auto [o3, v3] = d.jvp(x, t);
  auto [o4, v4] = ref.jvp(x, t);
  CHECK(same(o3, o4));
  CHECK(same(v3, v4));
  auto [o5, v5] = d.jvp(x, {{"strain", t.at("strain")}});
  auto [o6, v6] = ref.jvp(x, {{"strain", t.at("strain")}});
  CHECK(same(v5, v6));
  // the sub-batch input: only g has its block
  const auto ts = at::rand(x.at("slip").sizes(), gen, F64);
  auto [o7, v7] = d.jvp(x, {{"slip", ts}});
  auto [o8, v8] = ref.jvp(x, {{"slip", ts}});
  CHECK(v7.size() == 1 && v7.count("g") && same(v7, v8));
  note("jvp");
  std::cout << "\n";
  // chunk boundaries on multiples of CHUNK_ALIGNMENT: the very same bits
  if (require_bitwise)
    CHECK(close_only == close_at_start);
}

/// All chunks a plan hands out, worker by worker.
std::vector<std::pair<std::size_t, Chunk>>
drain(Scheduler & s, int64_t n, std::size_t nw)
{
  std::vector<WorkerInfo> w(nw, WorkerInfo{"cpu", 1});
  Calibrate cal = [nw](int64_t)
  {
    std::vector<double> r(nw);
    for (std::size_t i = 0; i < nw; ++i)
      r[i] = 1.0 + static_cast<double>(i); // the later workers "faster"
    return r;
  };
  auto next = s.plan(n, w, cal);
  std::vector<std::pair<std::size_t, Chunk>> out;
  for (std::size_t i = 0; i < nw; ++i)
    while (auto c = next(i))
      out.emplace_back(i, *c);
  return out;
}

/// The chunks cover [0, n) exactly once.
bool
covers(const std::vector<std::pair<std::size_t, Chunk>> & chunks, int64_t n)
{
  std::vector<int> hit(static_cast<std::size_t>(n), 0);
  for (const auto & [w, c] : chunks)
  {
    if (c.begin < 0 || c.end > n || c.size() <= 0)
      return false;
    for (auto i = c.begin; i < c.end; ++i)
      ++hit[static_cast<std::size_t>(i)];
  }
  return std::all_of(hit.begin(),
                     hit.end(),
                     [](int h)
                     {
                       return h == 1;
                     });
}

void
test_schedulers()
{
  for (int64_t n : {1, 7, 1001})
    for (std::size_t nw : {1, 2, 3})
    {
      RoundRobinScheduler rr, rr5(5);
      HybridScheduler hy({}, 4), hyw(std::vector<double>(nw, 2.0));
      QueueScheduler q, q3(3);
      for (Scheduler * s : std::vector<Scheduler *>{&rr, &rr5, &hy, &hyw, &q, &q3})
      {
        const auto chunks = drain(*s, n, nw);
        CHECK(covers(chunks, n));
      }
    }
  // round-robin of 5-point chunks on 2 workers: worker 1 gets the odd chunks
  RoundRobinScheduler rr5(5);
  const auto c = drain(rr5, 23, 2);
  CHECK(c.size() == 5 && c[0].second.end == 5 && c[1].second.begin == 10);
  CHECK(c[3].first == 1 && c[3].second.begin == 5 && c[4].second.begin == 15);
  // default boundaries are multiples of CHUNK_ALIGNMENT
  RoundRobinScheduler rr;
  const auto r = drain(rr, 1001, 2);
  CHECK(r.size() == 2 && r[0].second.end == 512 && r[1].second.end == 1001);
  CHECK(drain(rr, 7, 2).size() == 1);
  // hybrid with weights 3:1 splits 1001 points near 751, at 768; calibration uses the rates
  HybridScheduler hw({3.0, 1.0});
  const auto h = drain(hw, 1001, 2);
  CHECK(h.size() == 2 && h[0].second.end == 768 && h[1].second.end == 1001);
  HybridScheduler hc({}, 10);
  CHECK(hc.weights().empty());
  drain(hc, 5, 2); // too small to calibrate: even split, nothing measured
  CHECK(hc.weights().empty());
  const auto hm = drain(hc, 300, 2);
  CHECK(hc.weights() == std::vector<double>({1.0, 2.0}) && hm[0].second.end == 128);
  // the queue hands out fixed-size chunks in order
  QueueScheduler q(100);
  const auto qc = drain(q, 1001, 2);
  CHECK(qc.size() == 11 && qc.back().second.begin == 1000 && qc.back().second.end == 1001);
  CHECK_THROWS(FatalError, make_scheduler("fastest"), "unknown scheduler 'fastest'");
  CHECK_THROWS(FatalError, HybridScheduler({-1.0, 1.0}), "weights must be finite and >= 0");
  CHECK_THROWS(FatalError, QueueScheduler(-3), "chunk_size must be >= 0");
}

/// A scheduler that forgets the last point.
class Leaky : public Scheduler
{
public:
  std::string name() const override { return "leaky"; }
  ChunkSource plan(int64_t n, const std::vector<WorkerInfo> &, const Calibrate &) override
  {
    auto done = std::make_shared<bool>(false);
    return [n, done](std::size_t w) -> std::optional<Chunk>
    {
      if (w != 0 || *done || n < 2)
        return std::nullopt;
      *done = true;
      return Chunk{0, n - 1};
    };
  }
};

void
test_identical(const std::string & art)
{
  Model ref(art);
  for (const std::string sched : {"round-robin", "hybrid", "queue"})
  {
    std::shared_ptr<Scheduler> s =
        sched == "hybrid" ? std::make_shared<HybridScheduler>(std::vector<double>{}, 64)
                          : make_scheduler(sched);
    DispatchedModel d(art, {"cpu", "cpu"}, s);
    CHECK(d.workers().size() == 2 && d.workers()[1].device == "cpu");
    CHECK(d.scheduler().name() == sched);
    for (int64_t n : {1, 7, 1001})
      check_same(d,
                 ref,
                 inputs({n}, {n}, static_cast<uint64_t>(n)),
                 sched + " batch " + std::to_string(n));
    check_same(d, ref, inputs({2, 3}, {2, 3}, 5), sched + " batch (2, 3)");
    check_same(d, ref, inputs({}, {}, 6), sched + " unbatched");
    check_same(d, ref, inputs({}, {5, 1}, 8), sched + " broadcast () with (5, 1)");
    check_same(d, ref, inputs({4}, {3, 1}, 9), sched + " broadcast (4,) with (3, 1)");
    if (sched == "hybrid")
    {
      const auto w = dynamic_cast<HybridScheduler &>(d.scheduler()).weights();
      CHECK(w.size() == 2 && w[0] > 0 && w[1] > 0); // calibrated on the 1001-point call
    }
  }
  // small fixed chunks on three workers, and chunks smaller than the workers
  DispatchedModel q(art, {"cpu", "cpu", "cpu"}, std::make_shared<QueueScheduler>(3));
  check_same(q, ref, inputs({1001}, {1001}, 11), "queue of 3-point chunks, 3 workers", false);
  DispatchedModel r(art, {"cpu", "cpu"}, std::make_shared<RoundRobinScheduler>(10));
  check_same(r, ref, inputs({1001}, {1001}, 12), "round-robin of 10-point chunks", false);
  DispatchedModel one(art, {"cpu"});
  check_same(one, ref, inputs({7}, {7}, 13), "one worker");
}

void
test_parameters(const std::string & art)
{
  Model ref(art);
  DispatchedModel d(art, {"cpu", "cpu"});
  CHECK(d.named_parameters().size() == 1);
  CHECK(d.named_parameters().at("k").item<double>() == 1.5);
  const auto x = inputs({1001}, {1001}, 21);
  d.set_parameter("k", at::scalar_tensor(3.0, F64));
  ref.set_parameter("k", at::scalar_tensor(3.0, F64));
  CHECK(same(d.forward(x), ref.forward(x)));
  d.named_parameters().at("k").fill_(-2.0); // in place: every worker sees it
  ref.named_parameters().at("k").fill_(-2.0);
  CHECK(same(d.forward(x), ref.forward(x)));
  CHECK_THROWS(
      FatalError, d.set_parameter("nu", at::scalar_tensor(1.0, F64)), "no promoted parameter");
  CHECK_THROWS(FatalError, d.set_parameter("k", at::ones({2}, F64)), "compiled with shape");
}

void
test_failures(const std::string & art)
{
  auto x = inputs({1001}, {1001}, 31);
  x.at("x")[600] = -1.0; // the artifact reports x < 0 as a failed solve
  DispatchedModel rr(art, {"cpu", "cpu"});
  CHECK_THROWS(ConvergenceError, rr.forward(x), "points [512, 1001) of 1001 (worker 1, cpu): ");
  CHECK_THROWS(ConvergenceError, rr.jacobian(x), "did not converge at 1 of 489 points");
  DispatchedModel q(art, {"cpu", "cpu"}, std::make_shared<QueueScheduler>(100));
  CHECK_THROWS(ConvergenceError, q.jvp(x, {{"x", x.at("x")}}), "points [600, 700) of 1001");
  try
  {
    q.forward(x);
  }
  catch (const Exception & e)
  {
    CHECK(e.recoverable());
  }
  x.at("x")[5] = -1.0; // two failing chunks: the first one is named
  CHECK_THROWS(ConvergenceError, q.forward(x), "points [0, 100) of 1001");
  // the model still works after a failure
  const auto ok = inputs({1001}, {1001}, 32);
  Model ref(art);
  CHECK(same(q.forward(ok), ref.forward(ok)));

  // a damaged graph: every chunk fails to load it, FatalError names the first range and the file
  const auto bad = fs::temp_directory_path() / "neml2_test_dispatch_bad";
  fs::remove_all(bad);
  fs::copy(art, bad, fs::copy_options::recursive);
  std::ofstream(bad / "cpu" / "float64" / "jacobian.pt2") << "not a package";
  DispatchedModel d(bad.string(), {"cpu", "cpu"});
  CHECK(same(d.forward(ok), ref.forward(ok)));
  // (the worker that fails first stops the other, so either range may be named)
  CHECK_THROWS(FatalError, d.jacobian(ok), ") of 1001 (worker ");
  CHECK_THROWS(FatalError, d.jacobian(ok), "jacobian.pt2: cannot load the compiled graph");
  fs::remove_all(bad);

  DispatchedModel leaky(art, {"cpu", "cpu"}, std::make_shared<Leaky>());
  CHECK_THROWS(FatalError, leaky.forward(ok), "scheduler 'leaky' covered 1000 of 1001 points");
}

/// Model::points_per_call: a graph that solves runs on slices of the batch, joined in
/// batch order, equal to one call; the failed points of every slice are counted; a
/// negative count is a FatalError.
void
test_points_per_call(const std::string & art)
{
  Model one(art);
  CHECK(one.points_per_call() == DEFAULT_POINTS_PER_CALL);
  one.set_points_per_call(0);
  Model sliced(art);
  sliced.set_points_per_call(100);
  CHECK(sliced.points_per_call() == 100);
  for (const int64_t n : {1, 100, 101, 1001})
  {
    const auto x = inputs({n}, {n}, 40 + static_cast<uint64_t>(n));
    CHECK(same(sliced.forward(x), one.forward(x)));
    const auto [out, J] = sliced.jacobian(x);
    const auto [rout, rJ] = one.jacobian(x);
    CHECK(same(out, rout));
    CHECK(J.size() == rJ.size());
    for (const auto & [o, row] : rJ)
      CHECK(J.count(o) && same(J.at(o), row));
  }
  // a batch of (3, 5) points flattened, in slices of 4: the outputs keep its shape
  sliced.set_points_per_call(4);
  const auto xb = inputs({3, 5}, {3, 5}, 44);
  CHECK(same(sliced.forward(xb), one.forward(xb)));
  CHECK(sliced.forward(xb).at("g").sizes() == c10::IntArrayRef({3, 5, 3}));
  sliced.set_points_per_call(100);
  auto x = inputs({1001}, {1001}, 45);
  x.at("x")[5] = -1.0; // the artifact reports x < 0 as a failed solve: two slices fail
  x.at("x")[950] = -1.0;
  CHECK_THROWS(ConvergenceError,
               sliced.forward(x),
               "did not converge at 2 of 1001 points (solved 100 points per call, "
               "points_per_call; ");
  CHECK_THROWS(ConvergenceError, one.forward(x), "did not converge at 2 of 1001 points (the ");
  CHECK_THROWS(FatalError, sliced.set_points_per_call(-1), "points_per_call must be 0");
  CHECK(sliced.points_per_call() == 100);
}

void
test_errors(const std::string & art)
{
  DispatchedModel d(art, {"cpu", "cpu"});
  const auto x = inputs({7}, {7}, 41);
  CHECK_THROWS(FatalError, d.forward({{"x", x.at("x")}}), "missing input 'slip'");
  auto typo = x, f32 = x, b3 = x, slip2 = x;
  typo["strian"] = x.at("strain");
  f32["x"] = x.at("x").to(at::kFloat);
  b3["x"] = at::rand({3}, F64);
  slip2["slip"] = at::rand({7, 2}, F64);
  CHECK_THROWS(FatalError, d.forward(typo), "unknown input 'strian'");
  CHECK_THROWS(
      FatalError, d.forward(f32), "input 'x' has dtype float32 but the model runs in float64");
  CHECK_THROWS(FatalError, d.forward(b3), "does not broadcast");
  CHECK_THROWS(FatalError, d.forward(slip2), "input 'slip' has shape (7, 2)");
  CHECK_THROWS(FatalError, d.jvp(x, {{"y", x.at("x")}}), "tangent for unknown input 'y'");
  CHECK_THROWS(FatalError,
               d.jvp(x, {{"strian", x.at("strain")}}),
               "tangent for unknown input 'strian' (did you mean 'strain'?)");
  CHECK_THROWS(FatalError,
               d.jvp(x, {{"strain", x.at("strain").to(at::kFloat)}}),
               "tangent 'strain' has dtype float32 but the model runs in float64");
  CHECK_THROWS(
      FatalError,
      d.forward(TensorMap{{"x", x.at("x")}, {"strian", x.at("strain")}, {"slip", x.at("slip")}}),
      "unknown input 'strian' (did you mean 'strain'?)");
  CHECK_THROWS(FatalError, d.jvp(x, {{"strain", at::rand({3, 6}, F64)}}), "tangent of strain");
  CHECK_THROWS(FatalError, DispatchedModel(art, {}), "at least one worker");
  CHECK_THROWS(FatalError, DispatchedModel(art, {"cpu", "tpu"}), "worker 'tpu' is not a device");
  CHECK_THROWS(
      FatalError, DispatchedModel(art, {"cuda:7"}), "worker 'cuda:7': no such CUDA device");
  CHECK_THROWS(FatalError, DispatchedModel(art, {"cpu"}, nullptr, "cpu", "float32"), "no target");
  CHECK_THROWS(FatalError, DispatchedModel("/nonexistent/art", {"cpu"}), "metadata.json not found");
  const auto devs = available_devices();
  CHECK(!devs.empty() && devs.front() == "cpu");
}

/// The surface reads the workers' Model's signature: the same names, shapes (the sub-batch
/// axis of slip and g included) and pairs as one Model of the artifact.
void
test_signature(const std::string & art)
{
  Model ref(art);
  DispatchedModel d(art, {"cpu", "cpu"});
  CHECK(d.input_names() == ref.input_names());
  CHECK(d.output_names() == ref.output_names());
  CHECK(d.variable_types() == ref.variable_types());
  CHECK(d.input_base_shapes() == ref.input_base_shapes());
  CHECK(d.output_base_shapes() == ref.output_base_shapes());
  CHECK(d.derivatives() == ref.derivatives());
  CHECK((d.input_sub_batch_shapes() ==
         std::map<std::string, Shape>{{"x", {}}, {"strain", {}}, {"slip", {3}}}));
  CHECK((d.output_sub_batch_shapes() ==
         std::map<std::string, Shape>{{"y", {}}, {"s", {}}, {"g", {3}}}));
  CHECK(d.output_sub_batch_shapes() == ref.output_sub_batch_shapes());
  CHECK((d.input_sub_batch_ndim() == std::map<std::string, int64_t>{{"slip", 1}}));
  CHECK(&d.input_names() == &d.signature().input_names());
  CHECK_THROWS(FatalError,
               d.input_base_shape("slp"),
               "no input variable 'slp' (did you mean 'slip'?); the model's inputs are: x, "
               "strain, slip");
}

void
test_threads(const std::string & art)
{
  DispatchOptions two;
  two.threads_per_worker = 2;
  DispatchedModel d(art, {"cpu", "cpu"}, nullptr, "cpu", "", two);
  CHECK(d.workers()[0].threads == 2 && d.workers()[1].threads == 2);
  DispatchedModel a(art, {"cpu", "cpu", "cpu", "cpu"});
  CHECK(a.workers()[3].threads >= 1);
}
} // namespace

int
main(int argc, char ** argv)
{
  if (argc < 2)
  {
    std::cerr << "usage: test_dispatch ARTIFACT_DIR\n";
    return 2;
  }
  const std::string art = argv[1];
  test_schedulers();
  test_identical(art);
  test_parameters(art);
  test_failures(art);
  test_points_per_call(art);
  test_errors(art);
  test_threads(art);
  test_signature(art);
  std::cout << "results bitwise identical: " << bitwise << ", equal to 1e-14 only: " << close_only
            << "\n";
  return neml2::test::finish("test_dispatch");
}
