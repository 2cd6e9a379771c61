// Mandel <-> Voigt conversions for finite-element hosts: header-only, no torch.
//
// neml2 stores a symmetric second-order tensor as its Mandel vector
//   (xx, yy, zz, sqrt2 yz, sqrt2 xz, sqrt2 xy)
// and a tangent d(stress)/d(strain) as the 6 x 6 row-major matrix C that maps one Mandel
// vector to another (sigma_m = C eps_m). A finite-element code uses Voigt vectors instead:
// a stress-like vector holds the tensor components (Kind::stress), a strain-like vector
// the engineering shears gamma_ij = 2 eps_ij (Kind::strain), and the tangent is the matrix
// D with sigma_v = D eps_v. With W = diag(1, 1, 1, sqrt2, sqrt2, sqrt2) and P the
// permutation from the Mandel order to the host's order:
//   sigma_v = P W^-1 sigma_m,   eps_v = P W eps_m,   D = P W^-1 C W^-1 P^T,
// so that sigma_v . eps_v = sigma_m . eps_m.
//
// The shear order (Order) by code:
//   Order::voigt   xx, yy, zz, yz, xz, xy   textbook Voigt (neml2's Mandel order)
//   Order::abaqus  xx, yy, zz, xy, xz, yz   UMAT STRESS, STRAN, DSTRAN, DDSDDE
//   Order::mfem    xx, yy, zz, xy, xz, yz   ElasticityIntegrator::ComputeElementFlux
//   Order::dealii  xx, yy, zz, xy, xz, yz   SymmetricTensor<2,3> unrolled components
// deal.II's Physics::Notation::Kelvin vectors and matrices are the Mandel storage as is;
// a SymmetricTensor holds tensor components, so its strains convert with Kind::stress.
// docs/conventions.md has the sources and examples; neml2.tensors.notation is the same
// in Python.
//
// Every pointer function converts n points stored one after another (6, 9, 36 or 81
// doubles each); those between arrays of one size may work in place (in == out). A Voigt matrix is
// row-major (D[i*6 + j] = D_ij) unless Layout::column_major is given (a Fortran array such as
// Abaqus's DDSDDE); the Mandel side is always row-major, as neml2's tensors are.
#pragma once

#include "neml2/aoti/errors.h"

#include <array>
#include <cstddef>
#include <string>

