// Tutorial 7: evaluate the compiled hello-world elasticity model from C++.
//
//   deploy_elasticity ARTIFACT_DIR [DEVICE]
//
// ARTIFACT_DIR is what
//   uv run neml2-compile examples/hello/input.i elasticity -d stress:strain -p E -o aoti
// writes: aoti/elasticity. DEVICE (default cpu) must be one it was compiled for.
#include "neml2/aoti/errors.h"
#include "neml2/aoti/model.h"

#include <ATen/ATen.h>

#include <iostream>

int
main(int argc, char ** argv)
{
  if (argc < 2)
  {
    std::cerr << "usage: " << argv[0] << " ARTIFACT_DIR [DEVICE]\n";
    return 2;
  }
  try
  {
    // load one compiled target: a device and a dtype the artifact has
    neml2::aoti::Model model(argv[1], argc > 2 ? argv[2] : "cpu", "float64");
    const auto opts = at::TensorOptions().dtype(model.dtype()).device(model.device());

    // a batch of 5 uniaxial strains, 0 to 1e-3: (*B, *base) = (5, 6), Mandel notation
    const auto strain = at::zeros({5, 6}, opts);
    strain.select(1, 0).copy_(at::linspace(0.0, 1e-3, 5, opts));

    // outputs by name, at (*B, *base): {"stress": (5, 6)}
    const auto out = model.forward({{"strain", strain}});
    const auto & stress = out.at("stress");
    // the compiled Jacobian block (-d stress:strain) at (*B, *out_base, *in_base): (5, 6, 6)
    const auto [out2, J] = model.jacobian({{"strain", strain}});
    const auto & C = J.at("stress").at("strain");

    for (int64_t i = 0; i < 5; ++i)
      std::cout << "strain_xx " << strain[i][0].item<double>() << "  stress_xx "
                << stress[i][0].item<double>() << "  stress_yy " << stress[i][1].item<double>()
                << "\n";

    // the model is linear: stress = C : strain, with C the Jacobian block
    const auto Cs = at::matmul(C, strain.unsqueeze(-1)).squeeze(-1);
    if (!at::allclose(Cs, stress, 1e-12, 1e-12))
    {
      std::cerr << "stress differs from C : strain\n";
      return 1;
    }

    // a promoted parameter (-p E) is an input of the graphs: change it, the next call sees it
    auto & params = model.named_parameters();
    if (params.count("E") == 0)
    {
      std::cerr << argv[1] << " was compiled without -p E\n";
      return 1;
    }
    params.at("E").fill_(100e3);
    const auto soft = model.forward({{"strain", strain}}).at("stress");
    std::cout << "E = 100e3: stress_xx " << soft[4][0].item<double>() << "\n";
    if (!at::allclose(2 * soft, stress))
    {
      std::cerr << "halving E did not halve the stress\n";
      return 1;
    }
  }
  catch (const neml2::aoti::FatalError & e) // a bad artifact, target, input name or shape
  {
    std::cerr << e.what() << "\n";
    return 1;
  }
  return 0;
}
