// The C++ eager example of docs/cpp-eager.md, as written there (only the input path
// differs: it comes from the command line), on its one-leaf linear-elastic model
// (E = 100, nu = 0.3), checked against the closed form.
//
//   test_eager_example INPUT   (INPUT: tests/eager/forward_single.i)
//
// Only the documented header is included (besides the test harness, which includes
// no neml2 or torch header): it must bring everything the example uses.
#include "check.h"

#include "neml2/csrc/eager/load_model.h"

using namespace neml2::eager;

namespace
{
/// sigma = lambda tr(eps) 1 + 2 mu eps in Mandel notation.
at::Tensor
stiffness(double E, double nu, const at::TensorOptions & opts)
{
  const double lambda = E * nu / ((1 + nu) * (1 - 2 * nu));
  const double mu = E / (2 * (1 + nu));
  auto C = 2 * mu * at::eye(6, opts);
  C.slice(0, 0, 3).slice(1, 0, 3).add_(lambda);
  return C;
}

bool
close(const at::Tensor & a, const at::Tensor & b)
{
  if (a.sizes() != b.sizes())
  {
    std::cerr << "  shapes differ: " << a.sizes() << " vs " << b.sizes() << "\n";
    return false;
  }
  return at::allclose(a, b, 1e-10, 1e-12);
}

void
run(const std::string & input)
{
  // ---- the documented example, verbatim but for the input path ----
  auto m = load_model(input, "model");
  const auto opts = at::TensorOptions().dtype(m.dtype()).device(m.device());
  std::map<std::string, at::Tensor> inputs;
  for (std::size_t i = 0; i < m.input_names().size(); ++i)
  {
    std::vector<int64_t> shape{8};
    const auto & base = m.input_base_shapes()[i];
    shape.insert(shape.end(), base.begin(), base.end());
    inputs.emplace(m.input_names()[i], at::randn(shape, opts));
  }
  auto out = m.forward(inputs);
  // tangents keyed and shaped like the inputs
  std::map<std::string, at::Tensor> tangents;
  for (const auto & [name, value] : inputs)
    tangents.emplace(name, at::randn(value.sizes(), opts));
  auto [out1, jvp_out] = m.jvp(inputs, tangents);
  auto [out2, J] = m.jacobian(inputs);
  // ---- end of the example ----

  // the boundary: names, positional base shapes, by-name base shapes
  CHECK(m.input_names() == std::vector<std::string>{"strain"});
  CHECK(m.output_names() == std::vector<std::string>{"stress"});
  CHECK(m.input_base_shapes() == std::vector<Shape>{{6}});
  CHECK(m.output_base_shapes() == std::vector<Shape>{{6}});
  CHECK(m.input_base_shape("strain") == Shape{6});
  CHECK(m.output_base_shape("stress") == Shape{6});
  CHECK_THROWS(neml2::aoti::FatalError,
               m.input_base_shape("stress"),
               "no input variable 'stress'; the model's inputs are: strain");
  CHECK_THROWS(neml2::aoti::FatalError,
               m.output_base_shape("stres"),
               "no output variable 'stres' (did you mean 'stress'?); the model's outputs are: "
               "stress");
  CHECK(m.dtype() == at::kDouble); // NEML2 runs in float64 by default
  CHECK(m.device().is_cpu());

  // values: forward, jvp and jacobian against the closed form
  const auto C = stiffness(100, 0.3, opts);
  const auto & eps = inputs.at("strain");
  const auto sigma = at::matmul(eps, C.t());
  CHECK(out.size() == 1);
  CHECK(close(out.at("stress"), sigma));
  CHECK(close(out1.at("stress"), sigma));
  CHECK(close(out2.at("stress"), sigma));
  CHECK(jvp_out.size() == 1);
  CHECK(jvp_out.at("stress").sizes() == at::IntArrayRef({8, 6}));
  CHECK(close(jvp_out.at("stress"), at::matmul(tangents.at("strain"), C.t())));
  CHECK(J.size() == 1 && J.at("stress").size() == 1);
  CHECK(J.at("stress").at("strain").sizes() == at::IntArrayRef({8, 6, 6}));
  CHECK(close(J.at("stress").at("strain"), C.expand({8, 6, 6})));

  // a non-canonical trailing shape is refused, naming the input
  CHECK_THROWS(neml2::aoti::FatalError, m.forward({{"strain", at::zeros({8, 1}, opts)}}), "strain");
}
} // namespace

int
main(int argc, char ** argv)
{
  if (argc != 2)
  {
    std::cerr << "usage: test_eager_example INPUT\n";
    return 2;
  }
  at::manual_seed(0);
  run(argv[1]);
  return neml2::test::finish("eager.example");
}
