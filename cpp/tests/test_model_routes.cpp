// cpp-aoti against py-eager: the artifacts and references written by
// `make_artifact.py --routes OUT` (a ctest fixture): elasticity, J2 (isoharden),
// Chaboche and a per-slip crystal model, each at several batch sizes. forward,
// jacobian (the compiled blocks) and jvp must equal py-eager to 1e-10 relative.
//
// References are raw little-endian float64 (NAME.bin) indexed by NAME.json:
// {"tensors": {"input/E": {"shape": [7, 6], "offset": 0}, "output/stress": ...,
// "jacobian/stress/E": ..., "tangent/E": ..., "jvp/stress": ...}}.
// Exits 77 (skipped) when the fixture could not build them (no neml2 packages).
#include "check.h"
#include "neml2/aoti/json.h"
#include "neml2/aoti/model.h"
#include "reference.h"

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

// c10 defines its own (aborting) CHECK; record failures through check.h instead
#define EXPECT(expr) ::neml2::test::report(static_cast<bool>(expr), #expr, __FILE__, __LINE__)

using neml2::test::load_reference;
using neml2::test::slurp;

namespace
{
constexpr double RTOL = 1e-10;

/// With `prefix` = "input/": {"E": ..., "t": ...}.
TensorMap
with_prefix(const TensorMap & all, const std::string & prefix)
{
  TensorMap out;
  for (const auto & [k, v] : all)
    if (k.rfind(prefix, 0) == 0)
      out[k.substr(prefix.size())] = v;
  return out;
}

/// Records a failure (naming `what` and the worst error) unless `a` equals `b` to RTOL
/// relative to max|b|; returns the relative error.
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
  const double scale = b.numel() ? b.abs().max().item<double>() : 0.0;
  const double err = a.numel() ? (a - b).abs().max().item<double>() : 0.0;
  const double rel = scale > 0 ? err / scale : err;
  if (!(rel <= RTOL))
    std::cerr << what << ": relative error " << rel << " > " << RTOL << "\n";
  EXPECT(rel <= RTOL);
  return rel;
}

void
check_case(const std::string & name, Model & m, const fs::path & stem)
{
  const auto ref = load_reference(stem);
  const auto x = with_prefix(ref, "input/");
  const auto t = with_prefix(ref, "tangent/");
  const auto label = name + " " + stem.filename().string();
  double worst = 0;

  const auto out = m.forward(x);
  for (const auto & [k, v] : with_prefix(ref, "output/"))
    worst = std::max(worst, compare(label + " forward " + k, out.at(k), v));

  auto [out2, J] = m.jacobian(x);
  for (const auto & [k, v] : with_prefix(ref, "output/"))
    worst = std::max(worst, compare(label + " jacobian output " + k, out2.at(k), v));
  int blocks = 0;
  for (const auto & [o, i] : m.derivatives())
  {
    const auto key = "jacobian/" + o + "/" + i;
    EXPECT(ref.count(key) == 1);
    if (ref.count(key))
    {
      worst =
          std::max(worst, compare(label + " J[" + o + "][" + i + "]", J.at(o).at(i), ref.at(key)));
      ++blocks;
    }
  }
  EXPECT(blocks > 0);

  auto [out3, jv] = m.jvp(x, t);
  const auto jref = with_prefix(ref, "jvp/");
  EXPECT(!jv.empty());
  for (const auto & [k, v] : jv)
    worst = std::max(worst, compare(label + " jvp " + k, v, jref.at(k)));
  std::cout << label << ": " << blocks << " blocks, " << jv.size()
            << " jvp outputs, worst relative error " << worst << "\n";
}
} // namespace

int
main(int argc, char ** argv)
{
  if (argc != 2)
  {
    std::cerr << "usage: test_model_routes OUTDIR (written by make_artifact.py --routes)\n";
    return 2;
  }
  const fs::path dir(argv[1]);
  if (!fs::exists(dir / "routes.json"))
  {
    std::cout << "test_model_routes: " << (dir / "routes.json").string()
              << " not found (the fixture skipped: no neml2 packages); skipped\n";
    return 77;
  }
  const auto listing_path = (dir / "routes.json").string();
  const Json listing = Json::parse(slurp(listing_path), listing_path);
  int cases = 0;
  for (const auto & entry : listing.as_array(listing_path))
  {
    const auto & name = entry.at("name", listing_path).as_string(listing_path);
    Model m((dir / entry.at("artifact", name).as_string(name)).string(), "cpu", "float64");
    for (const auto & r : entry.at("refs", name).as_array(name))
    {
      check_case(name, m, dir / r.as_string(name));
      ++cases;
    }
  }
  EXPECT(cases > 0);
  return neml2::test::finish("test_model_routes");
}
