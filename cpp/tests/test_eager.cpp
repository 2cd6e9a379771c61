// Tests of libneml2_eager (the cpp-eager route). This executable is the C++ host: it
// links libpython, and the library embeds the interpreter on first use.
//
//   test_eager INPUT_DIR REFERENCE   elasticity (closed form), parameters, errors, the
//                                    non-converging J2 model, threads, and the per-slip
//                                    crystal model against py-eager's REFERENCE values
//                                    (written by eager/make_reference.py)
//   test_eager --no-neml2 PYTHON     run with NEML2_PYTHON=PYTHON, an interpreter without
//                                    neml2: loading must fail with a FatalError naming it
#include "check.h"

#include "neml2/aoti/errors.h"
#include "neml2/eager/model.h"

#include <ATen/ATen.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <unistd.h>

using namespace neml2;
using eager::TensorMap;

namespace
{
std::string g_dir;

std::string
file(const std::string & name)
{
  return g_dir + "/" + name;
}

bool
close(const at::Tensor & a, const at::Tensor & b, double rtol = 1e-10, double atol = 1e-12)
{
  if (a.sizes() != b.sizes())
  {
    std::cerr << "  shapes differ: " << a.sizes() << " vs " << b.sizes() << "\n";
    return false;
  }
  const bool ok = at::allclose(a, b, rtol, atol);
  if (!ok)
    std::cerr << "  max |a - b| = " << (a - b).abs().max().item<double>() << "\n";
  return ok;
}

const auto F64 = at::TensorOptions().dtype(at::kDouble);

// ---------------------------------------------------------------- elasticity
// sigma = lambda tr(eps) 1 + 2 mu eps in Mandel notation; E = 100, nu = 0.3.
at::Tensor
stiffness(double E, double nu)
{
  const double lambda = E * nu / ((1 + nu) * (1 - 2 * nu));
  const double mu = E / (2 * (1 + nu));
  auto C = 2 * mu * at::eye(6, F64);
  C.slice(0, 0, 3).slice(1, 0, 3).add_(lambda);
  return C;
}

at::Tensor
apply(const at::Tensor & C, const at::Tensor & eps)
{
  return at::matmul(C, eps.unsqueeze(-1)).squeeze(-1);
}

void
test_elasticity()
{
  auto m = eager::load_model(file("elasticity.i"), "model");
  CHECK(m.input_names() == std::vector<std::string>{"strain"});
  CHECK(m.output_names() == std::vector<std::string>{"stress"});
  CHECK(m.variable_types().at("strain") == "SR2");
  CHECK(m.variable_types().at("stress") == "SR2");
  CHECK(m.input_base_shapes() == std::vector<eager::Shape>{{6}});
  CHECK(m.output_base_shapes() == std::vector<eager::Shape>{{6}});
  CHECK(m.input_base_shape("strain") == eager::Shape{6});
  CHECK(m.output_base_shape("stress") == eager::Shape{6});
  CHECK_THROWS(aoti::FatalError,
               m.input_base_shape("stran"),
               "no input variable 'stran' (did you mean 'strain'?); the model's inputs are: "
               "strain");
  CHECK_THROWS(aoti::FatalError,
               m.output_base_shape("strain"),
               "no output variable 'strain'; the model's outputs are: stress");
  CHECK(m.input_sub_batch_ndim().empty());
  CHECK((m.input_sub_batch_shapes() == std::map<std::string, eager::Shape>{{"strain", {}}}));
  CHECK((m.output_sub_batch_shapes() == std::map<std::string, eager::Shape>{{"stress", {}}}));
  CHECK(&m.input_names() == &m.signature().input_names());
  CHECK(m.derivatives().size() == 1 && m.derivatives()[0].first == "stress");
  CHECK(m.device().is_cpu());
  CHECK(m.dtype() == at::kDouble);
  CHECK(m.path() == file("elasticity.i"));
  CHECK(!m.built_with_torch().empty());
  const auto C = stiffness(100, 0.3);

  for (int64_t B : {1, 5})
  {
    auto eps = at::linspace(-0.01, 0.02, B * 6, F64).reshape({B, 6});
    auto out = m.forward({{"strain", eps}});
    CHECK(out.size() == 1);
    CHECK(close(out.at("stress"), apply(C, eps)));

    auto [y, J] = m.jacobian({{"strain", eps}});
    CHECK(close(y.at("stress"), apply(C, eps)));
    CHECK(close(J.at("stress").at("strain"), C.expand({B, 6, 6})));

    auto t = at::linspace(1, 2, B * 6, F64).reshape({B, 6});
    auto [y2, dy] = m.jvp({{"strain", eps}}, {{"strain", t}});
    CHECK(close(dy.at("stress"), apply(C, t)));
  }
  // unbatched and multi-axis batches
  auto eps0 = at::tensor({0.09, 0.04, -0.02, 0.0, 0.0, 0.0}, F64);
  CHECK(close(m.forward({{"strain", eps0}}).at("stress"),
              at::tensor({13.2692307692, 9.4230769231, 4.8076923077, 0.0, 0.0, 0.0}, F64),
              1e-9));
  auto eps2 = at::linspace(0, 0.01, 2 * 3 * 6, F64).reshape({2, 3, 6});
  CHECK(close(m.forward({{"strain", eps2}}).at("stress"), apply(C, eps2)));
}

void
test_parameters()
{
  auto m = eager::load_model(file("elasticity.i"), "model");
  auto eps = at::linspace(-0.01, 0.02, 6, F64).reshape({1, 6});
  const auto ref = apply(stiffness(100, 0.3), eps);
  auto & p = m.named_parameters();
  CHECK(p.count("E") == 1 && p.count("nu") == 1);
  CHECK(close(p.at("E"), at::scalar_tensor(100.0, F64)));

  p.at("E").fill_(200.0); // in place: the next call sees it
  CHECK(close(m.forward({{"strain", eps}}).at("stress"), 2 * ref));
  p["E"] = at::scalar_tensor(50.0, F64); // replaced entry: the next call sees it
  CHECK(close(m.forward({{"strain", eps}}).at("stress"), 0.5 * ref));
  CHECK(close(m.named_parameters().at("E"), at::scalar_tensor(50.0, F64)));
  m.set_parameter("E", at::scalar_tensor(100.0, F64));
  CHECK(close(m.forward({{"strain", eps}}).at("stress"), ref));
  CHECK(close(m.named_parameters().at("E"), at::scalar_tensor(100.0, F64)));

  CHECK_THROWS(aoti::FatalError, m.set_parameter("bogus", at::scalar_tensor(1.0, F64)), "bogus");
  p["also_bogus"] = at::scalar_tensor(1.0, F64);
  CHECK_THROWS(aoti::FatalError, m.forward({{"strain", eps}}), "also_bogus");
  CHECK(m.named_parameters().count("also_bogus") == 0); // the map mirrors the model again
  CHECK(close(m.forward({{"strain", eps}}).at("stress"), ref));
}

void
test_errors()
{
  using aoti::FatalError;
  CHECK_THROWS(FatalError, eager::load_model(file("no_such_file.i"), "model"), "no_such_file.i");
  CHECK_THROWS(FatalError, eager::load_model(file("elasticity.i"), "nope"), "nope");

  // a bad option: the message names the file and line of the input
  {
    const auto path = (std::filesystem::temp_directory_path() /
                       ("neml2_test_eager_" + std::to_string(::getpid()) + ".i"))
                          .string();
    std::ofstream f(path);
    f << "[Models]\n  [model]\n    type = LinearIsotropicElasticity\n"
         "    coefficients = '100 0.3'\n    coefficient_types = 'YOUNGS_MODULUS BOGUS'\n"
         "  []\n[]\n";
    f.close();
    CHECK_THROWS(FatalError, eager::load_model(path, "model"), path + ":5");
    CHECK_THROWS(FatalError, eager::load_model(path, "model"), "neml2.tensors.FatalError");
    std::remove(path.c_str());
  }
  CHECK_THROWS(FatalError,
               eager::load_model(file("elasticity.i"), "model", {"", "float16", {}, {}}),
               "float16");
  CHECK_THROWS(FatalError,
               eager::load_model(file("elasticity.i"), "model", {"", "", {}, {{"nope", 1}}}),
               "nope");

  auto m = eager::load_model(file("elasticity.i"), "model");
  auto eps = at::zeros({2, 6}, F64);
  CHECK_THROWS(FatalError, m.forward({{"strain", eps}, {"stran", eps}}), "stran");
  CHECK_THROWS(FatalError, m.forward({}), "strain");
  CHECK_THROWS(FatalError, m.forward({{"strain", at::zeros({2, 5}, F64)}}), "'strain'");
  CHECK_THROWS(FatalError, m.forward({{"strain", at::zeros({2, 5}, F64)}}), "(2, 5)");
  CHECK_THROWS(FatalError, m.forward({{"strain", eps.to(at::kFloat)}}), "'strain'");
  CHECK_THROWS(FatalError, m.forward({{"strain", at::Tensor()}}), "'strain'");
  CHECK_THROWS(FatalError, m.jvp({{"strain", eps}}, {{"nope", eps}}), "nope");
  // the model still works after errors
  CHECK(close(m.forward({{"strain", eps}}).at("stress"), eps));
}

void
test_convergence()
{
  auto m = eager::load_model(file("j2_noconverge.i"), "model");
  TensorMap x;
  for (const auto & n : m.input_names())
  {
    eager::Shape s{1};
    for (auto d : m.input_base_shape(n))
      s.push_back(d);
    x[n] = at::zeros(s, F64);
  }
  x["t"].fill_(1.0);
  x["E"][0][0] = 1e-4; // elastic: converges at once
  CHECK(m.forward(x).at("stress").size(0) == 1);
  x["E"][0][0] = 0.05; // far past yield: one Newton iteration cannot converge
  bool thrown = false;
  try
  {
    m.forward(x);
  }
  catch (const aoti::ConvergenceError & e)
  {
    thrown = true;
    CHECK(e.recoverable());
    CHECK(std::string(e.what()).find("ConvergenceError") != std::string::npos);
  }
  catch (const std::exception & e)
  {
    std::cerr << "  unexpected: " << e.what() << "\n";
  }
  CHECK(thrown);
  CHECK_THROWS(aoti::Exception, m.jacobian(x), "ConvergenceError");
}

void
test_threads()
{
  auto m = eager::load_model(file("elasticity.i"), "model");
  const auto C = stiffness(100, 0.3);
  std::vector<at::Tensor> eps, out(4);
  for (int i = 0; i < 4; ++i)
    eps.push_back(at::full({3, 6}, 0.001 * (i + 1), F64));
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i)
    threads.emplace_back(
        [&, i]()
        {
          for (int k = 0; k < 5; ++k)
            out[i] = m.forward({{"strain", eps[i]}}).at("stress");
        });
  for (auto & t : threads)
    t.join();
  for (int i = 0; i < 4; ++i)
    CHECK(close(out[i], apply(C, eps[i])));
}

