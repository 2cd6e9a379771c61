// Smoke test of an installed neml2: headers found, libneml2 linked, torch
// usable, errors catchable through the public base class; given an artifact
// directory, load the compiled model and run it on a batch of 2.
#include "neml2/aoti/batch.h"
#include "neml2/aoti/errors.h"
#include "neml2/aoti/model.h"
#include "neml2/aoti/version.h"
#include "neml2/notation.h"

#include <ATen/ATen.h>

#include <cmath>
#include <iostream>

int
run_model(const std::string & path)
{
  neml2::aoti::Model m(path);
  std::map<std::string, at::Tensor> x;
  for (std::size_t i = 0; i < m.input_names().size(); ++i)
  {
    std::vector<int64_t> shape{2};
    const auto & base = m.input_base_shapes()[i]; // positional, in input_names() order
    shape.insert(shape.end(), base.begin(), base.end());
    x[m.input_names()[i]] = at::full(shape, 0.5, at::TensorOptions().dtype(m.dtype()));
  }
  const auto out = m.forward(x);
  for (const auto & [name, value] : out)
    std::cout << name << ": " << neml2::aoti::shape_str(value.sizes()) << " sum "
              << value.sum().item<double>() << "\n";
  return out.size() == m.output_names().size() ? 0 : 1;
}

int
main(int argc, char ** argv)
{
  if (argc > 1)
    return run_model(argv[1]);
  std::cout << "neml2 " << neml2::aoti::version() << " (torch " << neml2::aoti::torch_version()
            << ")\n";
  const auto b =
      neml2::aoti::broadcast_batch_shape({{"strain", at::zeros({3, 6})}}, {{"strain", {6}}});
  if (b != neml2::aoti::Shape{3})
    return 1;
  // the header-only Mandel <-> Voigt conversions are installed too: xy = 1 in Abaqus's slot 4
  const double mandel[6] = {1, 2, 3, 0, 0, std::sqrt(2.0)};
  double voigt[6];
  neml2::notation::mandel_to_voigt_stress(mandel, voigt, neml2::notation::Order::abaqus);
  if (!(std::abs(voigt[3] - 1.0) <= 1e-12))
    return 1;
  try
  {
    neml2::aoti::batch_shape_of("strain", at::zeros({3}), {6});
  }
  catch (const neml2::aoti::Exception & e)
  {
    std::cout << "caught (recoverable=" << e.recoverable() << "): " << e.what() << "\n";
    return e.recoverable() ? 1 : 0;
  }
  return 1;
}
