// deal.II as the host of a compiled neml2 model: a step-42-like quasi-static
// elastoplastic problem.
//
// A bar [0, L] x [0, W]^2 of trilinear hexahedra (FE_Q(1)^3, QGauss(2): 8 quadrature
// points per cell), the face x = 0 clamped, the face x = L moved along x by a prescribed
// displacement (free in y and z): into plasticity, unloading through reverse yield and
// back. The global Newton uses the material's consistent tangent and makes ONE batched
// neml2 call per global iteration over every quadrature point, the batch shaped
// (cells, quadrature points):
//
//   eps (cells, q, 6) Mandel  --MaterialPoint::update-->  sigma (cells, q, 6),
//                                                          C = d sigma / d eps (cells, q, 6, 6),
//                                                          new state
//
// deal.II's SymmetricTensor holds tensor components; neml2/notation.h converts them to
// and from neml2's Mandel vectors (xx, yy, zz, sqrt2 yz, sqrt2 xz, sqrt2 xy).
//
// The state of the last converged step is rolled forward (MaterialPoint::roll) only when
// a step converges. The problem (mesh, loading, Newton and its stopping rule) is the one
// of tests-integration/fe/_fe_skfem.py's bar, so that the two hosts agree to round-off.
//
//   dealii_bar ARTIFACT [OUT.json] [NX NY NZ]
//
// ARTIFACT: a neml2 artifact with the Jacobian block stress:strain, e.g.
//   neml2-compile examples/tutorials/3-implicit-j2/j2.i model -d stress:strain -o j2
// OUT.json (default dealii_bar.json): per load step the prescribed displacement, the
// global residual norms and the reaction force; at the last step the strain, the old
// state, the stress and the new state of every quadrature point.

#include "neml2/aoti/model.h"
#include "neml2/material_point.h"
#include "neml2/notation.h"

#include <ATen/ATen.h>

