// neml2::MaterialPoint: a model with state behind one call per global iteration, for C++
// finite-element hosts. Header-only, a template over the model class, so it works with
// every C++ route (neml2::aoti::Model, neml2::aoti::DispatchedModel,
// neml2::eager::Model, neml2::mpi::DistributedModel) through their one surface
// (neml2/aoti/surface.h) and needs nothing of their libraries but that surface.
//
// The same API as Python's neml2.MaterialPoint (packages/neml2-models/src/neml2/models/
// material_point.py), with the same rules:
//   * the state is every output x that the model takes back as the input x~1 (and x~1 ..
//     x~(k-1) for a model reading x~k), at (*batch, *sub, *base); packed into one
//     (*batch, state_size) array on request;
//   * predictor-only history inputs (flow_rate~1 of J2 radial return, an initial guess of
//     the local Newton solve) are fed zeros unless `extra` gives them. They are found by a
//     probe at construction, as Python does on a compiled model (its _probe_guess): a
//     history input that changes no output when set to 1e-3 instead of 0, at a small
//     elastic step (1e-6 times a fixed direction) from a zero state, is only a guess; a
//     probe that throws keeps the input as state. `predictors` names them explicitly
//     instead (an empty list: every history input is state);
//   * time (t, t~1) is filled where the model declares it;
//   * per-point status: a route throws neml2::aoti::ConvergenceError for the whole batch
//     when one point's local solve fails, naming only how many points failed; update()
//     then halves the batch until each failing point is alone (about k log2(n) more calls
//     for k failed points of n) and evaluates the rest. A failed point (or one with a
//     non-finite stress, tangent or state) keeps its old state and gets zero stress and
//     tangent; the other points equal a batch without the failed points.
//
// The tangent is the model's Jacobian block J[stress][strain]: the artifact must be
// compiled with that pair (neml2-compile ... -d stress:strain).
//
//   neml2::aoti::Model model("j2", "cpu", "float64");
//   neml2::MaterialPoint<neml2::aoti::Model> mp(model);
//   auto state = mp.initial_state({n_elements, n_qp});
//   auto res = mp.update(strain, state, t, t_old);   // strain (n_elements, n_qp, 6)
//   if (res.converged.all().item<bool>()) state = mp.roll(res.state);
#pragma once

#include "neml2/aoti/errors.h"
#include "neml2/aoti/surface.h"

