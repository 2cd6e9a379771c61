// neml2/notation.h against the hand-computed numbers of
// packages/neml2-tensors/tests/test_notation.py (no torch: builds in a second).
//
// stress xx..xy = 1..6; strain xx..xy = 0.1, 0.2, 0.3, 0.04, 0.05, 0.06 (engineering
// shears 0.08, 0.10, 0.12); isotropic E = 200, nu = 0.25 (lambda = mu = 80: Voigt 240 /
// 80 normal block, 80 shear diagonal; Mandel 160 shear diagonal); an asymmetric tangent
// whose standard-order Voigt entry (i, j) is 10 i + j (1-based).
#include "check.h"
#include "neml2/aoti/errors.h"
#include "neml2/notation.h"

#include <cmath>

using namespace neml2::notation;

namespace
{
const double s = std::sqrt(2.0);

bool
near(const double * a, const double * b, int n, double tol = 1e-12)
{
  for (int i = 0; i < n; ++i)
    if (!(std::abs(a[i] - b[i]) <= tol))
      return false;
  return true;
}

const Order ORDERS[] = {Order::voigt, Order::abaqus, Order::mfem, Order::dealii};
} // namespace

int
main()
{
  const double sig_m[6] = {1, 2, 3, 4 * s, 5 * s, 6 * s};
  const double eps_m[6] = {0.1, 0.2, 0.3, 0.04 * s, 0.05 * s, 0.06 * s};
  const double sig_voigt[6] = {1, 2, 3, 4, 5, 6};
  const double sig_abaqus[6] = {1, 2, 3, 6, 5, 4};
  const double eps_voigt[6] = {0.1, 0.2, 0.3, 0.08, 0.10, 0.12};
  const double eps_abaqus[6] = {0.1, 0.2, 0.3, 0.12, 0.10, 0.08};

  // ------------------------------------------------------------------- vectors
  for (Order o : ORDERS)
  {
    const double * sv = o == Order::voigt ? sig_voigt : sig_abaqus;
    const double * ev = o == Order::voigt ? eps_voigt : eps_abaqus;
    double out[6], back[6];
    mandel_to_voigt_stress(sig_m, out, o);
    CHECK(near(out, sv, 6));
    voigt_to_mandel_stress(out, back, o);
    CHECK(near(back, sig_m, 6));
    mandel_to_voigt_strain(eps_m, out, o);
    CHECK(near(out, ev, 6));
    voigt_to_mandel_strain(out, back, o);
    CHECK(near(back, eps_m, 6));
    // energy: sigma : eps = 2.94 in both notations
    double sv_out[6];
    mandel_to_voigt(sig_m, sv_out, Kind::stress, o);
    double e = 0, em = 0;
    for (int i = 0; i < 6; ++i)
    {
      e += sv_out[i] * out[i];
      em += sig_m[i] * eps_m[i];
    }
    CHECK(std::abs(e - 2.94) <= 1e-12);
    CHECK(std::abs(em - 2.94) <= 1e-12);
  }
  // std::array overloads, and in place over a batch of two points
  {
    const Vector6 m = {1, 2, 3, 4 * s, 5 * s, 6 * s};
    CHECK(near(mandel_to_voigt(m, Kind::stress, Order::abaqus).data(), sig_abaqus, 6));
    CHECK(near(voigt_to_mandel(mandel_to_voigt(m, Kind::strain), Kind::strain).data(), sig_m, 6));
    double two[12] = {1, 2, 3, 4 * s, 5 * s, 6 * s, 0.1, 0.2, 0.3, 0.04 * s, 0.05 * s, 0.06 * s};
    mandel_to_voigt(two, two, Kind::strain, Order::abaqus, 2);
    const double want[12] = {1, 2, 3, 12, 10, 8, 0.1, 0.2, 0.3, 0.12, 0.10, 0.08};
    CHECK(near(two, want, 12));
  }

  // ------------------------------------------------------------------- tangents
  const Matrix6 C_iso = {{{240, 80, 80, 0, 0, 0},
                          {80, 240, 80, 0, 0, 0},
                          {80, 80, 240, 0, 0, 0},
                          {0, 0, 0, 160, 0, 0},
                          {0, 0, 0, 0, 160, 0},
                          {0, 0, 0, 0, 0, 160}}};
  const Matrix6 D_iso = {{{240, 80, 80, 0, 0, 0},
                          {80, 240, 80, 0, 0, 0},
                          {80, 80, 240, 0, 0, 0},
                          {0, 0, 0, 80, 0, 0},
                          {0, 0, 0, 0, 80, 0},
                          {0, 0, 0, 0, 0, 80}}};
  const Matrix6 C_ani = {{{11, 12, 13, 14 * s, 15 * s, 16 * s},
                          {21, 22, 23, 24 * s, 25 * s, 26 * s},
                          {31, 32, 33, 34 * s, 35 * s, 36 * s},
                          {41 * s, 42 * s, 43 * s, 88, 90, 92},
                          {51 * s, 52 * s, 53 * s, 108, 110, 112},
                          {61 * s, 62 * s, 63 * s, 128, 130, 132}}};
  const Matrix6 D_ani_voigt = {{{11, 12, 13, 14, 15, 16},
                                {21, 22, 23, 24, 25, 26},
                                {31, 32, 33, 34, 35, 36},
                                {41, 42, 43, 44, 45, 46},
                                {51, 52, 53, 54, 55, 56},
                                {61, 62, 63, 64, 65, 66}}};
  const Matrix6 D_ani_abaqus = {{{11, 12, 13, 16, 15, 14},
                                 {21, 22, 23, 26, 25, 24},
                                 {31, 32, 33, 36, 35, 34},
                                 {61, 62, 63, 66, 65, 64},
                                 {51, 52, 53, 56, 55, 54},
                                 {41, 42, 43, 46, 45, 44}}};
  for (Order o : ORDERS)
  {
    const Matrix6 & D_ani = o == Order::voigt ? D_ani_voigt : D_ani_abaqus;
    CHECK(near(mandel_to_voigt_tangent(C_iso, o)[0].data(), D_iso[0].data(), 36));
    CHECK(near(voigt_to_mandel_tangent(D_iso, o)[0].data(), C_iso[0].data(), 36));
    CHECK(near(mandel_to_voigt_tangent(C_ani, o)[0].data(), D_ani[0].data(), 36));
    CHECK(near(voigt_to_mandel_tangent(D_ani, o)[0].data(), C_ani[0].data(), 36));
    // sigma_v = D eps_v reproduces sigma_m = C eps_m
    const Matrix6 D = mandel_to_voigt_tangent(C_ani, o);
    double sig_ani_m[6] = {0, 0, 0, 0, 0, 0}, eps_v[6], sig_v[6], Dev[6] = {0, 0, 0, 0, 0, 0};
    for (int i = 0; i < 6; ++i)
      for (int j = 0; j < 6; ++j)
        sig_ani_m[i] += C_ani[i][j] * eps_m[j];
    mandel_to_voigt_strain(eps_m, eps_v, o);
    mandel_to_voigt_stress(sig_ani_m, sig_v, o);
    for (int i = 0; i < 6; ++i)
      for (int j = 0; j < 6; ++j)
        Dev[i] += D[i][j] * eps_v[j];
    CHECK(near(Dev, sig_v, 6, 1e-10));
  }
  // a Fortran DDSDDE(I, J) sits at [I + 6 J]: column-major holds the transpose's rows
  {
    double ddsdde[36], back[36];
    mandel_to_voigt_tangent(C_ani[0].data(), ddsdde, Order::abaqus, Layout::column_major);
    CHECK(std::abs(ddsdde[3 + 6 * 0] - 61.0) <= 1e-12); // DDSDDE(4, 1): d sigma_xy / d eps_xx
    CHECK(std::abs(ddsdde[0 + 6 * 3] - 16.0) <= 1e-12); // DDSDDE(1, 4): d sigma_xx / d gamma_xy
    CHECK(std::abs(ddsdde[5 + 6 * 4] - 45.0) <= 1e-12); // DDSDDE(6, 5): yz row, xz column
    voigt_to_mandel_tangent(ddsdde, back, Order::abaqus, Layout::column_major);
    CHECK(near(back, C_ani[0].data(), 36));
    // in place over two points
    double two[72];
    for (int i = 0; i < 36; ++i)
      two[i] = two[36 + i] = C_ani[i / 6][i % 6];
    mandel_to_voigt_tangent(two, two, Order::mfem, Layout::row_major, 2);
    CHECK(near(two, D_ani_abaqus[0].data(), 36));
    CHECK(near(two + 36, D_ani_abaqus[0].data(), 36));
  }

  // ------------------------------------------------------------------- full tensors
  {
    double a[9], m[6];
    mandel_to_full(sig_m, a);
    const double full[9] = {1, 6, 5, 6, 2, 4, 5, 4, 3};
    CHECK(near(a, full, 9));
    const double asym[9] = {1, 6, 5, 8, 2, 4, 5, 4, 3}; // yx = 8: xy of the sym part is 7
    full_to_mandel(asym, m);
    const double want[6] = {1, 2, 3, 4 * s, 5 * s, 7 * s};
    CHECK(near(m, want, 6));

    double c[81], back[36];
    mandel_to_full4(C_ani[0].data(), c);
    auto C4 = [&](int i, int j, int k, int l)
    {
      return c[27 * i + 9 * j + 3 * k + l];
    };
    CHECK(std::abs(C4(0, 0, 0, 0) - 11) <= 1e-12);
    CHECK(std::abs(C4(1, 2, 0, 0) - 41) <= 1e-12);
    CHECK(std::abs(C4(0, 0, 1, 2) - 14) <= 1e-12);
    CHECK(std::abs(C4(2, 1, 2, 1) - 44) <= 1e-12);
    CHECK(std::abs(C4(0, 1, 0, 2) - 65) <= 1e-12);
    // sigma_ij = C_ijkl eps_kl against the Mandel product
    double eps_full[9], sig_full[9], sig_ani_m[6] = {0, 0, 0, 0, 0, 0}, sig_ref[9];
    mandel_to_full(eps_m, eps_full);
    for (int i = 0; i < 6; ++i)
      for (int j = 0; j < 6; ++j)
        sig_ani_m[i] += C_ani[i][j] * eps_m[j];
    mandel_to_full(sig_ani_m, sig_ref);
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j)
      {
        double v = 0;
        for (int k = 0; k < 3; ++k)
          for (int l = 0; l < 3; ++l)
            v += C4(i, j, k, l) * eps_full[3 * k + l];
        sig_full[3 * i + j] = v;
      }
    CHECK(near(sig_full, sig_ref, 9, 1e-10));
    full4_to_mandel(c, back);
    CHECK(near(back, C_ani[0].data(), 36, 1e-12));
  }

  // ------------------------------------------------------------------- names
  CHECK(parse_order("abaqus") == Order::abaqus);
  CHECK(parse_order("voigt") == Order::voigt);
  CHECK(parse_kind("strain") == Kind::strain);
  CHECK(std::string(order_name(Order::dealii)) == "dealii");
  CHECK(std::string(components(Order::mfem)[3]) == "xy");
  CHECK(std::string(components(Order::voigt)[3]) == "yz");
  CHECK_THROWS(neml2::aoti::FatalError,
               parse_order("abacus"),
               "order 'abacus' is not known; accepted: voigt, abaqus, mfem, dealii");
  CHECK_THROWS(neml2::aoti::FatalError,
               parse_kind("stres"),
               "kind 'stres' is not known; accepted: stress, strain");
  return neml2::test::finish("test_notation");
}
