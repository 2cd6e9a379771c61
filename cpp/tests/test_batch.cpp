#include "check.h"
#include "neml2/aoti/batch.h"
#include "neml2/aoti/errors.h"

#include <ATen/ATen.h>

using namespace neml2::aoti;

int
main()
{
  const std::map<std::string, Shape> base{{"strain", {6}}, {"T", {}}};

  CHECK(shape_str({}) == "()");
  CHECK(shape_str({4}) == "(4,)");
  CHECK(shape_str({2, 6}) == "(2, 6)");

  CHECK((batch_shape_of("strain", at::zeros({5, 6}), {6}) == Shape{5}));
  CHECK((batch_shape_of("T", at::zeros({5}), {}) == Shape{5}));
  CHECK((batch_shape_of("strain", at::zeros({6}), {6}) == Shape{}));
  CHECK_THROWS(FatalError,
               batch_shape_of("strain", at::zeros({5, 1}), {6}),
               "input 'strain' has shape (5, 1) but must end in its base shape (6,)");
  CHECK_THROWS(FatalError, batch_shape_of("strain", at::Tensor(), {6}), "undefined");

  // Broadcasting: (4, 1) x (3) -> (4, 3); scalars broadcast; batch 1 is kept.
  CHECK((broadcast_batch_shape({{"strain", at::zeros({4, 1, 6})}, {"T", at::zeros({3})}}, base) ==
         Shape{4, 3}));
  CHECK((broadcast_batch_shape({{"strain", at::zeros({1, 6})}, {"T", at::zeros({})}}, base) ==
         Shape{1}));
  CHECK_THROWS(FatalError,
               broadcast_batch_shape({{"strain", at::zeros({4, 6})}, {"T", at::zeros({3})}}, base),
               "does not broadcast");
  CHECK_THROWS(FatalError,
               broadcast_batch_shape({{"strain", at::zeros({4, 6})}}, base),
               "missing input 'T'");
  CHECK_THROWS(
      FatalError,
      broadcast_batch_shape(
          {{"strain", at::zeros({6})}, {"T", at::zeros({})}, {"stress", at::zeros({6})}}, base),
      "unknown input 'stress'; the model's inputs are: T, strain");
  // a misspelt name is reported as unknown (with a suggestion), not as the missing one
  CHECK_THROWS(
      FatalError,
      broadcast_batch_shape({{"strian", at::zeros({6})}, {"T", at::zeros({})}}, base),
      "unknown input 'strian' (did you mean 'strain'?); the model's inputs are: T, strain");
  CHECK(dtype_name(at::kBFloat16) == "bfloat16");
  CHECK(dtype_name(at::kLong) == "int64");
  CHECK(dtype_name(at::kComplexDouble) == "complex128");
  CHECK(dtype_name(at::kDouble) == "float64");
  CHECK(did_you_mean("strian", {"T", "strain"}) == " (did you mean 'strain'?)");
  CHECK(did_you_mean("stress", {"T", "strain"}).empty());
  return neml2::test::finish("test_batch");
}
