// Smoke test of an installed neml2: headers found, libneml2 linked, torch
// usable, errors catchable through the public base class.
#include "neml2/aoti/batch.h"
#include "neml2/aoti/errors.h"
#include "neml2/aoti/version.h"

#include <ATen/ATen.h>

#include <iostream>

int
main()
{
  std::cout << "neml2 " << neml2::aoti::version() << " (torch " << neml2::aoti::torch_version()
            << ")\n";
  const auto b =
      neml2::aoti::broadcast_batch_shape({{"strain", at::zeros({3, 6})}}, {{"strain", {6}}});
  if (b != neml2::aoti::Shape{3})
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
