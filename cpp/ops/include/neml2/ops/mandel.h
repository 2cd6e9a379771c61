// Storage conversions of the typed tensors, one point at a time: Mandel vectors (SR2) and
// axial vectors (WR2) to and from full 3 x 3 matrices (row-major).
//
// The arithmetic is neml2-tensors' (neml2/tensors/_mandel.py), operation for operation, so
// that the results are the same bit for bit: Mandel (xx, yy, zz, sqrt2 yz, sqrt2 xz,
// sqrt2 xy); the axial vector w = (W21, W02, W10), W v = w x v; full_to_mandel takes the
// symmetric part, full_to_skew the skew part.
//
// Torch-free: the operators that call them (mandel_op.cpp) own shapes and tensors.
#pragma once

#include <cmath>
#include <cstdint>

namespace neml2::ops
{

/// 1 / sqrt(2) in T, as Python's `1.0 / math.sqrt(2.0)` cast to T.
template <typename T>
inline T
inv_sqrt2()
{
  return static_cast<T>(1.0 / std::sqrt(2.0));
}

/// (6) -> (3, 3) symmetric.
template <typename T>
inline void
mandel_to_full(const T * x, T * a)
{
  const T r = inv_sqrt2<T>();
  const T yz = x[3] * r, xz = x[4] * r, xy = x[5] * r;
  a[0] = x[0], a[1] = xy, a[2] = xz;
  a[3] = xy, a[4] = x[1], a[5] = yz;
  a[6] = xz, a[7] = yz, a[8] = x[2];
}

/// (3, 3) -> (6): the Mandel vector of the symmetric part.
template <typename T>
inline void
full_to_mandel(const T * a, T * x)
{
  const T r = inv_sqrt2<T>();
  x[0] = a[0], x[1] = a[4], x[2] = a[8];
  x[3] = (a[5] + a[7]) * r;
  x[4] = (a[2] + a[6]) * r;
  x[5] = (a[1] + a[3]) * r;
}

/// (3) -> (3, 3) skew, W v = w x v.
template <typename T>
inline void
skew_to_full(const T * w, T * a)
{
  a[0] = T(0), a[1] = -w[2], a[2] = w[1];
  a[3] = w[2], a[4] = T(0), a[5] = -w[0];
  a[6] = -w[1], a[7] = w[0], a[8] = T(0);
}

/// (3, 3) -> (3): the axial vector of the skew part.
template <typename T>
inline void
full_to_skew(const T * a, T * w)
{
  w[0] = (a[7] - a[5]) * T(0.5);
  w[1] = (a[2] - a[6]) * T(0.5);
  w[2] = (a[3] - a[1]) * T(0.5);
}

} // namespace neml2::ops
