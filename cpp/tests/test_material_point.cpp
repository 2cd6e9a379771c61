// neml2::MaterialPoint (neml2/material_point.h) on cpp-aoti (neml2::aoti::Model) and
// cpp-dispatch (neml2::aoti::DispatchedModel, 2 CPU workers) against Python's
// neml2.MaterialPoint on py-eager, on the J2 (isoharden) artifact that
// `make_artifact.py --routes OUT` compiles (strain E, -d stress:E):
//   * state and predictor-only inputs found by the probe;
//   * a load-reversal history (3 points, 9 steps) rolled forward, packed on one route;
//   * six plastic points, one with a NaN strain: converged false there (found by halving
//     the batch, the compiled error names no points), the others equal py-eager's;
//   * OnFailure::raise, and the FatalErrors of a bad strain name and a missing tangent.
// Every stress, tangent and state equals py-eager to 1e-10 relative. Built again with
// NEML2_TEST_EAGER as test_eager_material_point (eager/CMakeLists.txt): the same checks
// on cpp-eager (neml2::eager::Model of the J2 input file, an embedded interpreter).
// Exits 77 (skipped) when the fixture could not build the references.
#include "check.h"
#include "neml2/aoti/json.h"
#include "neml2/material_point.h"
#include "reference.h"
#ifdef NEML2_TEST_EAGER
#include "neml2/eager/model.h"
#else
#include "neml2/aoti/dispatched_model.h"
#include "neml2/aoti/model.h"
#endif

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

using namespace neml2::aoti;
namespace fs = std::filesystem;

#define EXPECT(expr) ::neml2::test::report(static_cast<bool>(expr), #expr, __FILE__, __LINE__)
#define EXPECT_THROW(E, stmt, needle)                                                              \
  ::neml2::test::expect_throw<E>(                                                                  \
      [&]()                                                                                        \
      {                                                                                            \
        stmt;                                                                                      \
      },                                                                                           \
      needle,                                                                                      \
      __FILE__,                                                                                    \
      __LINE__)

using neml2::test::load_reference;
using neml2::test::slurp;

