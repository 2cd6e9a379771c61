// The cpp-eager entry point under its documented name:
//
//   #include "neml2/csrc/eager/load_model.h"
//   auto m = neml2::eager::load_model("model.i", "model");
//   auto out = m.forward(inputs);
//
// load_model(input_file, model_name[, options]) loads a model of a HIT input file
// through neml2.load_model in an embedded CPython and returns a neml2::eager::Model,
// whose surface (forward / jvp / jacobian, input_names, positional
// input_base_shapes, device, dtype, ...) is that of neml2::aoti::Model. ATen and the
// error classes (neml2::aoti::FatalError, ConvergenceError, their base Exception) come
// with it, so a test can build its inputs and catch errors without further includes.
// The host links libpython (see docs/cpp-eager.md).
#pragma once

#include "neml2/aoti/errors.h"
#include "neml2/eager/model.h"

#include <ATen/ATen.h>
