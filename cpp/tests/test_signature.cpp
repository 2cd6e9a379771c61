// neml2::aoti::Signature and the surface every C++ model class shares (Surface):
// positional and by-name lookups (an unknown name is a FatalError naming it, a close
// match and the known variables), fixed and UNKNOWN_SIZE sub-batch shapes, trailing
// shapes, derivative pairs checked against the variables; the surface's accessors read
// the signature and its other members reach the class's Impl; and, at compile time,
// aoti::Model, aoti::DispatchedModel, eager::Model and (when built)
// mpi::DistributedModel have the same surface with the same types.
#include "check.h"
#include "neml2/aoti/detail/surface_impl.h"
#include "neml2/aoti/dispatched_model.h"
#include "neml2/aoti/errors.h"
#include "neml2/aoti/model.h"
#include "neml2/aoti/signature.h"
#include "neml2/aoti/surface.h"
#ifdef NEML2_TEST_EAGER
#include "neml2/eager/model.h"
#endif
#ifdef NEML2_TEST_MPI
#include "neml2/mpi/distributed_model.h"
#endif

#include <ATen/ATen.h>

#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

using namespace neml2::aoti;

namespace
{
// ------------------------------------------------------------ the same surface
/// Whether M's surface has aoti::Model's types: calls, signature and accessors.
template <class M>
constexpr bool
same_surface()
{
  return std::is_base_of_v<Surface<M>, M> &&
         std::is_same_v<decltype(std::declval<const M &>().signature()), const Signature &> &&
         std::is_same_v<decltype(std::declval<M &>().forward(TensorMap())), TensorMap> &&
         std::is_same_v<decltype(std::declval<M &>().jvp(TensorMap(), TensorMap())),
                        std::pair<TensorMap, TensorMap>> &&
         std::is_same_v<decltype(std::declval<M &>().jacobian(TensorMap())),
                        std::pair<TensorMap, JacobianMap>> &&
         std::is_same_v<decltype(std::declval<const M &>().input_names()),
                        const std::vector<std::string> &> &&
         std::is_same_v<decltype(std::declval<const M &>().output_names()),
                        const std::vector<std::string> &> &&
         std::is_same_v<decltype(std::declval<const M &>().variable_types()),
                        const std::map<std::string, std::string> &> &&
         std::is_same_v<decltype(std::declval<const M &>().input_base_shapes()),
                        const std::vector<Shape> &> &&
         std::is_same_v<decltype(std::declval<const M &>().output_base_shapes()),
                        const std::vector<Shape> &> &&
         std::is_same_v<decltype(std::declval<const M &>().input_base_shape("")), const Shape &> &&
         std::is_same_v<decltype(std::declval<const M &>().output_base_shape("")), const Shape &> &&
         std::is_same_v<decltype(std::declval<const M &>().input_sub_batch_shapes()),
                        const std::map<std::string, Shape> &> &&
         std::is_same_v<decltype(std::declval<const M &>().output_sub_batch_shapes()),
                        const std::map<std::string, Shape> &> &&
         std::is_same_v<decltype(std::declval<const M &>().input_sub_batch_ndim()),
                        const std::map<std::string, int64_t> &> &&
         std::is_same_v<decltype(std::declval<const M &>().derivatives()),
                        const std::vector<std::pair<std::string, std::string>> &> &&
         std::is_same_v<decltype(std::declval<const M &>().device()), c10::Device> &&
         std::is_same_v<decltype(std::declval<const M &>().dtype()), c10::ScalarType> &&
         std::is_same_v<decltype(std::declval<const M &>().path()), const std::string &> &&
         std::is_same_v<decltype(std::declval<const M &>().built_with_torch()),
                        const std::string &> &&
         std::is_same_v<decltype(std::declval<M &>().named_parameters()), TensorMap &> &&
         std::is_same_v<decltype(std::declval<M &>().set_parameter("", at::Tensor())), void>;
}

static_assert(same_surface<Model>());
static_assert(same_surface<DispatchedModel>());
#ifdef NEML2_TEST_EAGER
static_assert(same_surface<neml2::eager::Model>());
#endif
#ifdef NEML2_TEST_MPI
static_assert(same_surface<neml2::mpi::DistributedModel>());
#endif

// ------------------------------------------------------------ Signature
const Shape SR2{6};
const Shape SCALAR{};

/// strain (SR2), slip (Scalar, 12 slip systems), rho~1 (Scalar, one axis of unknown
/// size) -> stress (SR2), rho (Scalar, the axis of rho~1).
Signature
example()
{
  return Signature({{"strain", "SR2", SR2, {}},
                    {"slip", "Scalar", SCALAR, {12}},
                    {"rho~1", "Scalar", SCALAR, {UNKNOWN_SIZE}}},
                   {{"stress", "SR2", SR2, {}}, {"rho", "Scalar", SCALAR, {UNKNOWN_SIZE}}},
                   {{"stress", "strain"}, {"rho", "slip"}});
}

void
test_accessors()
{
  const auto s = example();
  CHECK((s.input_names() == std::vector<std::string>{"strain", "slip", "rho~1"}));
  CHECK((s.output_names() == std::vector<std::string>{"stress", "rho"}));
  CHECK(s.variable_types().size() == 5);
  CHECK(s.variable_types().at("slip") == "Scalar" && s.variable_types().at("stress") == "SR2");
  // positional, in names order
  CHECK((s.input_base_shapes() == std::vector<Shape>{SR2, SCALAR, SCALAR}));
  CHECK((s.output_base_shapes() == std::vector<Shape>{SR2, SCALAR}));
  // by name
  CHECK(s.input_base_shape("strain") == SR2);
  CHECK(s.input_base_shape("slip") == SCALAR);
  CHECK(s.output_base_shape("stress") == SR2);
  CHECK(s.has_input("rho~1") && !s.has_input("rho") && s.has_output("rho"));
  CHECK((s.derivatives() ==
         DerivativePairs{{"stress", "strain"}, {"rho", "slip"}})); // in the order given
}

void
test_sub_batch()
{
  const auto s = example();
  // one entry per variable, {} for those without sub-batch axes
  CHECK((s.input_sub_batch_shapes() ==
         std::map<std::string, Shape>{{"strain", {}}, {"slip", {12}}, {"rho~1", {-1}}}));
  CHECK((s.output_sub_batch_shapes() ==
         std::map<std::string, Shape>{{"stress", {}}, {"rho", {UNKNOWN_SIZE}}}));
  CHECK(s.input_sub_batch_shape("slip") == Shape{12});
  CHECK(s.output_sub_batch_shape("rho") == Shape{-1});
  // the number of axes, of the inputs that have any, whatever their size
  CHECK((s.input_sub_batch_ndim() == std::map<std::string, int64_t>{{"slip", 1}, {"rho~1", 1}}));
  // what every tensor ends in: (*sub_batch, *base)
  CHECK((s.input_trailing_shapes() ==
         std::map<std::string, Shape>{{"strain", {6}}, {"slip", {12}}, {"rho~1", {-1}}}));
  CHECK((s.output_trailing_shape("stress") == Shape{6}));
  CHECK((Signature({{"R", "R2", {3, 3}, {2, 5}}}, {}, {}).input_trailing_shapes().at("R") ==
         Shape{2, 5, 3, 3}));
}

void
test_lookup_errors()
{
  const auto s = example();
  CHECK_THROWS(FatalError,
               s.input_base_shape("strian"),
               "no input variable 'strian' (did you mean 'strain'?); the model's inputs are: "
               "strain, slip, rho~1");
  CHECK_THROWS(FatalError,
               s.output_base_shape("strain"),
               "no output variable 'strain'; the model's outputs are: stress, rho");
  CHECK_THROWS(FatalError,
               s.input_sub_batch_shape("rho"),
               "no input variable 'rho' (did you mean 'rho~1'?); the model's inputs are: "
               "strain, slip, rho~1");
  CHECK_THROWS(FatalError,
               s.output_sub_batch_shape("stres"),
               "no output variable 'stres' (did you mean 'stress'?); the model's outputs are: "
               "stress, rho");
  CHECK_THROWS(FatalError,
               s.output_trailing_shape("slip"),
               "no output variable 'slip'; the model's outputs are: stress, rho");
  const Signature none;
  CHECK_THROWS(FatalError,
               none.input_base_shape("x"),
               "no input variable 'x'; the model's inputs are: (none)");
}

void
test_invalid()
{
  const std::vector<Signature::Variable> in{{"strain", "SR2", SR2, {}}};
  const std::vector<Signature::Variable> out{{"stress", "SR2", SR2, {}}};
  CHECK_THROWS(FatalError,
               Signature(in, out, {{"stress", "strian"}}),
               "derivative stress:strian names an unknown input 'strian'; the model's inputs "
               "are: strain");
  CHECK_THROWS(FatalError,
               Signature(in, out, {{"sigma", "strain"}}),
               "derivative sigma:strain names an unknown output 'sigma'; the model's outputs "
               "are: stress");
  CHECK_THROWS(
      FatalError, Signature({in[0], in[0]}, out, {}), "input variable 'strain' is listed twice");
  CHECK_THROWS(FatalError,
               Signature(in, {{"stress", "SR2", {-6}, {}}}, {}),
               "output variable 'stress' has base shape (-6,) with a negative size");
  CHECK_THROWS(FatalError,
               Signature({{"slip", "Scalar", {}, {-2}}}, out, {}),
               "input variable 'slip' has sub-batch shape (-2,); a size is >= 0, or -1");
}

/// A model class as the four are written (neml2/aoti/detail/surface_impl.h): its Impl
/// echoes the calls, so the test sees that each member of the surface reaches it.
class Echo : public Surface<Echo>
{
public:
  explicit Echo(Signature s) : _impl(std::make_unique<Impl>())
  {
    _impl->sig = std::move(s);
    _impl->info = {c10::Device("cpu"), at::kFloat, "echo.i", "2.13.0"};
  }

private:
  friend class Surface<Echo>;
  struct Impl
  {
    Signature sig;
    neml2::aoti::detail::LoadInfo info;
    TensorMap params;
    TensorMap forward(const TensorMap & x) { return x; }
    std::pair<TensorMap, TensorMap> jvp(const TensorMap & x, const TensorMap & t) { return {x, t}; }
    std::pair<TensorMap, JacobianMap> jacobian(const TensorMap & x) { return {x, {{"J", x}}}; }
    const Signature & signature() const { return sig; }
    const neml2::aoti::detail::LoadInfo & load_info() const { return info; }
    TensorMap & named_parameters() { return params; }
    void set_parameter(const std::string & name, const at::Tensor & value) { params[name] = value; }
  };
  std::unique_ptr<Impl> _impl;
};

void
test_surface()
{
  Echo m(example());
  const auto & s = m.signature();
  // the accessors read the signature, the very same objects
  CHECK(&m.input_names() == &s.input_names());
  CHECK(&m.output_names() == &s.output_names());
  CHECK(&m.variable_types() == &s.variable_types());
  CHECK(&m.input_base_shapes() == &s.input_base_shapes());
  CHECK(&m.output_base_shapes() == &s.output_base_shapes());
  CHECK(&m.input_base_shape("slip") == &s.input_base_shapes()[1]);
  CHECK(&m.output_base_shape("rho") == &s.output_base_shapes()[1]);
  CHECK(&m.input_sub_batch_shapes() == &s.input_sub_batch_shapes());
  CHECK(&m.output_sub_batch_shapes() == &s.output_sub_batch_shapes());
  CHECK(&m.input_sub_batch_ndim() == &s.input_sub_batch_ndim());
  CHECK(&m.derivatives() == &s.derivatives());
  CHECK_THROWS(FatalError, m.input_base_shape("strian"), "(did you mean 'strain'?)");
  // the rest reaches the Impl
  CHECK(m.device().is_cpu() && m.dtype() == at::kFloat);
  CHECK(m.path() == "echo.i" && m.built_with_torch() == "2.13.0");
  const TensorMap x{{"strain", at::zeros({2, 6})}}, t{{"strain", at::ones({2, 6})}};
  CHECK(m.forward(x).at("strain").is_same(x.at("strain")));
  CHECK(m.jvp(x, t).second.at("strain").is_same(t.at("strain")));
  CHECK(m.jacobian(x).second.at("J").at("strain").is_same(x.at("strain")));
  m.set_parameter("E", at::ones({}));
  CHECK(m.named_parameters().size() == 1 && m.named_parameters().count("E") == 1);
}
} // namespace

int
main()
{
  test_accessors();
  test_sub_batch();
  test_lookup_errors();
  test_invalid();
  test_surface();
  return neml2::test::finish("test_signature");
}
