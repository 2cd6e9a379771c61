// Smoke test of an installed neml2::eager (libneml2_eager): the documented C++ eager
// example through the installed header neml2/csrc/eager/load_model.h. Given an input
// file, load its "model" and run forward / jvp / jacobian on a batch of 8.
#include "neml2/csrc/eager/load_model.h"

#include <iostream>

using namespace neml2::eager;

int
main(int argc, char ** argv)
{
  if (argc < 2)
  {
    std::cerr << "usage: consumer_eager INPUT_FILE\n";
    return 2;
  }
  try
  {
    auto m = load_model(argv[1], "model");
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
    auto tangents = inputs;
    auto [out1, jvp_out] = m.jvp(inputs, tangents);
    auto [out2, J] = m.jacobian(inputs);
    for (std::size_t i = 0; i < m.output_names().size(); ++i)
    {
      const auto & name = m.output_names()[i];
      std::cout << name << ": " << neml2::aoti::shape_str(out.at(name).sizes()) << ", base "
                << neml2::aoti::shape_str(m.output_base_shapes()[i]) << "\n";
    }
    return out.size() == m.output_names().size() && jvp_out.size() == out.size() &&
                   J.size() == out.size()
               ? 0
               : 1;
  }
  catch (const neml2::aoti::Exception & e)
  {
    std::cerr << e.what() << "\n";
    return 1;
  }
}
