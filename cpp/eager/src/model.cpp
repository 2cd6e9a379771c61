#include "neml2/eager/model.h"
#include "neml2/aoti/detail/model_helpers.h"
#include "neml2/aoti/detail/surface_impl.h"
#include "neml2/aoti/errors.h"

#include "python.h"

#include <c10/core/GradMode.h>
#include <torch/csrc/Dtype.h>
#include <torch/csrc/autograd/python_variable.h>

#include <sstream>

namespace neml2::eager
{
using aoti::dtype_name;
using aoti::FatalError;
using detail::check;
using detail::Gil;
using detail::Ref;

namespace
{
Ref
attr(PyObject * o, const char * name, const std::string & context)
{
  return Ref(check(PyObject_GetAttrString(o, name), context));
}

std::string
to_string(PyObject * s, const std::string & context)
{
  const char * c = PyUnicode_AsUTF8(s);
  if (!c)
    detail::throw_python_error(context);
  return c;
}

Shape
to_shape(PyObject * seq, const std::string & context)
{
  Ref fast(check(PySequence_Fast(seq, "expected a shape"), context));
  Shape s;
  const auto n = PySequence_Fast_GET_SIZE(fast.get());
  for (Py_ssize_t i = 0; i < n; ++i)
  {
    const auto d = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(fast.get(), i));
    if (d == -1 && PyErr_Occurred())
      detail::throw_python_error(context);
    s.push_back(d);
  }
  return s;
}

/// The variable part of a name: "dislocation_density~1" -> "dislocation_density".
std::string
variable_of(const std::string & name)
{
  return name.substr(0, name.find('~'));
}

/// `vars` with their sub-batch shapes: the inputs' from `ndim`, an output's from its
/// history input (its name followed by "~N"); one UNKNOWN_SIZE per axis.
void
set_sub_batch(std::vector<Signature::Variable> & vars,
              const std::map<std::string, int64_t> & ndim,
              bool outputs)
{
  for (auto & v : vars)
    for (const auto & [name, n] : ndim)
      if (outputs ? name != v.name && variable_of(name) == v.name : name == v.name)
      {
        v.sub_batch_shape = Shape(static_cast<std::size_t>(n), aoti::UNKNOWN_SIZE);
        break;
      }
}
} // namespace

struct Model::Impl
{
  std::string name, label;
  std::string ctx_forward, ctx_jvp, ctx_jacobian, ctx_params;
  Ref model, forward_fn, jvp_fn, jacobian_fn, set_parameter_fn, named_parameters_fn;
  Signature sig;
  std::map<std::string, Ref> sub_type; // typed wrapper class of each sub-batch input
  /// the model's device and dtype, the input file, the interpreter's torch version
  aoti::detail::LoadInfo info;
  TensorMap params;
  /// The TensorImpl handed out for each parameter: a different one means "replaced".
  std::map<std::string, const c10::TensorImpl *> handed_out;

  ~Impl()
  {
    Ref * refs[] = {
        &model, &forward_fn, &jvp_fn, &jacobian_fn, &set_parameter_fn, &named_parameters_fn};
    if (!detail::python_alive())
    {
      // The host's interpreter is gone (a Python host at exit): leak, do not touch it.
      for (auto * r : refs)
        r->release();
      for (auto & [n, r] : sub_type)
        r.release();
      return;
    }
    Gil gil;
    for (auto * r : refs)
      *r = Ref();
    sub_type.clear();
  }

  /// Re-read the Python model's parameters as detached aliases (same storage).
  void refresh_params()
  {
    params.clear();
    handed_out.clear();
    Ref it(check(PyObject_CallNoArgs(named_parameters_fn.get()), ctx_params));
    Ref iter(check(PyObject_GetIter(it.get()), ctx_params));
    while (Ref item{PyIter_Next(iter.get())})
    {
      PyObject * n = PyTuple_GetItem(item.get(), 0);
      PyObject * p = PyTuple_GetItem(item.get(), 1);
      if (!n || !p || !THPVariable_Check(p))
        throw FatalError(ctx_params + ": named_parameters() did not yield (name, tensor) pairs");
      const auto key = to_string(n, ctx_params);
      auto alias = THPVariable_Unpack(p).detach();
      handed_out[key] = alias.unsafeGetTensorImpl();
      params.emplace(key, std::move(alias));
    }
    if (PyErr_Occurred())
      detail::throw_python_error(ctx_params);
  }