#include <deal.II/base/function.h>
#include <deal.II/base/quadrature_lib.h>
#include <deal.II/base/symmetric_tensor.h>
#include <deal.II/dofs/dof_handler.h>
#include <deal.II/dofs/dof_tools.h>
#include <deal.II/fe/component_mask.h>
#include <deal.II/fe/fe_q.h>
#include <deal.II/fe/fe_system.h>
#include <deal.II/fe/fe_values.h>
#include <deal.II/grid/grid_generator.h>
#include <deal.II/grid/tria.h>
#include <deal.II/lac/dynamic_sparsity_pattern.h>
#include <deal.II/lac/full_matrix.h>
#include <deal.II/lac/solver_cg.h>
#include <deal.II/lac/sparse_direct.h>
#include <deal.II/lac/sparse_matrix.h>
#include <deal.II/lac/sparsity_pattern.h>
#include <deal.II/lac/vector.h>
#include <deal.II/numerics/matrix_tools.h>
#include <deal.II/numerics/vector_tools.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace bar
{
using namespace dealii;
constexpr int dim = 3;

/// One load step: the end displacement, the global residual norms, the reaction.
struct StepLog
{
  double disp = 0.0;
  std::vector<double> residuals;
  double reaction = 0.0;
};

/// The bar, its discretisation and the global Newton.
class Problem
{
public:
  Problem(const std::string & artifact, unsigned int nx, unsigned int ny, unsigned int nz)
      : fe(FE_Q<dim>(1), dim), quadrature(2), model(artifact, "cpu", "float64"), mp(model)
  {
    // colorize: x = 0 has boundary id 0, x = L id 1
    GridGenerator::subdivided_hyper_rectangle(
        tria, {nx, ny, nz}, Point<dim>(0, 0, 0), Point<dim>(length, width, width), true);
    dof_handler.reinit(tria);
    dof_handler.distribute_dofs(fe);
    DynamicSparsityPattern dsp(dof_handler.n_dofs());
    DoFTools::make_sparsity_pattern(dof_handler, dsp);
    pattern.copy_from(dsp);
    K.reinit(pattern);
    u.reinit(dof_handler.n_dofs());
    f.reinit(dof_handler.n_dofs());

    // the Dirichlet dofs: all components at x = 0, the x component at x = L
    std::map<types::global_dof_index, double> clamped, pulled_map;
    VectorTools::interpolate_boundary_values(
        dof_handler, types::boundary_id(0), Functions::ZeroFunction<dim>(dim), clamped);
    VectorTools::interpolate_boundary_values(dof_handler,
                                             types::boundary_id(1),
                                             Functions::ZeroFunction<dim>(dim),
                                             pulled_map,
                                             ComponentMask({true, false, false}));
    for (const auto & [i, v] : clamped)
      fixed[i] = 0.0;
    for (const auto & [i, v] : pulled_map)
    {
      fixed[i] = 0.0;
      pulled.push_back(i);
    }
    n_cells = tria.n_active_cells();
    n_q = quadrature.size();
    state = mp.initial_state({int64_t(n_cells), int64_t(n_q)});
  }

  /// Reach the end displacement `disp` in one step of time 1; false if the global
  /// Newton or a local solve fails (the state is then left unchanged).
  bool step(double disp, StepLog & log)
  {
    log.disp = disp;
    Vector<double> w(u);
    const double t_old = time, t_new = time + 1.0;
    for (unsigned int it = 0; it <= max_iterations; ++it)
    {
      const auto strain = strains(w);
      const auto start = std::chrono::steady_clock::now();
      auto res = mp.update(strain, state, t_new, t_old);
      material_seconds +=
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      ++material_calls;
      if (res.n_failed() > 0)
      {
        std::cerr << "dealii_bar: local solve failed at " << res.n_failed() << " points\n";
        return false;
      }
      assemble(res.stress, res.tangent, it < max_iterations);
      if (it > 0)
      {
        double r2 = 0.0;
        for (types::global_dof_index i = 0; i < f.size(); ++i)
          if (!fixed.count(i))
            r2 += f[i] * f[i];
        const double r = std::sqrt(r2);
        log.residuals.push_back(r);
        if (!std::isfinite(r))
          return false;
        if (r <= rtol * f.l2_norm())
        {
          for (auto i : pulled)
            log.reaction += f[i];
          last_strain = strain;
          last_state_old = mp.pack(state);
          last_stress = res.stress;
          state = mp.roll(res.state);
          last_state_new = mp.pack(state);
          u = w;
          time = t_new;
          return true;
        }
      }
      if (it == max_iterations)
        return false;
      // the correction: the pending Dirichlet increment on the fixed dofs, K du = -f
      std::map<types::global_dof_index, double> bv;
      for (const auto & [i, zero] : fixed)
        bv[i] = -w[i];
      for (auto i : pulled)
        bv[i] = disp - w[i];
      Vector<double> du(w.size()), rhs(f);
      rhs *= -1.0;
      MatrixTools::apply_boundary_values(bv, K, du, rhs, true);
      solve(du, rhs);
      w += du;
    }
    return false;
  }

  unsigned int n_cells = 0, n_q = 0;
  double material_seconds = 0.0;
  unsigned int material_calls = 0;
  at::Tensor last_strain, last_state_old, last_stress, last_state_new;
  const std::vector<std::string> & state_names() const { return mp.state_names(); }

  static constexpr double length = 3.0, width = 1.0;

private:
  static constexpr double rtol = 1e-10;
  static constexpr unsigned int max_iterations = 12;

  Triangulation<dim> tria;
  FESystem<dim> fe;
  DoFHandler<dim> dof_handler;
  QGauss<dim> quadrature;
  SparsityPattern pattern;
  SparseMatrix<double> K;
  Vector<double> u, f;
  std::map<types::global_dof_index, double> fixed;
  std::vector<types::global_dof_index> pulled;
  neml2::aoti::Model model;
  neml2::MaterialPoint<neml2::aoti::Model> mp;
  neml2::aoti::TensorMap state;
  double time = 0.0;

  /// sym grad w at every quadrature point, Mandel, (cells, q, 6).
  at::Tensor strains(const Vector<double> & w) const
  {
    FEValues<dim> fv(fe, quadrature, update_gradients);
    const FEValuesExtractors::Vector displacement(0);
    std::vector<SymmetricTensor<2, dim>> eps(n_q);
    std::vector<double> full(size_t(n_cells) * n_q * 9);
    size_t k = 0;
    for (const auto & cell : dof_handler.active_cell_iterators())
    {
      fv.reinit(cell);
      fv[displacement].get_function_symmetric_gradients(w, eps);
      for (unsigned int q = 0; q < n_q; ++q, ++k)
        for (unsigned int i = 0; i < dim; ++i)
          for (unsigned int j = 0; j < dim; ++j)
            full[9 * k + 3 * i + j] = eps[q][i][j];
    }
    auto m = at::empty({int64_t(n_cells), int64_t(n_q), 6}, at::kDouble);
    neml2::notation::full_to_mandel(full.data(), m.data_ptr<double>(), k);
    return m;
  }

  /// f = int sigma : sym grad v and (with `tangent`) K = int sym grad v : C : sym grad du.
  void assemble(const at::Tensor & stress_m, const at::Tensor & tangent_m, bool with_tangent)
  {
    const size_t n = size_t(n_cells) * n_q;
    std::vector<double> sig(n * 9), C(n * 81);
    const auto s = stress_m.contiguous();
    const auto t = tangent_m.contiguous();
    neml2::notation::mandel_to_full(s.data_ptr<double>(), sig.data(), n);
    neml2::notation::mandel_to_full4(t.data_ptr<double>(), C.data(), n);

    FEValues<dim> fv(fe, quadrature, update_gradients | update_JxW_values);
    const FEValuesExtractors::Vector displacement(0);
    const unsigned int nd = fe.n_dofs_per_cell();
    FullMatrix<double> Ke(nd, nd);
    Vector<double> fe_(nd);
    std::vector<types::global_dof_index> dofs(nd);
    std::vector<SymmetricTensor<2, dim>> grad(nd), Cgrad(nd);
    f = 0.0;
    if (with_tangent)
      K = 0.0;
    size_t k = 0;
    for (const auto & cell : dof_handler.active_cell_iterators())
    {
      fv.reinit(cell);
      Ke = 0.0;
      fe_ = 0.0;
      for (unsigned int q = 0; q < n_q; ++q, ++k)
      {
        SymmetricTensor<2, dim> sigma;
        SymmetricTensor<4, dim> Cq;
        for (unsigned int i = 0; i < dim; ++i)
          for (unsigned int j = i; j < dim; ++j)
          {
            sigma[i][j] = sig[9 * k + 3 * i + j];
            for (unsigned int a = 0; a < dim; ++a)
              for (unsigned int b = a; b < dim; ++b)
                Cq[i][j][a][b] = C[81 * k + 27 * i + 9 * j + 3 * a + b];
          }
        const double JxW = fv.JxW(q);
        for (unsigned int i = 0; i < nd; ++i)
        {
          grad[i] = fv[displacement].symmetric_gradient(i, q);
          Cgrad[i] = Cq * grad[i];
          fe_(i) += sigma * grad[i] * JxW;
        }
        if (with_tangent)
          for (unsigned int i = 0; i < nd; ++i)
            for (unsigned int j = 0; j < nd; ++j)
              Ke(i, j) += grad[i] * Cgrad[j] * JxW;
      }
      cell->get_dof_indices(dofs);
      for (unsigned int i = 0; i < nd; ++i)
      {
        f(dofs[i]) += fe_(i);
        if (with_tangent)
          for (unsigned int j = 0; j < nd; ++j)
            K.add(dofs[i], dofs[j], Ke(i, j));
      }
    }
  }

  void solve(Vector<double> & du, const Vector<double> & rhs)
  {
#ifdef DEAL_II_WITH_UMFPACK
    SparseDirectUMFPACK direct;
    direct.initialize(K);
    direct.vmult(du, rhs);
#else
    SolverControl control(10 * rhs.size(), 1e-15 * rhs.l2_norm());
    SolverCG<Vector<double>> cg(control);
    cg.solve(K, du, rhs, PreconditionIdentity());
#endif
  }
};

std::string
json_list(const at::Tensor & x)
{
  const auto c = x.contiguous().to(at::kDouble);
  const double * p = c.data_ptr<double>();
  std::ostringstream out;
  out << "[";
  char buf[32];
  for (int64_t i = 0; i < c.numel(); ++i)
  {
    std::snprintf(buf, sizeof(buf), "%.17g", p[i]);
    out << (i ? ", " : "") << buf;
  }
  out << "]";
  return out.str();
}
} // namespace bar

