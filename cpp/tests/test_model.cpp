// neml2::aoti::Model on the "scale" artifact built by make_artifact.py (a ctest
// fixture): values vs the closed form at batch 1, 7, 1000, unbatched and 2-D
// batches; broadcasting; jvp / jacobian pairs; parameters; every bad input and
// bad artifact a FatalError naming the variable or file.
#include "check.h"
#include "neml2/aoti/errors.h"
#include "neml2/aoti/json.h"
#include "neml2/aoti/model.h"

#include <ATen/ATen.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

using namespace neml2::aoti;
namespace fs = std::filesystem;

namespace
{
const at::TensorOptions F64 = at::TensorOptions().dtype(at::kDouble);

bool
close(const at::Tensor & a, const at::Tensor & b)
{
  return a.sizes() == b.sizes() && at::allclose(a, b, 1e-12, 1e-14);
}

at::Tensor
trace_vec()
{
  return at::tensor(std::vector<double>{1, 1, 1, 0, 0, 0}, F64);
}

void
check_values(Model & m, std::vector<int64_t> batch, double k)
{
  std::vector<int64_t> sb(batch);
  sb.push_back(6);
  const auto x = at::rand(batch, F64);
  const auto e = at::rand(sb, F64);
  const auto tr = trace_vec();
  const auto y = k * x * (e * tr).sum(-1);
  const auto s = x.unsqueeze(-1) * e;
  auto out = m.forward({{"x", x}, {"strain", e}});
  CHECK(close(out.at("y"), y));
  CHECK(close(out.at("s"), s));
  auto [out2, J] = m.jacobian({{"x", x}, {"strain", e}});
  CHECK(close(out2.at("s"), s));
  CHECK(close(J.at("y").at("strain"), (k * x).unsqueeze(-1) * tr));
  CHECK(close(J.at("s").at("x"), e));
  CHECK(J.at("y").count("x") == 0);
  const auto t = at::rand(sb, F64);
  auto [out3, jv] = m.jvp({{"x", x}, {"strain", e}}, {{"strain", t}});
  CHECK(jv.size() == 1);
  CHECK(close(jv.at("y"), ((k * x).unsqueeze(-1) * tr * t).sum(-1)));
}

/// The constructor forms: torch's Device / ScalarType (the documented spelling) and
/// strings (ours) load the same target by one code path.
void
check_constructors(const fs::path & art)
{
  const auto x = at::rand({5}, F64);
  const auto e = at::rand({5, 6}, F64);
  Model ref(art.string());
  const auto want = ref.forward({{"x", x}, {"strain", e}});
  auto same = [&](Model & m)
  {
    CHECK(m.device().is_cpu());
    CHECK(m.dtype() == at::kDouble);
    CHECK((m.input_names() == std::vector<std::string>{"x", "strain"}));
    CHECK((m.input_base_shapes() == std::vector<Shape>{{}, {6}}));
    const auto got = m.forward({{"x", x}, {"strain", e}});
    CHECK(close(got.at("y"), want.at("y")));
    CHECK(close(got.at("s"), want.at("s")));
  };
  {
    Model m(art.string(), at::kCPU); // dtype defaults to float64
    same(m);
  }
  {
    Model m(art.string(), at::Device("cpu"), at::kDouble);
    same(m);
  }
  {
    Model m((art / "metadata.json").string(), at::Device(at::kCPU, 0), at::kDouble);
    same(m);
  }
  {
    Model m(art.string(), std::string("cpu"));
    same(m);
  }
  {
    Model m(art.string(), "cpu:0", "float64");
    same(m);
  }
  // targets the artifact lacks: the message lists the compiled ones
  CHECK_THROWS(FatalError,
               Model(art.string(), at::kCPU, at::kFloat),
               "no target for device cpu and dtype float32; compiled targets: cpu/float64");
  CHECK_THROWS(FatalError,
               Model(art.string(), at::Device("cuda:1")),
               "no target for device cuda and dtype float64; compiled targets: cpu/float64");
  CHECK_THROWS(FatalError,
               Model(art.string(), at::kCPU, at::kHalf),
               "no target for device cpu and dtype float16");
  CHECK_THROWS(
      FatalError, Model(art.string(), "cuda:1", ""), "no target for device cuda and dtype any");
  CHECK_THROWS(FatalError, Model(art.string(), "gpu:x"), "invalid device 'gpu:x'");
  CHECK_THROWS(FatalError, Model("/nonexistent/artifact", at::kCPU), "metadata.json not found");
}

std::string
read(const fs::path & p)
{
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// A copy of the artifact whose metadata.json is `text`.
fs::path
edited(const fs::path & art, const std::string & name, const std::string & text)
{
  const auto dst = fs::temp_directory_path() / ("neml2_test_model_" + name);
  fs::remove_all(dst);
  fs::copy(art, dst, fs::copy_options::recursive);
  std::ofstream(dst / "metadata.json") << text;
  return dst;
}

std::string
replace(std::string s, const std::string & from, const std::string & to)
{
  const auto i = s.find(from);
  if (i != std::string::npos)
    s.replace(i, from.size(), to);
  return s;
}
} // namespace

int
main(int argc, char ** argv)
{
  if (argc < 2)
  {
    std::cerr << "usage: test_model ARTIFACT_DIR\n";
    return 2;
  }
  const fs::path art = argv[1];
  at::manual_seed(0);

  Model m(art.string());
  CHECK((m.input_names() == std::vector<std::string>{"x", "strain"}));
  CHECK((m.output_names() == std::vector<std::string>{"y", "s"}));
  // positional, in input_names() / output_names() order
  CHECK((m.input_base_shapes() == std::vector<Shape>{{}, {6}}));
  CHECK((m.output_base_shapes() == std::vector<Shape>{{}, {6}}));
  // by name
  CHECK((m.input_base_shape("strain") == Shape{6}));
  CHECK((m.input_base_shape("x") == Shape{}));
  CHECK((m.output_base_shape("s") == Shape{6}));
  CHECK_THROWS(FatalError,
               m.input_base_shape("strian"),
               "no input variable 'strian' (did you mean 'strain'?); the model's inputs are: x, "
               "strain");
  CHECK_THROWS(FatalError,
               m.output_base_shape("x"),
               "no output variable 'x'; the model's outputs are: y, s");
  CHECK(m.variable_types().at("strain") == "SR2");
  CHECK(m.dtype() == at::kDouble);
  CHECK(m.device().is_cpu());
  CHECK(m.derivatives().size() == 2);
  CHECK(m.named_parameters().count("k") == 1);
  Model via_meta((art / "metadata.json").string(), "cpu", "float64");
  CHECK(via_meta.output_names().size() == 2);

  for (const auto & b : std::vector<std::vector<int64_t>>{{1}, {7}, {1000}, {}, {2, 3}})
    check_values(m, b, 2.0);
  check_constructors(art);

  // Broadcasting: an unbatched x against batched strains.
  {
    auto out = m.forward({{"x", at::full({}, 3.0, F64)}, {"strain", at::rand({4, 1, 6}, F64)}});
    CHECK((out.at("s").sizes().vec() == Shape{4, 1, 6}));
    CHECK((out.at("y").sizes().vec() == Shape{4, 1}));
  }

  // Parameters: mutable in place, or replaced wholesale.
  m.named_parameters().at("k").fill_(5.0);
  check_values(m, {3}, 5.0);
  m.set_parameter("k", at::full({}, -1.0, F64));
  check_values(m, {3}, -1.0);
  CHECK_THROWS(FatalError, m.set_parameter("E", at::ones({}, F64)), "no promoted parameter 'E'");
  CHECK_THROWS(FatalError, m.set_parameter("k", at::ones({2}, F64)), "compiled with shape ()");
  // never cast, always finite; the model keeps its value
  CHECK_THROWS(FatalError,
               m.set_parameter("k", at::ones({}, at::kLong)),
               "parameter 'k' is float64: the value has dtype int64, which is not floating-point");
  CHECK_THROWS(FatalError,
               m.set_parameter("k", at::full({}, std::nan(""), F64)),
               "parameter 'k' has the non-finite value nan: a parameter must be finite");
  check_values(m, {3}, -1.0);

  // Bad inputs.
  const auto x = at::rand({3}, F64);
  const auto e = at::rand({3, 6}, F64);
  CHECK_THROWS(FatalError, m.forward({{"x", x}}), "missing input 'strain'");
  CHECK_THROWS(
      FatalError,
      m.forward({{"x", x}, {"strian", e}}),
      "unknown input 'strian' (did you mean 'strain'?); the model's inputs are: x, strain");
  CHECK_THROWS(FatalError,
               m.forward({{"x", x}, {"strain", at::rand({3, 5}, F64)}}),
               "input 'strain' has shape (3, 5) but must end in its base shape (6,)");
  CHECK_THROWS(FatalError,
               m.forward({{"x", x.to(at::kFloat)}, {"strain", e}}),
               "input 'x' has dtype float32 but the model was compiled for float64");
  CHECK_THROWS(
      FatalError, m.forward({{"x", at::rand({4}, F64)}, {"strain", e}}), "does not broadcast");
  // Pairs that were not compiled.
  CHECK_THROWS(FatalError,
               m.jvp({{"x", x}, {"strain", e}}, {{"x", x}, {"strain", e}}),
               "no output has compiled derivatives w.r.t. all of x, strain");
  CHECK_THROWS(
      FatalError, m.jvp({{"x", x}, {"strain", e}}, {{"T", x}}), "tangent for unknown input 'T'");
  // Nothing is converted or moved implicitly: inputs and tangents of another dtype or device.
  CHECK_THROWS(FatalError,
               m.forward({{"x", x}, {"strain", e.to(at::kBFloat16)}}),
               "input 'strain' has dtype bfloat16 but the model was compiled for float64");
  CHECK_THROWS(FatalError,
               m.forward({{"x", x}, {"strain", e.to(at::kComplexDouble)}}),
               "input 'strain' has dtype complex128");
  CHECK_THROWS(
      FatalError, m.forward({{"x", x.to(at::kLong)}, {"strain", e}}), "input 'x' has dtype int64");
  CHECK_THROWS(FatalError,
               m.forward({{"x", x}, {"strain", at::empty({3, 6}, e.options().device("meta"))}}),
               "input 'strain' is on meta but the model was compiled for cpu");
  CHECK_THROWS(FatalError,
               m.jvp({{"x", x}, {"strain", e}}, {{"strain", e.to(at::kFloat)}}),
               "tangent 'strain' has dtype float32 but the model was compiled for float64");
  CHECK_THROWS(FatalError,
               m.jvp({{"x", x}, {"strain", e}}, {{"strain", e.to(at::kComplexDouble)}}),
               "tangent 'strain' has dtype complex128");
  CHECK_THROWS(
      FatalError,
      m.jvp({{"x", x}, {"strain", e}}, {{"strain", at::empty({3, 6}, e.options().device("meta"))}}),
      "tangent 'strain' is on meta");
  CHECK_THROWS(FatalError,
               m.jvp({{"x", x}, {"strain", e}}, {{"strian", e}}),
               "tangent for unknown input 'strian' (did you mean 'strain'?)");
  CHECK_THROWS(FatalError,
               m.jvp({{"x", x}, {"strain", e}}, {{"strain", at::rand({2, 6}, F64)}}),
               "tangent of 'strain' has batch shape (2,)");

  // Bad artifacts.
  const std::string meta = read(art / "metadata.json");
  CHECK_THROWS(FatalError, Model("/nonexistent/artifact"), "metadata.json not found");
  CHECK_THROWS(FatalError,
               Model(edited(art, "json", "{ not json").string()),
               "corrupt metadata (invalid JSON at byte 2");
  CHECK_THROWS(
      FatalError,
      Model(edited(art, "schema", replace(meta, "\"schema_version\": 1", "\"schema_version\": 7"))
                .string()),
      "metadata schema_version 7 is not the 1 this runtime reads");
  {
    const auto j = Json::parse(meta, "meta");
    const auto tv = j.at("torch_version", "m").as_string("m");
    CHECK_THROWS(FatalError,
                 Model(edited(art, "torch", replace(meta, tv, "1.13.0")).string()),
                 "was built with torch 1.13.0 but this libneml2 runs torch");
  }
  CHECK_THROWS(FatalError,
               Model(edited(art, "key", replace(meta, "\"inputs\"", "\"inpts\"")).string()),
               "corrupt metadata (missing key 'inputs')");
  // the required keys of nested records come from the artifact contract (schema.h), with
  // the message neml2.aoti's Python reader gives
  CHECK(SCHEMA_VERSION == schema::VERSION);
  CHECK_THROWS(FatalError,
               Model(edited(art, "nested", replace(meta, "\"base_shape\"", "\"base\"")).string()),
               "corrupt metadata (missing key 'base_shape' in inputs[0])");
  CHECK_THROWS(FatalError,
               Model(edited(art, "graph_rec", replace(meta, "\"file\"", "\"path\"")).string()),
               "corrupt metadata (missing key 'file' in graphs.");
  CHECK_THROWS(
      FatalError,
      Model(edited(art, "graph", replace(meta, "cpu/float64/forward.pt2", "cpu/float64/gone.pt2"))
                .string()),
      "gone.pt2 is missing");
  CHECK_THROWS(FatalError, Model(art.string(), "cpu", "float32"), "no target for device cpu");
  // An artifact compiled without derivatives.
  {
    auto no_d = replace(meta, "\"derivatives\": [", "\"derivatives\": [], \"x_derivatives\": [");
    Model nd(edited(art, "nod", no_d).string());
    CHECK_THROWS(
        FatalError, nd.jacobian({{"x", x}, {"strain", e}}), "compiled without derivatives");
  }

  // The JSON reader itself.
  const auto j = Json::parse(R"({"a": [1, -2.5e3, true, null, "\u00e9\n"], "b": {}})", "t");
  CHECK(j.at("a", "t").as_array("a").size() == 5);
  CHECK(j.at("a", "t").as_array("a")[1].as_number("n") == -2500.0);
  CHECK(j.at("a", "t").as_array("a")[4].as_string("s") == "\xc3\xa9\n");
  CHECK_THROWS(FatalError, j.at("c", "t"), "t has no key 'c'");
  CHECK_THROWS(FatalError, j.at("b", "t").as_array("b"), "b must be an array, not an object");
  CHECK_THROWS(FatalError, Json::parse("[1, 2", "f.json"), "f.json: corrupt metadata");
  return neml2::test::finish("test_model");
}