namespace neml2::notation
{
/// The order of the shear components of a host's Voigt vectors.
enum class Order
{
  voigt,  ///< xx, yy, zz, yz, xz, xy
  abaqus, ///< xx, yy, zz, xy, xz, yz
  mfem,   ///< xx, yy, zz, xy, xz, yz
  dealii  ///< xx, yy, zz, xy, xz, yz
};

/// What the shear entries of a Voigt vector are: tensor components or engineering shears.
enum class Kind
{
  stress, ///< sigma_ij (also any vector of tensor components)
  strain  ///< gamma_ij = 2 eps_ij
};

/// How a 6 x 6 Voigt matrix is laid out in memory.
enum class Layout
{
  row_major,   ///< D[i*6 + j] = D_ij (C, C++, torch)
  column_major ///< D[i + 6*j] = D_ij (Fortran: Abaqus DDSDDE(I, J))
};

using Vector6 = std::array<double, 6>;
/// A 6 x 6 matrix, M[row][column].
using Matrix6 = std::array<std::array<double, 6>, 6>;

namespace detail
{
constexpr double sqrt2 = 1.41421356237309504880168872420969808;

/// The Mandel position of the component at each position of `order`.
constexpr std::array<int, 6>
mandel_position(Order order)
{
  if (order == Order::voigt)
    return {0, 1, 2, 3, 4, 5};
  return {0, 1, 2, 5, 4, 3}; // xy, xz, yz
}

/// The Mandel -> Voigt factor of Mandel component m: W^-1 (stress) or W (strain).
constexpr double
to_voigt(int m, Kind kind)
{
  if (m < 3)
    return 1.0;
  return kind == Kind::stress ? 1.0 / sqrt2 : sqrt2;
}

constexpr std::size_t
at(int i, int j, Layout layout)
{
  return layout == Layout::row_major ? std::size_t(i * 6 + j) : std::size_t(i + 6 * j);
}
} // namespace detail

/// The name of an order: "voigt", "abaqus", "mfem" or "dealii".
inline const char *
order_name(Order order)
{
  switch (order)
  {
  case Order::voigt:
    return "voigt";
  case Order::abaqus:
    return "abaqus";
  case Order::mfem:
    return "mfem";
  case Order::dealii:
    return "dealii";
  }
  return "?";
}

/// The components at each position of `order`, e.g. {"xx", ..., "xy"} for Order::voigt.
inline std::array<const char *, 6>
components(Order order)
{
  static constexpr const char * mandel[6] = {"xx", "yy", "zz", "yz", "xz", "xy"};
  const auto p = detail::mandel_position(order);
  return {mandel[p[0]], mandel[p[1]], mandel[p[2]], mandel[p[3]], mandel[p[4]], mandel[p[5]]};
}

/// The order named `name` (a host's option); FatalError naming the accepted names otherwise.
inline Order
parse_order(const std::string & name)
{
  for (Order o : {Order::voigt, Order::abaqus, Order::mfem, Order::dealii})
    if (name == order_name(o))
      return o;
  throw aoti::FatalError("order '" + name +
                         "' is not known; accepted: voigt, abaqus, mfem, dealii");
}

/// The kind named `name` ("stress" or "strain"); FatalError otherwise.
inline Kind
parse_kind(const std::string & name)
{
  if (name == "stress")
    return Kind::stress;
  if (name == "strain")
    return Kind::strain;
  throw aoti::FatalError("kind '" + name + "' is not known; accepted: stress, strain");
}

// ------------------------------------------------------------------------------ vectors

/// Mandel vectors -> Voigt vectors in `order`: shears / sqrt2 (stress) or * sqrt2 (strain).
inline void
mandel_to_voigt(
    const double * mandel, double * voigt, Kind kind, Order order = Order::voigt, std::size_t n = 1)
{
  const auto p = detail::mandel_position(order);
  for (std::size_t k = 0; k < n; ++k, mandel += 6, voigt += 6)
  {
    double m[6];
    for (int i = 0; i < 6; ++i)
      m[i] = mandel[i];
    for (int i = 0; i < 6; ++i)
      voigt[i] = m[p[i]] * detail::to_voigt(p[i], kind);
  }
}

/// Voigt vectors in `order` -> Mandel vectors; the inverse of mandel_to_voigt.
inline void
voigt_to_mandel(
    const double * voigt, double * mandel, Kind kind, Order order = Order::voigt, std::size_t n = 1)
{
  const auto p = detail::mandel_position(order);
  for (std::size_t k = 0; k < n; ++k, voigt += 6, mandel += 6)
  {
    double v[6];
    for (int i = 0; i < 6; ++i)
      v[i] = voigt[i];
    for (int i = 0; i < 6; ++i)
      mandel[p[i]] = v[i] / detail::to_voigt(p[i], kind);
  }
}

/// mandel_to_voigt with Kind::stress.
inline void
mandel_to_voigt_stress(const double * in,
                       double * out,
                       Order order = Order::voigt,
                       std::size_t n = 1)
{
  mandel_to_voigt(in, out, Kind::stress, order, n);
}

/// mandel_to_voigt with Kind::strain (engineering shears out).
inline void
mandel_to_voigt_strain(const double * in,
                       double * out,
                       Order order = Order::voigt,
                       std::size_t n = 1)
{
  mandel_to_voigt(in, out, Kind::strain, order, n);
}

/// voigt_to_mandel with Kind::stress.
inline void
voigt_to_mandel_stress(const double * in,
                       double * out,
                       Order order = Order::voigt,
                       std::size_t n = 1)
{
  voigt_to_mandel(in, out, Kind::stress, order, n);
}

/// voigt_to_mandel with Kind::strain (engineering shears in).
inline void
voigt_to_mandel_strain(const double * in,
                       double * out,
                       Order order = Order::voigt,
                       std::size_t n = 1)
{
  voigt_to_mandel(in, out, Kind::strain, order, n);
}

inline Vector6
mandel_to_voigt(const Vector6 & mandel, Kind kind, Order order = Order::voigt)
{
  Vector6 out;
  mandel_to_voigt(mandel.data(), out.data(), kind, order);
  return out;
}

inline Vector6
voigt_to_mandel(const Vector6 & voigt, Kind kind, Order order = Order::voigt)
{
  Vector6 out;
  voigt_to_mandel(voigt.data(), out.data(), kind, order);
  return out;
}

// ------------------------------------------------------------------------------ tangents

/// Mandel tangents C (row-major) -> Voigt D = P W^-1 C W^-1 P^T with sigma_v = D eps_v
/// (engineering shears in eps_v): the normal-shear blocks / sqrt2, the shear block / 2.
inline void
mandel_to_voigt_tangent(const double * C,
                        double * D,
                        Order order = Order::voigt,
                        Layout layout = Layout::row_major,
                        std::size_t n = 1)
{
  const auto p = detail::mandel_position(order);
  for (std::size_t k = 0; k < n; ++k, C += 36, D += 36)
  {
    double c[36];
    for (int i = 0; i < 36; ++i)
      c[i] = C[i];
    for (int i = 0; i < 6; ++i)
      for (int j = 0; j < 6; ++j)
        D[detail::at(i, j, layout)] = c[p[i] * 6 + p[j]] * detail::to_voigt(p[i], Kind::stress) *
                                      detail::to_voigt(p[j], Kind::stress);
  }
}

/// Voigt tangents D in `order` and `layout` -> Mandel C = W P^T D P W (row-major).
inline void
voigt_to_mandel_tangent(const double * D,
                        double * C,
                        Order order = Order::voigt,
                        Layout layout = Layout::row_major,
                        std::size_t n = 1)
{
  const auto p = detail::mandel_position(order);
  for (std::size_t k = 0; k < n; ++k, D += 36, C += 36)
  {
    double d[36];
    for (int i = 0; i < 36; ++i)
      d[i] = D[i];
    for (int i = 0; i < 6; ++i)
      for (int j = 0; j < 6; ++j)
        C[p[i] * 6 + p[j]] = d[detail::at(i, j, layout)] / (detail::to_voigt(p[i], Kind::stress) *
                                                            detail::to_voigt(p[j], Kind::stress));
  }
}

inline Matrix6
mandel_to_voigt_tangent(const Matrix6 & C, Order order = Order::voigt)
{
  Matrix6 D;
  mandel_to_voigt_tangent(C[0].data(), D[0].data(), order);
  return D;
}

inline Matrix6
voigt_to_mandel_tangent(const Matrix6 & D, Order order = Order::voigt)
{
  Matrix6 C;
  voigt_to_mandel_tangent(D[0].data(), C[0].data(), order);
  return C;
}

// ------------------------------------------------------------------------------ full tensors

/// Mandel vectors -> symmetric 3 x 3 matrices, row-major (a[3*i + j]).
inline void
mandel_to_full(const double * mandel, double * a, std::size_t n = 1)
{
  for (std::size_t k = 0; k < n; ++k, mandel += 6, a += 9)
  {
    const double xx = mandel[0], yy = mandel[1], zz = mandel[2];
    const double yz = mandel[3] / detail::sqrt2, xz = mandel[4] / detail::sqrt2,
                 xy = mandel[5] / detail::sqrt2;
    const double full[9] = {xx, xy, xz, xy, yy, yz, xz, yz, zz};
    for (int i = 0; i < 9; ++i)
      a[i] = full[i];
  }
}

/// 3 x 3 row-major matrices -> Mandel vectors of their symmetric parts.
inline void
full_to_mandel(const double * a, double * mandel, std::size_t n = 1)
{
  for (std::size_t k = 0; k < n; ++k, a += 9, mandel += 6)
  {
    const double m[6] = {a[0],
                         a[4],
                         a[8],
                         (a[5] + a[7]) / detail::sqrt2,
                         (a[2] + a[6]) / detail::sqrt2,
                         (a[1] + a[3]) / detail::sqrt2};
    for (int i = 0; i < 6; ++i)
      mandel[i] = m[i];
  }
}

/// Mandel matrices (row-major 6 x 6) -> C_ijkl at c[27*i + 9*j + 3*k + l], with both
/// minor symmetries: C_ijkl = C_IJ / (w_I w_J).
inline void
mandel_to_full4(const double * C, double * c, std::size_t n = 1)
{
  constexpr int mandel[3][3] = {{0, 5, 4}, {5, 1, 3}, {4, 3, 2}};
  for (std::size_t k = 0; k < n; ++k, C += 36, c += 81)
  {
    double m[36];
    for (int i = 0; i < 36; ++i)
      m[i] = C[i];
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j)
        for (int q = 0; q < 3; ++q)
          for (int l = 0; l < 3; ++l)
          {
            const int I = mandel[i][j], J = mandel[q][l];
            c[27 * i + 9 * j + 3 * q + l] = m[I * 6 + J] * detail::to_voigt(I, Kind::stress) *
                                            detail::to_voigt(J, Kind::stress);
          }
  }
}

/// C_ijkl (c[27*i + 9*j + 3*k + l]) -> Mandel matrices (row-major 6 x 6) of the tensors
/// averaged over i <-> j and k <-> l: C_IJ = w_I w_J C_ijkl.
inline void
full4_to_mandel(const double * c, double * C, std::size_t n = 1)
{
  constexpr int pair[6][2] = {{0, 0}, {1, 1}, {2, 2}, {1, 2}, {0, 2}, {0, 1}};
  for (std::size_t k = 0; k < n; ++k, c += 81, C += 36)
    for (int I = 0; I < 6; ++I)
      for (int J = 0; J < 6; ++J)
      {
        const int i = pair[I][0], j = pair[I][1], q = pair[J][0], l = pair[J][1];
        const double avg = 0.25 * (c[27 * i + 9 * j + 3 * q + l] + c[27 * j + 9 * i + 3 * q + l] +
                                   c[27 * i + 9 * j + 3 * l + q] + c[27 * j + 9 * i + 3 * l + q]);
        C[I * 6 + J] =
            avg / (detail::to_voigt(I, Kind::stress) * detail::to_voigt(J, Kind::stress));
      }
}
} // namespace neml2::notation