// ---------------------------------------------------------------- crystal plasticity
struct Record
{
  std::string kind, name, block;
  at::Tensor value;
};

std::vector<Record>
read_reference(const std::string & path)
{
  std::ifstream f(path);
  if (!f)
    throw std::runtime_error("cannot read the reference file " + path);
  std::vector<Record> out;
  std::string line;
  while (std::getline(f, line))
  {
    if (line.empty())
      continue;
    std::istringstream is(line);
    Record r;
    int64_t ndim = 0;
    is >> r.kind >> r.name >> r.block >> ndim;
    std::vector<int64_t> shape(ndim);
    int64_t n = 1;
    for (auto & d : shape)
    {
      is >> d;
      n *= d;
    }
    std::vector<double> v(n);
    for (auto & x : v)
      is >> x;
    if (!is)
      throw std::runtime_error(path + ": bad line for " + r.kind + " " + r.name);
    r.value = at::tensor(v, F64).reshape(shape);
    out.push_back(std::move(r));
  }
  return out;
}

void
test_crystal(const std::string & reference)
{
  const auto ref = read_reference(reference);
  auto m = eager::load_model(file("crystal.i"), "model");
  // the per-slip axis declared in [Settings] covers the history lag
  CHECK(m.input_sub_batch_ndim().size() == 1);
  CHECK(m.input_sub_batch_ndim().count("dislocation_density~1") == 1);
  // its size is the call's: one UNKNOWN_SIZE axis, on the input and on its output
  CHECK(m.input_sub_batch_shapes().at("dislocation_density~1") == eager::Shape{aoti::UNKNOWN_SIZE});
  CHECK(m.input_sub_batch_shapes().at("deformation_rate").empty());
  CHECK(m.output_sub_batch_shapes().at("dislocation_density") == eager::Shape{-1});
  CHECK(m.output_sub_batch_shapes().at("cauchy_stress").empty());
  CHECK(m.signature().input_trailing_shapes().at("dislocation_density~1") == eager::Shape{-1});
  TensorMap x, t;
  for (const auto & r : ref)
    if (r.kind == "input")
      x[r.name] = r.value;
    else if (r.kind == "tangent")
      t[r.name] = r.value;
  CHECK(x.size() == m.input_names().size());

  auto y = m.forward(x);
  auto [y2, dy] = m.jvp(x, t);
  auto [y3, J] = m.jacobian(x);
  int compared = 0;
  for (const auto & r : ref)
  {
    const at::Tensor * got = nullptr;
    if (r.kind == "output")
      got = &y.at(r.name);
    else if (r.kind == "jvp")
      got = &dy.at(r.name);
    else if (r.kind == "jacobian")
      got = &J.at(r.name).at(r.block);
    if (!got)
      continue;
    ++compared;
    // the same Python code on the same numbers (py-eager under no_grad, as cpp-eager runs)
    const bool same = close(*got, r.value, 1e-12, 1e-14);
    if (!same)
      std::cerr << "  crystal: " << r.kind << " " << r.name << " " << r.block << " differs\n";
    CHECK(same);
  }
  CHECK(compared == 4 + 4 + 4 * 7);
  CHECK(y.at("dislocation_density").sizes() == at::IntArrayRef({2, 12}));
  for (const auto & [n, v] : y)
    CHECK(close(y2.at(n), v) && close(y3.at(n), v));

  // a per-slip input without its sub-batch axis is refused, naming it
  auto bad = x;
  bad["dislocation_density~1"] = at::ones({}, F64);
  CHECK_THROWS(aoti::FatalError, m.forward(bad), "dislocation_density~1");
}
} // namespace

int
main(int argc, char ** argv)
{
  if (argc == 3 && std::string(argv[1]) == "--no-neml2")
  {
    // NEML2_PYTHON names an interpreter without neml2
    CHECK_THROWS(aoti::FatalError, eager::load_model("x.i", "model"), argv[2]);
    CHECK_THROWS(aoti::FatalError, eager::load_model("x.i", "model"), "NEML2_PYTHON");
    return test::finish("eager.no_neml2");
  }
  if (argc != 3)
  {
    std::cerr << "usage: test_eager INPUT_DIR REFERENCE | test_eager --no-neml2 PYTHON\n";
    return 2;
  }
  g_dir = argv[1];
  const auto how = eager::python_interpreter();
  std::cout << "interpreter: " << how << "\n";
  CHECK(how.find("embedded") != std::string::npos);
  test_elasticity();
  test_parameters();
  test_errors();
  test_convergence();
  test_threads();
  test_crystal(argv[2]);
  return test::finish("eager.model");
}
