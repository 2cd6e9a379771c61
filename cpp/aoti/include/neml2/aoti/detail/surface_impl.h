// Private to the sources of neml2's C++ model classes (installed with the headers, never
// included by them): the members of neml2::aoti::Surface, defined once, each forwarding
// to the class's Impl.
//
// A class X derives from Surface<X>, befriends it and holds `std::unique_ptr<Impl>
// _impl`. Its Impl has forward, jvp, jacobian, named_parameters and set_parameter as
// Surface declares them, `const Signature & signature() const` and
// `const LoadInfo & load_info() const`. Its source defines the Impl, includes this
// header and instantiates the surface there: `template class neml2::aoti::Surface<X>;`
// (its header declares that instantiation `extern`).
#pragma once

#include "neml2/aoti/surface.h"

#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

#include <string>

namespace neml2::aoti
{
namespace detail
{
/// What a load fixed besides the signature: device(), dtype(), path(), built_with_torch().
struct LoadInfo
{
  c10::Device device = c10::Device("cpu");
  c10::ScalarType dtype = c10::kDouble;
  std::string path;
  std::string built_with_torch;
};
} // namespace detail

template <class Derived>
TensorMap
Surface<Derived>::forward(const TensorMap & inputs)
{
  return impl().forward(inputs);
}

template <class Derived>
std::pair<TensorMap, TensorMap>
Surface<Derived>::jvp(const TensorMap & inputs, const TensorMap & tangents)
{
  return impl().jvp(inputs, tangents);
}

template <class Derived>
std::pair<TensorMap, JacobianMap>
Surface<Derived>::jacobian(const TensorMap & inputs)
{
  return impl().jacobian(inputs);
}

template <class Derived>
const Signature &
Surface<Derived>::signature() const
{
  return impl().signature();
}

template <class Derived>
c10::Device
Surface<Derived>::device() const
{
  return impl().load_info().device;
}

template <class Derived>
c10::ScalarType
Surface<Derived>::dtype() const
{
  return impl().load_info().dtype;
}

template <class Derived>
const std::string &
Surface<Derived>::path() const
{
  return impl().load_info().path;
}

template <class Derived>
const std::string &
Surface<Derived>::built_with_torch() const
{
  return impl().load_info().built_with_torch;
}

template <class Derived>
TensorMap &
Surface<Derived>::named_parameters()
{
  return impl().named_parameters();
}

template <class Derived>
void
Surface<Derived>::set_parameter(const std::string & name, const at::Tensor & value)
{
  impl().set_parameter(name, value);
}
} // namespace neml2::aoti