  void call_set_parameter(const std::string & key, const at::Tensor & value)
  {
    if (!value.defined())
      throw FatalError(label + ": parameter '" + key + "' is an undefined tensor");
    Ref k(PyUnicode_FromStringAndSize(key.data(), static_cast<Py_ssize_t>(key.size())));
    Ref v(check(THPVariable_Wrap(value), ctx_params));
    Ref r(check(PyObject_CallFunctionObjArgs(set_parameter_fn.get(), k.get(), v.get(), nullptr),
                label + ": set_parameter('" + key + "')"));
  }

  /// Push replaced entries of `params` into the Python model (hold the GIL).
  void sync_params()
  {
    bool changed = false;
    for (const auto & [key, value] : params)
    {
      const auto h = handed_out.find(key);
      if (h != handed_out.end() && h->second == value.unsafeGetTensorImpl())
        continue;
      try
      {
        call_set_parameter(key, value);
      }
      catch (...)
      {
        refresh_params(); // drop the bad entry: the map again mirrors the model
        throw;
      }
      changed = true;
    }
    if (changed)
      refresh_params();
  }

  /// A dict of tensors (inputs wrapped in their sub-batch type where declared).
  Ref to_dict(const TensorMap & x, const char * what, bool wrap_sub, const std::string & ctx)
  {
    Ref d(check(PyDict_New(), ctx));
    for (const auto & [n, t] : x)
    {
      if (!t.defined())
        throw FatalError(label + ": " + what + " '" + n + "' is an undefined tensor");
      if (sig.has_input(n))
      {
        // nothing is converted or moved implicitly (docs/routes.md, "Input dtype and device")
        if (t.scalar_type() != info.dtype)
          throw FatalError(label + ": " + what + " '" + n + "' has dtype " +
                           dtype_name(t.scalar_type()) + " but the model was loaded with " +
                           dtype_name(info.dtype) + " on " + info.device.str() + " (the " + what +
                           " is on " + t.device().str() +
                           "); inputs are never converted implicitly");
        if (t.device().type() != info.device.type())
          throw FatalError(label + ": " + what + " '" + n + "' is on " + t.device().str() +
                           " but the model is on " + info.device.str() + " (in " +
                           dtype_name(info.dtype) + "; the " + what + " has dtype " +
                           dtype_name(t.scalar_type()) + "); inputs are never moved implicitly");
      }
      Ref obj(check(THPVariable_Wrap(t), ctx));
      const auto & sub_ndim = sig.input_sub_batch_ndim();
      const auto s = wrap_sub ? sub_ndim.find(n) : sub_ndim.end();
      if (s != sub_ndim.end())
      {
        const auto & base = sig.input_base_shape(n);
        const auto need = s->second + static_cast<int64_t>(base.size());
        if (t.dim() < need)
          throw FatalError(
              label + ": " + what + " '" + n + "' has shape " + aoti::shape_str(t.sizes()) +
              " but needs at least " + std::to_string(need) + " dimensions (*batch, " +
              std::to_string(s->second) + " sub-batch, base " + aoti::shape_str(base) + ")");
        obj = Ref(check(
            PyObject_CallFunction(sub_type.at(n).get(), "On", obj.get(), Py_ssize_t(s->second)),
            ctx + ": " + what + " '" + n + "'"));
      }
      if (PyDict_SetItemString(d.get(), n.c_str(), obj.get()) != 0)
        detail::throw_python_error(ctx);
    }
    return d;
  }

  TensorMap to_map(PyObject * d, const std::string & ctx) const
  {
    if (!PyDict_Check(d))
      throw FatalError(ctx + ": expected a dict of tensors, got a " + Py_TYPE(d)->tp_name);
    TensorMap out;
    PyObject *k, *v;
    Py_ssize_t pos = 0;
    while (PyDict_Next(d, &pos, &k, &v))
    {
      const auto key = to_string(k, ctx);
      if (!THPVariable_Check(v))
        throw FatalError(ctx + ": '" + key + "' is a " + Py_TYPE(v)->tp_name + ", not a tensor");
      out.emplace(key, THPVariable_Unpack(v));
    }
    return out;
  }

  // the surface (neml2/aoti/surface.h)
  TensorMap forward(const TensorMap & inputs);
  std::pair<TensorMap, TensorMap> jvp(const TensorMap & inputs, const TensorMap & tangents);
  std::pair<TensorMap, JacobianMap> jacobian(const TensorMap & inputs);
  const Signature & signature() const { return sig; }
  const aoti::detail::LoadInfo & load_info() const { return info; }
  TensorMap & named_parameters() { return params; }
  void set_parameter(const std::string & key, const at::Tensor & value);

  /// (dict, dict) -> the two halves of a 2-tuple.
  std::pair<PyObject *, PyObject *> pair_of(PyObject * r, const std::string & ctx) const
  {
    if (!PyTuple_Check(r) || PyTuple_GET_SIZE(r) != 2)
      throw FatalError(ctx + ": expected a (outputs, derivatives) pair, got a " +
                       Py_TYPE(r)->tp_name);
    return {PyTuple_GET_ITEM(r, 0), PyTuple_GET_ITEM(r, 1)};
  }
};

