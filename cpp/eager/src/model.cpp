#include "neml2/eager/model.h"
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
std::string
join(const std::vector<std::string> & v)
{
  std::string out;
  for (const auto & s : v)
    out += (out.empty() ? "" : ", ") + s;
  return out;
}

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
} // namespace

struct Model::Impl
{
  std::string file, name, label;
  std::string ctx_forward, ctx_jvp, ctx_jacobian, ctx_params;
  Ref model, forward_fn, jvp_fn, jacobian_fn, set_parameter_fn, named_parameters_fn;
  std::vector<std::string> inputs, outputs;
  std::map<std::string, std::string> types;
  std::map<std::string, Shape> in_base, out_base;
  /// the same base shapes in `inputs` / `outputs` order
  std::vector<Shape> in_base_list, out_base_list;
  std::map<std::string, int64_t> sub_ndim;
  std::map<std::string, Ref> sub_type; // typed wrapper class of each sub-batch input
  std::vector<std::pair<std::string, std::string>> pairs;
  c10::Device device = c10::Device("cpu");
  c10::ScalarType dtype = at::kDouble;
  std::string torch_version;
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
      if (in_base.count(n))
      {
        // nothing is converted or moved implicitly (docs/routes.md, "Input dtype and device")
        if (t.scalar_type() != dtype)
          throw FatalError(label + ": " + what + " '" + n + "' has dtype " +
                           dtype_name(t.scalar_type()) + " but the model was loaded with " +
                           dtype_name(dtype) + " on " + device.str() + " (the " + what + " is on " +
                           t.device().str() + "); inputs are never converted implicitly");
        if (t.device().type() != device.type())
          throw FatalError(label + ": " + what + " '" + n + "' is on " + t.device().str() +
                           " but the model is on " + device.str() + " (in " + dtype_name(dtype) +
                           "; the " + what + " has dtype " + dtype_name(t.scalar_type()) +
                           "); inputs are never moved implicitly");
      }
      Ref obj(check(THPVariable_Wrap(t), ctx));
      const auto s = wrap_sub ? sub_ndim.find(n) : sub_ndim.end();
      if (s != sub_ndim.end())
      {
        const auto & base = in_base.at(n);
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
  m.file = input_file;
  m.name = model_name;
  m.label = "neml2::eager: model '" + model_name + "' of " + input_file;
  m.ctx_forward = m.label + ": forward";
  m.ctx_jvp = m.label + ": jvp";
  m.ctx_jacobian = m.label + ": jacobian";
  m.ctx_params = m.label + ": parameters";
  m.torch_version = h.torch_version;
  const std::string dtype = options.dtype.empty() ? "float64" : options.dtype;
  if (dtype != "float64" && dtype != "float32")
    throw FatalError(m.label + ": unknown dtype '" + dtype + "' (float64 or float32)");
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
  auto read_spec = [&](const char * spec,
                       std::vector<std::string> & names,
                       std::map<std::string, Shape> & bases,
                       std::vector<Shape> & list,
                       std::map<std::string, Ref> * keep)
  {
    Ref d = attr(m.model.get(), spec, ctx);
    if (!PyDict_Check(d.get()))
      throw FatalError(ctx + ": " + spec + " is not a dict");
    PyObject *k, *v;
    Py_ssize_t pos = 0;
    while (PyDict_Next(d.get(), &pos, &k, &v))
    {
      const auto key = to_string(k, ctx);
      names.push_back(key);
      Ref tn = attr(v, "__name__", ctx);
      m.types[key] = to_string(tn.get(), ctx);
      Ref base = attr(v, "BASE_SHAPE", ctx);
      bases[key] = to_shape(base.get(), ctx + ": base shape of '" + key + "'");
      list.push_back(bases[key]);
      if (keep)
        (*keep)[key] = Ref::borrow(v);
    }
  };
  read_spec("input_spec", m.inputs, m.in_base, m.in_base_list, &in_types);
  read_spec("output_spec", m.outputs, m.out_base, m.out_base_list, nullptr);
  for (const auto & o : m.outputs)
    for (const auto & i : m.inputs)
      m.pairs.emplace_back(o, i);

  Ref dv = attr(m.model.get(), "device", ctx);
  Ref dvs(check(PyObject_Str(dv.get()), ctx));
  m.device = c10::Device(to_string(dvs.get(), ctx));
  Ref dty = attr(m.model.get(), "dtype", ctx);
  if (!THPDtype_Check(dty.get()))
    throw FatalError(ctx + ": the model's dtype is not a torch.dtype");
  m.dtype = reinterpret_cast<THPDtype *>(dty.get())->scalar_type;

  // Sub-batch inputs: declared in [Settings]/example_batch_shape, or given in options.
  Ref input_args(check(Py_BuildValue("(sO)", input_file.c_str(), overrides.get()), ctx));
  Ref input(check(PyObject_Call(h.load_input, input_args.get(), kwargs.get()), ctx));
  for (const auto & n : m.inputs)
    for (const auto & key : {n, variable_of(n)})
    {
      Ref r(check(PyObject_CallMethod(input.get(), "example_batch_shape", "s", key.c_str()), ctx));
      if (r.get() == Py_None)
        continue;
      if (!PyTuple_Check(r.get()) || PyTuple_GET_SIZE(r.get()) != 2)
        throw FatalError(ctx + ": example_batch_shape('" + key + "') is not a pair");
      const auto sub = to_shape(PyTuple_GET_ITEM(r.get(), 1), ctx);
      if (!sub.empty())
        m.sub_ndim[n] = static_cast<int64_t>(sub.size());
      break;
    }
  for (const auto & [key, ndim] : options.sub_batch_ndim)
  {
    bool used = false;
    for (const auto & n : m.inputs)
      if (n == key || variable_of(n) == key)
      {
        used = true;
        if (ndim > 0)
          m.sub_ndim[n] = ndim;
        else
          m.sub_ndim.erase(n);
      }
    if (!used)
      throw FatalError(m.label + ": sub_batch_ndim names '" + key +
                       "', which is not an input variable; inputs are: " + join(m.inputs));
    if (ndim < 0)
      throw FatalError(m.label + ": sub_batch_ndim of '" + key + "' is negative");
  }
  for (const auto & [n, ndim] : m.sub_ndim)
    m.sub_type[n] = Ref::borrow(in_types.at(n).get());
  m.refresh_params();
}

Model::~Model() = default;
Model::Model(Model &&) noexcept = default;
Model & Model::operator=(Model &&) noexcept = default;

TensorMap
Model::forward(const TensorMap & inputs)
{
  auto & m = *_impl;
  Gil gil;
  c10::AutoGradMode no_grad(false);
  m.sync_params();
  Ref x = m.to_dict(inputs, "input", true, m.ctx_forward);
  Ref r(check(PyObject_CallOneArg(m.forward_fn.get(), x.get()), m.ctx_forward));
  return m.to_map(r.get(), m.ctx_forward);
}

std::pair<TensorMap, TensorMap>
Model::jvp(const TensorMap & inputs, const TensorMap & tangents)
{
  auto & m = *_impl;
  Gil gil;
  c10::AutoGradMode no_grad(false);
  m.sync_params();
  Ref x = m.to_dict(inputs, "input", true, m.ctx_jvp);
  Ref t = m.to_dict(tangents, "tangent", false, m.ctx_jvp);
  Ref r(check(PyObject_CallFunctionObjArgs(m.jvp_fn.get(), x.get(), t.get(), nullptr), m.ctx_jvp));
  auto [out, dout] = m.pair_of(r.get(), m.ctx_jvp);
  return {m.to_map(out, m.ctx_jvp), m.to_map(dout, m.ctx_jvp)};
}

std::pair<TensorMap, JacobianMap>
Model::jacobian(const TensorMap & inputs)
{
  auto & m = *_impl;
  Gil gil;
  c10::AutoGradMode no_grad(false);
  m.sync_params();
  Ref x = m.to_dict(inputs, "input", true, m.ctx_jacobian);
  Ref r(check(PyObject_CallOneArg(m.jacobian_fn.get(), x.get()), m.ctx_jacobian));
  auto [out, jac] = m.pair_of(r.get(), m.ctx_jacobian);
  if (!PyDict_Check(jac))
    throw FatalError(m.ctx_jacobian + ": expected a dict of blocks");
  JacobianMap J;
  PyObject *k, *v;
  Py_ssize_t pos = 0;
  while (PyDict_Next(jac, &pos, &k, &v))
    J.emplace(to_string(k, m.ctx_jacobian), m.to_map(v, m.ctx_jacobian));
  return {m.to_map(out, m.ctx_jacobian), std::move(J)};
}

const std::vector<std::string> &
Model::input_names() const
{
  return _impl->inputs;
}

const std::vector<std::string> &
Model::output_names() const
{
  return _impl->outputs;
}

const std::map<std::string, std::string> &
Model::variable_types() const
{
  return _impl->types;
}

const std::vector<Shape> &
Model::input_base_shapes() const
{
  return _impl->in_base_list;
}

const std::vector<Shape> &
Model::output_base_shapes() const
{
  return _impl->out_base_list;
}

const Shape &
Model::input_base_shape(const std::string & name) const
{
  return aoti::base_shape_by_name(_impl->inputs, _impl->in_base_list, name, "input");
}

const Shape &
Model::output_base_shape(const std::string & name) const
{
  return aoti::base_shape_by_name(_impl->outputs, _impl->out_base_list, name, "output");
}

const std::map<std::string, int64_t> &
Model::input_sub_batch_ndim() const
{
  return _impl->sub_ndim;
}

const std::vector<std::pair<std::string, std::string>> &
Model::derivatives() const
{
  return _impl->pairs;
}

c10::Device
Model::device() const
{
  return _impl->device;
}

c10::ScalarType
Model::dtype() const
{
  return _impl->dtype;
}

const std::string &
Model::path() const
{
  return _impl->file;
}

const std::string &
Model::built_with_torch() const
{
  return _impl->torch_version;
}

TensorMap &
Model::named_parameters()
{
  return _impl->params;
}

void
Model::set_parameter(const std::string & name, const at::Tensor & value)
{
  auto & m = *_impl;
  Gil gil;
  c10::AutoGradMode no_grad(false);
  m.sync_params();
  try
  {
    m.call_set_parameter(name, value);
  }
  catch (...)
  {
    m.refresh_params();
    throw;
  }
  m.refresh_params();
}

Model
load_model(const std::string & input_file, const std::string & model_name, const Options & options)
{
  return Model(input_file, model_name, options);
}
} // namespace neml2::eager