#include <ATen/ExpandUtils.h>
#include <ATen/Functions.h>
#include <ATen/Tensor.h>
#include <ATen/Utils.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace neml2
{
/// What MaterialPoint::update does when a point's local solve fails.
enum class OnFailure
{
  status, ///< report it in MaterialPointResult::converged
  raise   ///< throw neml2::aoti::ConvergenceError naming how many points failed
};

/// What MaterialPoint::update returns.
struct MaterialPointResult
{
  /// (*batch, 6) Mandel (zero where not converged).
  at::Tensor stress;
  /// (*batch, 6, 6), d stress / d strain, the consistent tangent (zero where not converged).
  at::Tensor tangent;
  /// The new state by name, (*batch, *sub, *base) (the old state where not converged).
  aoti::TensorMap state;
  /// The new state packed, (*batch, state_size): defined where update() was given a
  /// packed state.
  at::Tensor packed_state;
  /// (*batch,) bool, per point.
  at::Tensor converged;
  /// Every output of the model by name, (*batch, *sub, *base) (the old state for the
  /// state outputs and zero for the others where not converged).
  aoti::TensorMap outputs;
  /// How many points did not converge.
  int64_t n_failed() const { return converged.logical_not().sum().template item<int64_t>(); }
};

/// A model with state behind update(strain, state) -> stress, tangent, new state.
/// See the top of this file.
template <class M> class MaterialPoint
{
public:
  using TensorMap = aoti::TensorMap;
  using Shape = aoti::Shape;

  /// Read the model's inputs and outputs and sort them. `strain`: the SR2 input (Mandel);
  /// `stress`: the SR2 output; `time`: the time input (its previous value is time~1);
  /// `predictors`: the predictor-only inputs by name (default: probed, see the top).
  /// FatalError: strain / stress not SR2-shaped, no (stress, strain) Jacobian block, a
  /// state variable whose sub-batch size the model does not fix, or predictors naming a
  /// non-history input.
  MaterialPoint(M & model,
                std::string strain = "strain",
                std::string stress = "stress",
                std::string time = "t",
                std::optional<std::vector<std::string>> predictors = {})
      : _model(model), _strain(std::move(strain)), _stress(std::move(stress)),
        _time(std::move(time)), _label("MaterialPoint(" + model.path() + ")")
  {
    const auto & in = model.input_names();
    const auto & out = model.output_names();
    for (size_t i = 0; i < in.size(); ++i)
      _in_base[in[i]] = model.input_base_shapes()[i];
    for (size_t i = 0; i < out.size(); ++i)
      _out_base[out[i]] = model.output_base_shapes()[i];
    if (!_in_base.count(_strain) || _in_base.at(_strain) != Shape{6})
      throw aoti::FatalError(_label + ": strain='" + _strain +
                             "' must name an SR2 input of the model; inputs: " + join(in));
    if (!_out_base.count(_stress) || _out_base.at(_stress) != Shape{6})
      throw aoti::FatalError(_label + ": stress='" + _stress +
                             "' must name an SR2 output of the model; outputs: " + join(out));
    const auto & pairs = model.derivatives();
    if (std::find(pairs.begin(), pairs.end(), std::make_pair(_stress, _strain)) == pairs.end())
      throw aoti::FatalError(_label + ": the model has no Jacobian block " + _stress + ":" +
                             _strain + " (the consistent tangent); compile it with -d " + _stress +
                             ":" + _strain);
    for (const auto & n : in)
      _in_sub[n] = sub_of(model.input_sub_batch_shapes(), n);
    for (const auto & n : out)
      _out_sub[n] = sub_of(model.output_sub_batch_shapes(), n);
    sort_inputs();
    if (!predictors)
    {
      predictors.emplace();
      for (const auto & n : history_inputs())
        if (probe_guess(n))
          predictors->push_back(n);
    }
    set_predictors(*predictors);
  }

  /// The state variables, in packing order.
  const std::vector<std::string> & state_names() const { return _state_names; }
  /// The shape of each state variable at one point, (*sub, *base).
  const std::map<std::string, Shape> & state_shapes() const { return _shapes; }
  /// The predictor-only inputs (x~1 names), fed zeros.
  const std::vector<std::string> & predictors() const { return _predictors; }
  /// How many scalars the state of one point packs into.
  int64_t state_size() const
  {
    int64_t s = 0;
    for (const auto & [n, k] : _sizes)
      s += k;
    return s;
  }

  /// The state before the first step: zeros (a virgin material), (*batch, *sub, *base) on
  /// the model's device, in the model's dtype; `values` gives some variables their initial
  /// value (broadcast).
  TensorMap initial_state(const Shape & batch_shape, const TensorMap & values = {}) const
  {
    check_state_keys(values, false);
    TensorMap out;
    for (const auto & [n, shape] : _shapes)
    {
      auto z = at::zeros(cat(batch_shape, shape),
                         at::TensorOptions().dtype(_model.dtype()).device(_model.device()));
      if (values.count(n))
        z = z.add(values.at(n).to(z.options()));
      out[n] = z;
    }
    return out;
  }

  /// (*batch, state_size): the variables in state_names() order, each flattened (C order).
  at::Tensor pack(const TensorMap & state) const
  {
    check_state_keys(state, true);
    if (_state_names.empty())
      throw aoti::FatalError(_label + ": the model has no state to pack");
    Shape batch;
    bool first = true;
    for (const auto & n : _state_names)
    {
      const auto b = batch_of(n, state.at(n));
      if (first)
        batch = b;
      else
      {
        const auto s = at::infer_size(batch, b);
        batch.assign(s.begin(), s.end());
      }
      first = false;
    }
    std::vector<at::Tensor> parts;
    for (const auto & n : _state_names)
      parts.push_back(state.at(n).expand(cat(batch, _shapes.at(n))).reshape(cat(batch, {-1})));
    return at::cat(parts, -1);
  }

  /// The variables of a packed state (views into `array`), (*batch, *sub, *base).
  TensorMap unpack(const at::Tensor & array) const
  {
    if (array.dim() < 1 || array.size(-1) != state_size())
      throw aoti::FatalError(_label + ": a packed state is (*batch, " +
                             std::to_string(state_size()) + "), got " +
                             aoti::shape_str(array.sizes()));
    const auto batch = array.sizes().slice(0, array.dim() - 1).vec();
    TensorMap out;
    int64_t start = 0;
    for (const auto & n : _state_names)
    {
      const auto k = _sizes.at(n);
      out[n] = array.narrow(-1, start, k).reshape(cat(batch, _shapes.at(n)));
      start += k;
    }
    return out;
  }

  /// The state to keep once a step is accepted: a copy of `state_new` (update() already
  /// returns the state the next step reads).
  TensorMap roll(const TensorMap & state_new) const
  {
    TensorMap out;
    for (const auto & [n, v] : state_new)
      out[n] = v.detach().clone();
    return out;
  }
  at::Tensor roll(const at::Tensor & packed_new) const { return packed_new.detach().clone(); }
  /// The new state where `accept` (*batch,) is true, the old one elsewhere.
  TensorMap
  roll(const TensorMap & state_new, const TensorMap & state_old, const at::Tensor & accept) const
  {
    TensorMap out;
    for (const auto & n : _state_names)
    {
      const auto m =
          accept.to(at::kBool).reshape(cat(accept.sizes().vec(), Shape(_shapes.at(n).size(), 1)));
      out[n] = at::where(m, state_new.at(n), state_old.at(n)).detach().clone();
    }
    return out;
  }

  /// Stress, consistent tangent and new state at every point: one model.jacobian() call
  /// when every point converges. `strain`: (*batch, 6) Mandel; `state`: the state of the
  /// last converged step (broadcast to the batch); `time` / `time_old`: the time at the
  /// end / start of the step (broadcast to the batch); `extra`: the model's other inputs
  /// (and predictor-only ones) by name; `strain_old`: for a model that reads strain~1.
  MaterialPointResult update(const at::Tensor & strain,
                             const TensorMap & state,
                             const at::Tensor & time,
                             const at::Tensor & time_old,
                             const TensorMap & extra = {},
                             OnFailure on_failure = OnFailure::status,
                             const at::Tensor & strain_old = {})
  {
    check_state_keys(state, true);
    return run(strain, state, time, time_old, extra, on_failure, strain_old, false);
  }
  MaterialPointResult update(const at::Tensor & strain,
                             const TensorMap & state,
                             double time = 1.0,
                             double time_old = 0.0,
                             const TensorMap & extra = {},
                             OnFailure on_failure = OnFailure::status,
                             const at::Tensor & strain_old = {})
  {
    return update(strain,
                  state,
                  scalar(time, strain),
                  scalar(time_old, strain),
                  extra,
                  on_failure,
                  strain_old);
  }
  /// The same with a packed state (*batch, state_size); the result's packed_state is set.
  MaterialPointResult update(const at::Tensor & strain,
                             const at::Tensor & packed_state,
                             const at::Tensor & time,
                             const at::Tensor & time_old,
                             const TensorMap & extra = {},
                             OnFailure on_failure = OnFailure::status,
                             const at::Tensor & strain_old = {})
  {
    return run(strain, unpack(packed_state), time, time_old, extra, on_failure, strain_old, true);
  }
  MaterialPointResult update(const at::Tensor & strain,
                             const at::Tensor & packed_state,
                             double time = 1.0,
                             double time_old = 0.0,
                             const TensorMap & extra = {},
                             OnFailure on_failure = OnFailure::status,
                             const at::Tensor & strain_old = {})
  {
    return update(strain,
                  packed_state,
                  scalar(time, strain),
                  scalar(time_old, strain),
                  extra,
                  on_failure,
                  strain_old);
  }

private:
  M & _model;
  std::string _strain, _stress, _time, _label;
  std::map<std::string, Shape> _in_base, _out_base, _in_sub, _out_sub;
  /// output x -> the deepest lag k of an input x~k
  std::map<std::string, int64_t> _lags;
  std::vector<std::string> _other, _state_vars, _state_names, _predictors;
  std::map<std::string, Shape> _shapes;
  std::map<std::string, int64_t> _sizes;

  // ---------------------------------------------------------------- helpers
  static std::string join(const std::vector<std::string> & v)
  {
    std::string s;
    for (const auto & x : v)
      s += (s.empty() ? "" : ", ") + x;
    return s.empty() ? "(none)" : s;
  }
  static Shape cat(const Shape & a, const Shape & b)
  {
    Shape s(a);
    s.insert(s.end(), b.begin(), b.end());
    return s;
  }
  static int64_t numel(const Shape & s)
  {
    int64_t n = 1;
    for (auto d : s)
      n *= d;
    return n;
  }
  static at::Tensor scalar(double v, const at::Tensor & like)
  {
    return at::scalar_tensor(v, like.options());
  }
  static std::string history(const std::string & n) { return n + "~1"; }
  /// (x, k) for "x~k", else nullopt.
  static std::optional<std::pair<std::string, int64_t>> history_of(const std::string & n)
  {
    const auto p = n.rfind('~');
    if (p == std::string::npos || p == 0 || p + 1 == n.size())
      return std::nullopt;
    const auto k = n.substr(p + 1);
    if (!std::all_of(k.begin(),
                     k.end(),
                     [](char c)
                     {
                       return c >= '0' && c <= '9';
                     }))
      return std::nullopt;
    return std::make_pair(n.substr(0, p), static_cast<int64_t>(std::stoll(k)));
  }
  static std::string base_of(const std::string & n)
  {
    const auto h = history_of(n);
    return h ? h->first : n;
  }
  static Shape sub_of(const std::map<std::string, Shape> & m, const std::string & n)
  {
    const auto it = m.find(n);
    return it == m.end() ? Shape{} : it->second;
  }

  void sort_inputs()
  {
    const std::set<std::string> fixed{_strain, history(_strain), _time, history(_time)};
    for (const auto & n : _model.input_names())
    {
      if (fixed.count(n))
        continue;
      const auto h = history_of(n);
      if (h && _out_base.count(h->first) && h->first != _strain && h->first != _time)
        _lags[h->first] = std::max(_lags.count(h->first) ? _lags[h->first] : 0, h->second);
      else
        _other.push_back(n);
    }
  }

  std::vector<std::string> history_inputs() const
  {
    std::vector<std::string> out;
    for (const auto & n : _model.input_names())
      if (const auto h = history_of(n); h && _lags.count(h->first))
        out.push_back(n);
    return out;
  }

  void set_predictors(const std::vector<std::string> & names)
  {
    for (const auto & n : names)
    {
      const auto h = history_of(n);
      if (!_in_base.count(n) || !h || !_lags.count(h->first))
        throw aoti::FatalError(_label + ": predictors names '" + n +
                               "', which is not a history input x~k of an output x; such "
                               "inputs: " +
                               join(history_inputs()));
    }
    const std::set<std::string> given(names.begin(), names.end());
    for (const auto & x : _model.output_names())
    {
      if (!_lags.count(x))
        continue;
      bool all_guess = true;
      for (int64_t k = 1; k <= _lags.at(x); ++k)
      {
        const auto n = x + "~" + std::to_string(k);
        if (_in_base.count(n) && !given.count(n))
          all_guess = false;
      }
      if (!all_guess)
        _state_vars.push_back(x);
    }
    for (const auto & n : names)
      if (std::find(_state_vars.begin(), _state_vars.end(), history_of(n)->first) ==
          _state_vars.end())
        _predictors.push_back(n);
    for (const auto & x : _state_vars)
    {
      _state_names.push_back(x);
      for (int64_t k = 1; k < _lags.at(x); ++k)
        _state_names.push_back(x + "~" + std::to_string(k));
    }
    for (const auto & n : _state_names)
    {
      const auto b = base_of(n);
      const auto shape = cat(_out_sub.at(b), _out_base.at(b));
      if (std::any_of(shape.begin(),
                      shape.end(),
                      [](int64_t d)
                      {
                        return d < 0;
                      }))
        throw aoti::FatalError(_label + ": the state '" + n +
                               "' has a sub-batch axis whose size the model does not fix "
                               "(cpp-eager); MaterialPoint needs it known");
      _shapes[n] = shape;
      _sizes[n] = numel(shape);
    }
  }

  Shape trailing(const std::string & n) const { return cat(_in_sub.at(n), _in_base.at(n)); }

  at::TensorOptions options() const
  {
    return at::TensorOptions().dtype(_model.dtype()).device(_model.device());
  }

  /// Whether setting the input `name` to 1e-3 instead of 0 changes no output at a small
  /// elastic step from a zero state (Python's MaterialPoint._probe_guess).
  bool probe_guess(const std::string & name)
  {
    for (const auto & n : _model.input_names())
      for (auto d : _in_sub.at(n))
        if (d < 0)
          return false; // cannot build a probe: keep it as state
    TensorMap base;
    for (const auto & n : _model.input_names())
    {
      const auto shape = cat({1}, trailing(n));
      auto x = at::zeros(shape, options());
      if (n == _time)
        x.fill_(1.0);
      else if (n == _strain)
        x = at::tensor({1.0, -0.4, -0.3, 0.2, 0.1, 0.05}, options())
                .mul(1e-6)
                .expand(shape)
                .clone();
      base[n] = x;
    }
    TensorMap a, b;
    try
    {
      a = _model.forward(base);
      auto moved = base;
      moved[name] = at::full_like(base.at(name), 1e-3);
      b = _model.forward(moved);
    }
    catch (const std::exception &)
    {
      return false;
    }
    for (const auto & o : _model.output_names())
    {
      const auto & x = a.at(o);
      const auto & y = b.at(o);
      if (!x.isfinite().all().template item<bool>() || !y.isfinite().all().template item<bool>())
        return false;
      const double m = x.numel() ? std::max(x.abs().max().template item<double>(),
                                            y.abs().max().template item<double>())
                                 : 0.0;
      const double diff = x.numel() ? x.sub(y).abs().max().template item<double>() : 0.0;
      if (!(diff <= 1e-12 + 1e-8 * m))
        return false;
    }
    return true;
  }

  void check_state_keys(const TensorMap & state, bool exact) const
  {
    std::vector<std::string> unknown, missing;
    for (const auto & [n, v] : state)
      if (!_shapes.count(n))
        unknown.push_back(n);
    if (exact)
      for (const auto & n : _state_names)
        if (!state.count(n))
          missing.push_back(n);
    if (unknown.empty() && missing.empty())
      return;
    std::string what;
    if (!missing.empty())
      what += "missing " + join(missing);
    if (!unknown.empty())
      what += (what.empty() ? "" : "; ") + std::string("unknown ") + join(unknown);
    throw aoti::FatalError(_label + ": state: " + what + "; the state is " + join(_state_names));
  }

  Shape batch_of(const std::string & n, const at::Tensor & x) const
  {
    const auto & shape = _shapes.at(n);
    const auto k = static_cast<int64_t>(shape.size());
    if (x.dim() < k || x.sizes().slice(x.dim() - k).vec() != shape)
      throw aoti::FatalError(_label + ": state '" + n + "' has shape " +
                             aoti::shape_str(x.sizes()) + "; it must be (*batch, " +
                             aoti::shape_str(shape) + ")");
    return x.sizes().slice(0, x.dim() - k).vec();
  }

  /// `x` broadcast to (*batch, *trail) and flattened to (N, *trail).
  at::Tensor flatten(const std::string & what,
                     const at::Tensor & x,
                     const Shape & batch,
                     const Shape & trail) const
  {
    const auto full = cat(batch, trail);
    at::Tensor y;
    try
    {
      y = x.expand(full);
    }
    catch (const std::exception &)
    {
      throw aoti::FatalError(
          _label + ": " + what + " has shape " + aoti::shape_str(x.sizes()) +
          ", which does not broadcast to (*batch, *sub, *base) = " + aoti::shape_str(full));
    }
    return y.reshape(cat({numel(batch)}, trail));
  }

  MaterialPointResult run(const at::Tensor & strain,
                          const TensorMap & state,
                          const at::Tensor & time,
                          const at::Tensor & time_old,
                          const TensorMap & extra,
                          OnFailure on_failure,
                          const at::Tensor & strain_old,
                          bool packed)
  {
    check_state_keys(state, true);
    if (strain.dim() < 1 || strain.size(-1) != 6)
      throw aoti::FatalError(_label + ": strain has shape " + aoti::shape_str(strain.sizes()) +
                             "; it must be (*batch, 6)");
    const Shape batch = strain.sizes().slice(0, strain.dim() - 1).vec();
    const int64_t n = numel(batch);

    // ---- the inputs at (N, *sub, *base)
    std::vector<std::string> unknown, reserved;
    for (const auto & [k, v] : extra)
    {
      if (!_in_base.count(k))
        unknown.push_back(k);
      else if (std::find(_other.begin(), _other.end(), k) == _other.end() &&
               std::find(_predictors.begin(), _predictors.end(), k) == _predictors.end())
        reserved.push_back(k);
    }
    if (!unknown.empty() || !reserved.empty())
    {
      std::string what;
      if (!unknown.empty())
        what += "unknown input(s) " + join(unknown);
      if (!reserved.empty())
        what += (what.empty() ? "" : "; ") + join(reserved) +
                " (given by strain, time or state, not extra)";
      auto takes = _other;
      takes.insert(takes.end(), _predictors.begin(), _predictors.end());
      throw aoti::FatalError(_label + ": extra names " + what + "; extra takes " + join(takes));
    }
    TensorMap st;
    for (const auto & [k, v] : state)
      st[k] = flatten("state '" + k + "'", v, batch, _shapes.at(k));
    TensorMap flat;
    std::vector<std::string> missing;
    for (const auto & name : _model.input_names())
    {
      const auto tr = trailing(name);
      const auto h = history_of(name);
      if (name == _strain)
        flat[name] = flatten("strain", strain, batch, tr);
      else if (name == history(_strain))
      {
        if (!strain_old.defined())
          throw aoti::FatalError(_label + ": the model reads '" + name +
                                 "': pass strain_old (the strain at the start of the step)");
        flat[name] = flatten("strain_old", strain_old, batch, tr);
      }
      else if (name == _time)
        flat[name] = flatten("time", time, batch, tr);
      else if (name == history(_time))
        flat[name] = flatten("time_old", time_old, batch, tr);
      else if (extra.count(name))
        flat[name] = flatten("extra '" + name + "'", extra.at(name), batch, tr);
      else if (std::find(_predictors.begin(), _predictors.end(), name) != _predictors.end())
        flat[name] = at::zeros(cat({n}, tr), strain.options());
      else if (h &&
               std::find(_state_vars.begin(), _state_vars.end(), h->first) != _state_vars.end())
        flat[name] =
            st.at(h->second == 1 ? h->first : h->first + "~" + std::to_string(h->second - 1));
      else
        missing.push_back(name);
    }
    if (!missing.empty())
      throw aoti::FatalError(_label + ": no value for input(s) " + join(missing) +
                             ": pass them in extra");

    // ---- evaluate, dropping failed points
    auto [outs, tangent, ok] = evaluate(flat, n, strain.options());

    // ---- the result at the batch's shape
    auto where = [&](const at::Tensor & y, const at::Tensor & old)
    {
      Shape s{n};
      s.resize(static_cast<size_t>(y.dim()), 1);
      return at::where(ok.reshape(s), y, old);
    };
    TensorMap new_flat;
    for (const auto & x : _state_vars)
    {
      new_flat[x] = where(outs.at(x), st.at(x));
      for (int64_t k = 1; k < _lags.at(x); ++k)
      {
        const auto prev = k == 1 ? x : x + "~" + std::to_string(k - 1);
        const auto cur = x + "~" + std::to_string(k);
        new_flat[cur] = where(st.at(prev), st.at(cur));
      }
    }
    MaterialPointResult r;
    for (auto & [o, y] : outs)
    {
      at::Tensor v = st.count(o) ? where(y, st.at(o)) : where(at::nan_to_num(y), at::zeros_like(y));
      r.outputs[o] = v.reshape(cat(batch, y.sizes().slice(1).vec()));
    }
    r.stress = r.outputs.at(_stress);
    r.tangent = where(at::nan_to_num(tangent), at::zeros_like(tangent)).reshape(cat(batch, {6, 6}));
    for (const auto & [k, v] : new_flat)
      r.state[k] = v.reshape(cat(batch, _shapes.at(k)));
    r.converged = ok.reshape(batch);
    if (on_failure == OnFailure::raise && !ok.all().template item<bool>())
      throw aoti::ConvergenceError(_label + ": the local solve did not converge at " +
                                   std::to_string(ok.logical_not().sum().template item<int64_t>()) +
                                   " of " + std::to_string(n) + " points; cut the step and retry");
    if (packed)
      r.packed_state =
          _state_names.empty() ? at::zeros(cat(batch, {0}), strain.options()) : pack(r.state);
    return r;
  }

  /// (outputs (N, ...), tangent (N, 6, 6), ok (N,)): the points of a batch that throws
  /// ConvergenceError are found by halving it; failed points are zero.
  std::tuple<TensorMap, at::Tensor, at::Tensor>
  evaluate(const TensorMap & flat, int64_t n, const at::TensorOptions & opt)
  {
    struct Part
    {
      at::Tensor idx;
      TensorMap out;
      at::Tensor tan;
    };
    std::vector<Part> parts;
    const auto iopt = at::TensorOptions().dtype(at::kLong).device(opt.device());
    std::vector<at::Tensor> work{at::arange(n, iopt)};
    bool whole = true;
    while (!work.empty())
    {
      const auto idx = work.back();
      work.pop_back();
      TensorMap part;
      if (whole)
        part = flat;
      else
        for (const auto & [k, v] : flat)
          part[k] = v.index_select(0, idx);
      whole = false;
      try
      {
        auto [out, J] = _model.jacobian(part);
        parts.push_back({idx, std::move(out), J.at(_stress).at(_strain)});
      }
      catch (const aoti::ConvergenceError &)
      {
        const auto k = idx.numel();
        if (k > 1)
        {
          work.push_back(idx.narrow(0, k / 2, k - k / 2));
          work.push_back(idx.narrow(0, 0, k / 2));
        }
      }
    }
    TensorMap outs;
    for (const auto & o : _model.output_names())
      outs[o] = at::zeros(cat(cat({n}, _out_sub.at(o)), _out_base.at(o)), opt);
    auto tangent = at::zeros({n, 6, 6}, opt);
    auto ok = at::zeros({n}, opt.dtype(at::kBool));
    for (const auto & p : parts)
    {
      const auto k = p.idx.numel();
      for (const auto & o : _model.output_names())
      {
        const auto & y = p.out.at(o);
        const auto per = y.sizes().slice(1).vec();
        if (per != outs.at(o).sizes().slice(1).vec())
        {
          if (_lags.count(o))
            throw aoti::FatalError(_label + ": output '" + o + "' is " + aoti::shape_str(per) +
                                   " per point, the state '" + o + "' " +
                                   aoti::shape_str(outs.at(o).sizes().slice(1)));
          outs[o] = at::zeros(cat({n}, per), opt);
        }
        outs[o].index_copy_(0, p.idx, y.reshape(cat({k}, per)).to(outs[o].dtype()));
      }
      tangent.index_copy_(0, p.idx, p.tan.reshape({k, 6, 6}));
      ok.index_fill_(0, p.idx, true);
    }
    auto finite = tangent.isfinite().flatten(1).all(-1);
    finite = finite.logical_and(outs.at(_stress).isfinite().reshape({n, -1}).all(-1));
    for (const auto & [x, lag] : _lags)
      finite = finite.logical_and(outs.at(x).isfinite().reshape({n, -1}).all(-1));
    ok = ok.logical_and(finite);
    return {outs, tangent, ok};
  }
};
} // namespace neml2
