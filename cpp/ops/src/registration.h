// The registration of one neml2:: operator with torch's dispatcher: its schema, its CPU
// kernel and its composite kernel (every other device), made when the library loads.
//
// Nothing is registered where the process already has the operator (a C++ host that links
// libneml2 and also embeds Python, whose neml2.aoti loads the wheel's copy): a second
// definition of the same schema would abort the load.
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/library.h>

#include <memory>
#include <optional>
#include <string>

namespace neml2::ops
{
class OperatorRegistration
{
public:
  /// `name` without the namespace, `schema` the full signature ("name(Tensor A) -> Tensor").
  template <typename CpuFn, typename CompositeFn>
  OperatorRegistration(const char * name,
                       const char * schema,
                       CpuFn cpu_fn,
                       CompositeFn composite_fn)
  {
    if (c10::Dispatcher::singleton().findSchema({std::string("neml2::") + name, ""}).has_value())
      return; // another copy of libneml2 in this process registered it
    _def = std::make_unique<torch::Library>(
        torch::Library::FRAGMENT, "neml2", std::nullopt, __FILE__, __LINE__);
    _def->def(schema);
    _cpu = std::make_unique<torch::Library>(
        torch::Library::IMPL, "neml2", c10::DispatchKey::CPU, __FILE__, __LINE__);
    _cpu->impl(name, cpu_fn);
    _composite = std::make_unique<torch::Library>(torch::Library::IMPL,
                                                  "neml2",
                                                  c10::DispatchKey::CompositeExplicitAutograd,
                                                  __FILE__,
                                                  __LINE__);
    _composite->impl(name, composite_fn);
  }

private:
  std::unique_ptr<torch::Library> _def, _cpu, _composite;
};
} // namespace neml2::ops