int
main(int argc, char ** argv)
{
  if (argc < 2)
  {
    std::cerr << "usage: dealii_bar ARTIFACT [OUT.json] [NX NY NZ]\n";
    return 2;
  }
  const std::string artifact = argv[1];
  const std::string out = argc > 2 ? argv[2] : "dealii_bar.json";
  unsigned int nx = 12, ny = 4, nz = 4;
  if (argc > 5)
  {
    nx = std::stoul(argv[3]);
    ny = std::stoul(argv[4]);
    nz = std::stoul(argv[5]);
  }
  // nominal axial strains of the end face per step: elastic, into plasticity, unloading
  // through reverse yield, and back (tests-integration/fe/test_host_skfem.py's PATH)
  const std::vector<double> path{0.3e-3, 1.5e-3, 3e-3, 4.5e-3, 2e-3, -1e-3, -3e-3, 0.0};

  try
  {
    bar::Problem problem(artifact, nx, ny, nz);
    std::cout << "dealii_bar: " << nx << " x " << ny << " x " << nz << " cells, batch ("
              << problem.n_cells << ", " << problem.n_q << ")\n";
    std::vector<bar::StepLog> logs;
    for (double strain : path)
    {
      bar::StepLog log;
      const bool ok = problem.step(strain * bar::Problem::length, log);
      std::cout << "step disp " << log.disp << ": residuals";
      for (double r : log.residuals)
        std::cout << " " << r;
      std::cout << (ok ? "" : " (FAILED)") << "\n  reaction " << log.reaction << "\n";
      logs.push_back(log);
      if (!ok)
      {
        std::cerr << "dealii_bar: no convergence at disp " << log.disp << "\n";
        return 1;
      }
    }
    std::cout << "neml2 update: " << 1e3 * problem.material_seconds / problem.material_calls
              << " ms per global iteration (" << problem.material_calls << " calls)\n";

    std::ofstream os(out);
    os.precision(17);
    os << "{\n  \"mesh\": [" << nx << ", " << ny << ", " << nz << "],\n";
    os << "  \"length\": " << bar::Problem::length << ",\n  \"width\": " << bar::Problem::width
       << ",\n  \"batch_shape\": [" << problem.n_cells << ", " << problem.n_q << "],\n";
    os << "  \"material_ms_per_iteration\": "
       << 1e3 * problem.material_seconds / problem.material_calls << ",\n";
    os << "  \"steps\": [\n";
    for (size_t s = 0; s < logs.size(); ++s)
    {
      os << "    {\"disp\": " << logs[s].disp << ", \"reaction\": " << logs[s].reaction
         << ", \"residuals\": [";
      for (size_t i = 0; i < logs[s].residuals.size(); ++i)
        os << (i ? ", " : "") << logs[s].residuals[i];
      os << "]}" << (s + 1 < logs.size() ? "," : "") << "\n";
    }
    os << "  ],\n  \"last\": {\n    \"state_names\": [";
    const auto & names = problem.state_names();
    for (size_t i = 0; i < names.size(); ++i)
      os << (i ? ", " : "") << "\"" << names[i] << "\"";
    os << "],\n    \"strain\": " << bar::json_list(problem.last_strain)
       << ",\n    \"state_old\": " << bar::json_list(problem.last_state_old)
       << ",\n    \"stress\": " << bar::json_list(problem.last_stress)
       << ",\n    \"state_new\": " << bar::json_list(problem.last_state_new) << "\n  }\n}\n";
    std::cout << "dealii_bar: wrote " << out << "\n";
  }
  catch (const std::exception & e)
  {
    std::cerr << "dealii_bar: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