Model::Model(const std::string & input_file,
             const std::string & model_name,
             const Options & options)
    : _impl(std::make_unique<Impl>())
{
  const auto & h = detail::interpreter();
  auto & m = *_impl;
  m.info.path = input_file;
  m.name = model_name;
  m.label = "neml2::eager: model '" + model_name + "' of " + input_file;
  m.ctx_forward = m.label + ": forward";
  m.ctx_jvp = m.label + ": jvp";
  m.ctx_jacobian = m.label + ": jacobian";
  m.ctx_params = m.label + ": parameters";
  m.info.built_with_torch = h.torch_version;
  const std::string dtype = options.dtype.empty() ? "float64" : options.dtype;
  aoti::detail::parse_dtype(dtype, m.label); // float64 or float32, else a FatalError
  const std::string device = options.device.empty() ? "cpu" : options.device;

  Gil gil;
  const auto ctx = "neml2::eager: cannot load model '" + model_name + "' from " + input_file;
  Ref torch(check(PyImport_ImportModule("torch"), ctx));
  Ref overrides(check(PyList_New(0), ctx));
  for (const auto & o : options.overrides)
  {
    Ref s(check(PyUnicode_FromString(o.c_str()), ctx));
    if (PyList_Append(overrides.get(), s.get()) != 0)
      detail::throw_python_error(ctx);
  }
  Ref args(
      check(Py_BuildValue("(ssO)", input_file.c_str(), model_name.c_str(), overrides.get()), ctx));
  Ref kwargs(check(PyDict_New(), ctx));
  Ref dt = attr(torch.get(), dtype.c_str(), ctx);
  Ref dev(check(PyUnicode_FromString(device.c_str()), ctx));
  if (PyDict_SetItemString(kwargs.get(), "dtype", dt.get()) != 0 ||
      PyDict_SetItemString(kwargs.get(), "device", dev.get()) != 0)
    detail::throw_python_error(ctx);
  m.model = Ref(check(PyObject_Call(h.load_model, args.get(), kwargs.get()), ctx));

  m.forward_fn = attr(m.model.get(), "forward", ctx);
  m.jvp_fn = attr(m.model.get(), "jvp", ctx);
  m.jacobian_fn = attr(m.model.get(), "jacobian", ctx);
  m.set_parameter_fn = attr(m.model.get(), "set_parameter", ctx);
  m.named_parameters_fn = attr(m.model.get(), "named_parameters", ctx);

  // Variables: name -> typed-wrapper class, in the model's order.
  std::map<std::string, Ref> in_types;
  auto read_spec = [&](const char * spec, std::map<std::string, Ref> * keep)
  {
    std::vector<Signature::Variable> vars;
    Ref d = attr(m.model.get(), spec, ctx);
    if (!PyDict_Check(d.get()))
      throw FatalError(ctx + ": " + spec + " is not a dict");
    PyObject *k, *v;
    Py_ssize_t pos = 0;
    while (PyDict_Next(d.get(), &pos, &k, &v))
    {
      const auto key = to_string(k, ctx);
      Ref tn = attr(v, "__name__", ctx);
      Ref base = attr(v, "BASE_SHAPE", ctx);
      vars.push_back({key,
                      to_string(tn.get(), ctx),
                      to_shape(base.get(), ctx + ": base shape of '" + key + "'"),
                      {}});
      if (keep)
        (*keep)[key] = Ref::borrow(v);
    }
    return vars;
  };
  auto inputs = read_spec("input_spec", &in_types);
  auto outputs = read_spec("output_spec", nullptr);
  std::vector<std::string> input_names;
  for (const auto & v : inputs)
    input_names.push_back(v.name);

  Ref dv = attr(m.model.get(), "device", ctx);
  Ref dvs(check(PyObject_Str(dv.get()), ctx));
  m.info.device = c10::Device(to_string(dvs.get(), ctx));
  Ref dty = attr(m.model.get(), "dtype", ctx);
  if (!THPDtype_Check(dty.get()))
    throw FatalError(ctx + ": the model's dtype is not a torch.dtype");
  m.info.dtype = reinterpret_cast<THPDtype *>(dty.get())->scalar_type;

  // Sub-batch inputs: declared in [Settings]/example_batch_shape, or given in options.
  std::map<std::string, int64_t> sub_ndim;
  Ref input_args(check(Py_BuildValue("(sO)", input_file.c_str(), overrides.get()), ctx));
  Ref input(check(PyObject_Call(h.load_input, input_args.get(), kwargs.get()), ctx));
  for (const auto & n : input_names)
    for (const auto & key : {n, variable_of(n)})
    {
      Ref r(check(PyObject_CallMethod(input.get(), "example_batch_shape", "s", key.c_str()), ctx));
      if (r.get() == Py_None)
        continue;
      if (!PyTuple_Check(r.get()) || PyTuple_GET_SIZE(r.get()) != 2)
        throw FatalError(ctx + ": example_batch_shape('" + key + "') is not a pair");
      const auto sub = to_shape(PyTuple_GET_ITEM(r.get(), 1), ctx);
      if (!sub.empty())
        sub_ndim[n] = static_cast<int64_t>(sub.size());
      break;
    }
  for (const auto & [key, ndim] : options.sub_batch_ndim)
  {
    bool used = false;
    for (const auto & n : input_names)
      if (n == key || variable_of(n) == key)
      {
        used = true;
        if (ndim > 0)
          sub_ndim[n] = ndim;
        else
          sub_ndim.erase(n);
      }
    if (!used)
      throw FatalError(
          m.label + ": sub_batch_ndim names '" + key +
          "', which is not an input variable; inputs are: " + aoti::detail::join(input_names));
    if (ndim < 0)
      throw FatalError(m.label + ": sub_batch_ndim of '" + key + "' is negative");
  }
  for (const auto & [n, ndim] : sub_ndim)
    m.sub_type[n] = Ref::borrow(in_types.at(n).get());
  set_sub_batch(inputs, sub_ndim, false);
  set_sub_batch(outputs, sub_ndim, true);
  aoti::DerivativePairs pairs;
  for (const auto & o : outputs)
    for (const auto & i : inputs)
      pairs.emplace_back(o.name, i.name);
  try
  {
    m.sig = Signature(inputs, outputs, std::move(pairs));
  }
  catch (const FatalError & e)
  {
    throw FatalError(ctx + ": " + e.what());
  }
  m.refresh_params();
}

