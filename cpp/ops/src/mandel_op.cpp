// The operators neml2::mandel_to_full, full_to_mandel, skew_to_full, full_to_skew
// (Tensor x) -> Tensor: the typed tensors' storage conversions (neml2/ops/mandel.h), at
// every batch point, the values of neml2-tensors' own forms (neml2/tensors/_mandel.py) bit
// for bit.
//
// x (*batch, 6) / (*batch, 3, 3) / (*batch, 3) / (*batch, 3, 3); the result (*batch, 3, 3)
// / (*batch, 6) / (*batch, 3, 3) / (*batch, 3), contiguous. CPU, float32 / float64: one
// loop over the points (a contiguous copy of x first where it is strided), threaded with
// at::parallel_for; eagerly the Python forms take a dozen torch operations per call
// (selects, products, a stack). Another device or dtype: an error (the Python side calls
// the operators only for CPU float32 / float64). Eager only: no fake kernel, no autograd
// formula.
//
// The operators are registered when this library loads (registration.h).
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/util/SmallVector.h>
#include <c10/util/accumulate.h>

#include "neml2/ops/mandel.h"
#include "registration.h"

namespace
{
template <typename T, void (*F)(const T *, T *)>
at::Tensor
convert(const char * name, const at::Tensor & x, at::IntArrayRef in_base, at::IntArrayRef out_base)
{
  const int64_t nb = static_cast<int64_t>(in_base.size());
  TORCH_CHECK(x.dim() >= nb && x.sizes().slice(x.dim() - nb) == in_base,
              "neml2::",
              name,
              ": x must be (*batch, ",
              in_base,
              "), got ",
              x.sizes());
  c10::SmallVector<int64_t, 8> shape(x.sizes().begin(), x.sizes().end() - nb);
  shape.append(out_base.begin(), out_base.end());
  auto out = at::empty(shape, x.options());
  const int64_t in_size = c10::multiply_integers(in_base);
  const int64_t out_size = c10::multiply_integers(out_base);
  const int64_t N = x.numel() / in_size;
  if (N == 0)
    return out;
  const auto xc = x.contiguous();
  const T * src = xc.const_data_ptr<T>();
  T * dst = out.mutable_data_ptr<T>();
  // a conversion is a few ns per point
  at::parallel_for(0,
                   N,
                   16384,
                   [&](int64_t first, int64_t last)
                   {
                     for (int64_t p = first; p < last; ++p)
                       F(src + p * in_size, dst + p * out_size);
                   });
  return out;
}

void
check_cpu_float(const char * name, const at::Tensor & x)
{
  TORCH_CHECK(x.device().is_cpu(), "neml2::", name, ": x must be on the CPU, got ", x.device());
  TORCH_CHECK(x.scalar_type() == at::kDouble || x.scalar_type() == at::kFloat,
              "neml2::",
              name,
              ": x must be float32 or float64, got ",
              x.scalar_type());
}

// The base shapes of the conversions' inputs and outputs.
constexpr int64_t kMandel[] = {6}, kFull[] = {3, 3}, kAxial[] = {3};

#define NEML2_CONVERSION(NAME, IN_BASE, OUT_BASE)                                                  \
  at::Tensor NAME##_cpu(const at::Tensor & x)                                                      \
  {                                                                                                \
    check_cpu_float(#NAME, x);                                                                     \
    if (x.scalar_type() == at::kDouble)                                                            \
      return convert<double, &neml2::ops::NAME<double>>(#NAME, x, IN_BASE, OUT_BASE);              \
    return convert<float, &neml2::ops::NAME<float>>(#NAME, x, IN_BASE, OUT_BASE);                  \
  }                                                                                                \
  /* every other device: only the CPU kernel exists, check_cpu_float says so */                    \
  at::Tensor NAME##_unsupported(const at::Tensor & x)                                              \
  {                                                                                                \
    check_cpu_float(#NAME, x);                                                                     \
    TORCH_CHECK(false, "neml2::" #NAME ": no kernel for ", x.device(), " ", x.scalar_type());      \
  }                                                                                                \
  const neml2::ops::OperatorRegistration NAME##_registration(                                      \
      #NAME, #NAME "(Tensor x) -> Tensor", &NAME##_cpu, &NAME##_unsupported)

NEML2_CONVERSION(mandel_to_full, kMandel, kFull);
NEML2_CONVERSION(full_to_mandel, kFull, kMandel);
NEML2_CONVERSION(skew_to_full, kAxial, kFull);
NEML2_CONVERSION(full_to_skew, kFull, kAxial);
} // namespace