namespace
{
constexpr double RTOL = 1e-10;

double
compare(const std::string & what, const at::Tensor & a, const at::Tensor & b)
{
  if (a.sizes() != b.sizes())
  {
    std::cerr << what << ": shape " << shape_str(a.sizes()) << " != reference "
              << shape_str(b.sizes()) << "\n";
    EXPECT(a.sizes() == b.sizes());
    return INFINITY;
  }
  const double scale = b.abs().max().item<double>();
  const double err = (a - b).abs().max().item<double>();
  const double rel = scale > 0 ? err / scale : err;
  if (!(rel <= RTOL))
    std::cerr << what << ": relative error " << rel << " > " << RTOL << "\n";
  EXPECT(rel <= RTOL);
  return rel;
}

template <class M>
void
check_route(const std::string & route, M & model, const TensorMap & ref)
{
  neml2::MaterialPoint<M> mp(model, "E");
  EXPECT(mp.predictors() == std::vector<std::string>{"flow_rate~1"});
  auto names = mp.state_names();
  std::sort(names.begin(), names.end());
  EXPECT((names == std::vector<std::string>{"equivalent_plastic_strain", "plastic_strain"}));
  EXPECT(mp.state_size() == 7);

  // the history rolled forward: by name on this route, packed on a second one
  const auto E = ref.at("history/E");
  auto state = mp.initial_state({E.size(1)});
  auto packed = mp.pack(mp.initial_state({E.size(1)}));
  double worst = 0;
  for (int64_t k = 1; k < E.size(0); ++k)
  {
    const auto step = "step" + std::to_string(k) + "/";
    const auto r = mp.update(E[k], state, double(k), double(k - 1));
    const auto p = mp.update(E[k], packed, double(k), double(k - 1));
    EXPECT(r.converged.all().template item<bool>());
    EXPECT(r.n_failed() == 0);
    EXPECT(p.packed_state.defined());
    const auto label = route + " " + step;
    worst = std::max(worst, compare(label + "stress", r.stress, ref.at(step + "stress")));
    worst = std::max(worst, compare(label + "tangent", r.tangent, ref.at(step + "tangent")));
    for (const auto & n : mp.state_names())
    {
      worst = std::max(worst, compare(label + n, r.state.at(n), ref.at(step + "state/" + n)));
      worst = std::max(worst,
                       compare(label + n + " (packed)",
                               mp.unpack(p.packed_state).at(n),
                               ref.at(step + "state/" + n)));
    }
    state = mp.roll(r.state);
    packed = mp.roll(p.packed_state);
  }
  EXPECT(state.at("equivalent_plastic_strain").min().template item<double>() > 1e-3);
  std::cout << route << ": history, worst relative difference to py-eager " << worst << "\n";

  // per-point status: a NaN strain at point 4 of 6
  const auto e = ref.at("fail/E");
  const auto s0 = mp.initial_state({6});
  const auto r = mp.update(e, s0);
  const auto conv = ref.at("fail/converged").to(at::kBool);
  EXPECT(r.converged.equal(conv));
  EXPECT(r.n_failed() == 1);
  EXPECT(r.stress.isfinite().all().template item<bool>() &&
         r.tangent.isfinite().all().template item<bool>());
  double wf = compare(route + " fail stress", r.stress, ref.at("fail/stress"));
  wf = std::max(wf, compare(route + " fail tangent", r.tangent, ref.at("fail/tangent")));
  for (const auto & n : mp.state_names())
    wf = std::max(wf, compare(route + " fail " + n, r.state.at(n), ref.at("fail/state/" + n)));
  std::string flags;
  for (int64_t i = 0; i < r.converged.numel(); ++i)
    flags += r.converged[i].template item<bool>() ? "1" : "0";
  std::cout << route << ": NaN point, converged " << flags
            << ", worst relative difference to py-eager " << wf << "\n";
  EXPECT_THROW(
      ConvergenceError, mp.update(e, s0, 1.0, 0.0, {}, neml2::OnFailure::raise), "1 of 6 points");

  // bad use
  EXPECT_THROW(FatalError, neml2::MaterialPoint<M>{model}, "strain='strain'");
  EXPECT_THROW(
      FatalError,
      (neml2::MaterialPoint<M>{model, "E", "stress", "t", std::vector<std::string>{"t~1"}}),
      "predictors names 't~1'");
  EXPECT_THROW(FatalError,
               (mp.update(e, s0, 1.0, 0.0, {{"plastic_strain~1", e}})),
               "given by strain, time or state");
  // an explicit empty predictor list: flow_rate is state too
  neml2::MaterialPoint<M> all(model, "E", "stress", "t", std::vector<std::string>{});
  EXPECT(all.predictors().empty() && all.state_names().size() == 3);
}
} // namespace

int
main(int argc, char ** argv)
{
  if (argc != 2)
  {
    std::cerr << "usage: test_material_point OUTDIR (written by make_artifact.py --routes)\n";
    return 2;
  }
  const fs::path dir(argv[1]);
  const auto listing_path = (dir / "routes.json").string();
  if (!fs::exists(listing_path))
  {
    std::cout << "test_material_point: " << listing_path << " not found; skipped\n";
    return 77;
  }
  const Json listing = Json::parse(slurp(listing_path), listing_path);
  std::string art, stem, source;
  for (const auto & entry : listing.as_array(listing_path))
    if (entry.at("name", listing_path).as_string(listing_path) == "j2")
    {
      art = (dir / entry.at("artifact", "j2").as_string("j2")).string();
      stem = (dir / entry.at("material_point", "j2").as_string("j2")).string();
      source = entry.at("source", "j2").as_string("j2");
    }
  if (art.empty())
  {
    std::cout << "test_material_point: no j2 case in " << listing_path << "; skipped\n";
    return 77;
  }
  const auto ref = load_reference(stem);

#ifdef NEML2_TEST_EAGER
  // cpp-eager: the J2 input file itself, run by the embedded interpreter (NEML2_PYTHON)
  auto eager = neml2::eager::load_model(source, "model");
  check_route("cpp-eager", eager, ref);
  return neml2::test::finish("test_eager_material_point");
#else
  Model model(art, "cpu", "float64");
  check_route("cpp-aoti", model, ref);
  DispatchedModel dispatched(art, {"cpu", "cpu"});
  check_route("cpp-dispatch", dispatched, ref);

  // a model without the (stress, strain) block: the elasticity case, if built, has
  // stress:strain; the J2 artifact has stress:E only
  EXPECT_THROW(FatalError,
               (neml2::MaterialPoint<Model>{model, "E", "plastic_strain"}),
               "-d plastic_strain:E");
  return neml2::test::finish("test_material_point");
#endif
}