Model::~Model() = default;
Model::Model(Model &&) noexcept = default;
Model & Model::operator=(Model &&) noexcept = default;

TensorMap
Model::Impl::forward(const TensorMap & inputs)
{
  Gil gil;
  c10::AutoGradMode no_grad(false);
  sync_params();
  Ref x = to_dict(inputs, "input", true, ctx_forward);
  Ref r(check(PyObject_CallOneArg(forward_fn.get(), x.get()), ctx_forward));
  return to_map(r.get(), ctx_forward);
}

std::pair<TensorMap, TensorMap>
Model::Impl::jvp(const TensorMap & inputs, const TensorMap & tangents)
{
  Gil gil;
  c10::AutoGradMode no_grad(false);
  sync_params();
  Ref x = to_dict(inputs, "input", true, ctx_jvp);
  Ref t = to_dict(tangents, "tangent", false, ctx_jvp);
  Ref r(check(PyObject_CallFunctionObjArgs(jvp_fn.get(), x.get(), t.get(), nullptr), ctx_jvp));
  auto [out, dout] = pair_of(r.get(), ctx_jvp);
  return {to_map(out, ctx_jvp), to_map(dout, ctx_jvp)};
}

std::pair<TensorMap, JacobianMap>
Model::Impl::jacobian(const TensorMap & inputs)
{
  Gil gil;
  c10::AutoGradMode no_grad(false);
  sync_params();
  Ref x = to_dict(inputs, "input", true, ctx_jacobian);
  Ref r(check(PyObject_CallOneArg(jacobian_fn.get(), x.get()), ctx_jacobian));
  auto [out, jac] = pair_of(r.get(), ctx_jacobian);
  if (!PyDict_Check(jac))
    throw FatalError(ctx_jacobian + ": expected a dict of blocks");
  JacobianMap J;
  PyObject *k, *v;
  Py_ssize_t pos = 0;
  while (PyDict_Next(jac, &pos, &k, &v))
    J.emplace(to_string(k, ctx_jacobian), to_map(v, ctx_jacobian));
  return {to_map(out, ctx_jacobian), std::move(J)};
}

void
Model::Impl::set_parameter(const std::string & key, const at::Tensor & value)
{
  Gil gil;
  c10::AutoGradMode no_grad(false);
  sync_params();
  try
  {
    call_set_parameter(key, value);
  }
  catch (...)
  {
    refresh_params();
    throw;
  }
  refresh_params();
}

Model
load_model(const std::string & input_file, const std::string & model_name, const Options & options)
{
  return Model(input_file, model_name, options);
}
} // namespace neml2::eager

template class neml2::aoti::Surface<neml2::eager::Model>;
