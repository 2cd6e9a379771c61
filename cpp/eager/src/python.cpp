#include "python.h"

#include "neml2/aoti/errors.h"
#include "neml2/eager/model.h"

#include <atomic>
#include <cstdlib>
#include <dlfcn.h>
#include <filesystem>
#include <mutex>

namespace fs = std::filesystem;

namespace neml2::eager::detail
{
using aoti::ConvergenceError;
using aoti::FatalError;

namespace
{
/// How the interpreter was found, for messages ("" until known).
std::string g_how; // guarded by g_mutex
std::atomic<Handles *> g_handles{nullptr};
std::mutex g_mutex;

struct Choice
{
  std::string exe;
  std::string how;
};

std::string
env(const char * name)
{
  const char * v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

/// The python of the environment at `prefix` (a venv: bin/python3 or bin/python).
std::string
python_in(const fs::path & prefix)
{
  for (const char * n : {"bin/python3", "bin/python"})
    if (fs::exists(prefix / n))
      return (prefix / n).string();
  return "";
}

/// The venv this library is installed in (the neml2-aoti-runtime wheel puts it in
/// <venv>/lib/pythonX.Y/site-packages/neml2/aoti/lib), if any.
std::string
python_next_to_library()
{
  Dl_info info;
  if (!dladdr(reinterpret_cast<void *>(&python_next_to_library), &info) || !info.dli_fname)
    return "";
  std::error_code ec;
  fs::path p = fs::canonical(info.dli_fname, ec);
  if (ec)
    return "";
  for (int i = 0; i < 8 && p.has_parent_path() && p != p.parent_path(); ++i)
  {
    p = p.parent_path();
    if (fs::exists(p / "pyvenv.cfg"))
      return python_in(p);
  }
  return "";
}

/// NEML2_PYTHON, then VIRTUAL_ENV, then the venv around this library, then the
/// interpreter the library was configured with.
Choice
choose_python()
{
  if (auto e = env("NEML2_PYTHON"); !e.empty())
  {
    if (!fs::exists(e))
      throw FatalError("neml2::eager: NEML2_PYTHON=" + e +
                       " does not exist; point it at the python of an environment where "
                       "neml2-models is installed");
    return {e, "from NEML2_PYTHON"};
  }
  if (auto v = env("VIRTUAL_ENV"); !v.empty())
  {
    auto exe = python_in(v);
    if (!exe.empty())
      return {exe, "from VIRTUAL_ENV=" + v};
  }
  if (auto exe = python_next_to_library(); !exe.empty())
    return {exe, "the environment libneml2_eager is installed in"};
#ifdef NEML2_EAGER_DEFAULT_PYTHON
  if (fs::exists(NEML2_EAGER_DEFAULT_PYTHON))
    return {NEML2_EAGER_DEFAULT_PYTHON, "the interpreter libneml2_eager was configured with"};
#endif
  throw FatalError("neml2::eager: no Python interpreter to embed: set NEML2_PYTHON to the python "
                   "of an environment where neml2-models is installed (tried NEML2_PYTHON, "
                   "VIRTUAL_ENV, the environment around libneml2_eager and the build-time "
                   "default)");
}

/// Start CPython with `program_name` = the chosen interpreter, so that it finds
/// that environment's site-packages. Never finalized. Leaves the GIL released.
void
start_interpreter()
{
  const auto choice = choose_python();
  PyConfig config;
  PyConfig_InitPythonConfig(&config);
  config.install_signal_handlers = 0; // signals belong to the host
  config.parse_argv = 0;
  PyStatus st = PyConfig_SetBytesString(&config, &config.program_name, choice.exe.c_str());
  if (!PyStatus_Exception(st))
    st = Py_InitializeFromConfig(&config);
  PyConfig_Clear(&config);
  if (PyStatus_Exception(st))
    throw FatalError("neml2::eager: cannot start the Python interpreter " + choice.exe + " (" +
                     choice.how + "): " + (st.err_msg ? st.err_msg : "unknown error") +
                     (st.func ? std::string(" in ") + st.func : std::string()));
  g_how = choice.exe + " (embedded; " + choice.how + ")";
  PyEval_SaveThread();
}

std::string
str_of(PyObject * o)
{
  if (!o)
    return "";
  Ref s(PyObject_Str(o));
  const char * c = s ? PyUnicode_AsUTF8(s.get()) : nullptr;
  if (!c)
  {
    PyErr_Clear();
    return "<unprintable>";
  }
  return c;
}

std::string
attr_str(PyObject * o, const char * name)
{
  Ref a(PyObject_GetAttrString(o, name));
  if (!a)
  {
    PyErr_Clear();
    return "";
  }
  return str_of(a.get());
}

/// "module.Type" (just "Type" for builtins).
std::string
type_name(PyObject * type)
{
  auto mod = attr_str(type, "__module__");
  auto name = attr_str(type, "__qualname__");
  if (name.empty())
    name = reinterpret_cast<PyTypeObject *>(type)->tp_name;
  // neml2's public classes live in private modules: name them where users import them.
  if (mod.rfind("neml2.tensors", 0) == 0)
    mod = "neml2.tensors";
  return (mod.empty() || mod == "builtins") ? name : mod + "." + name;
}

/// "file:line in function" of the innermost frame of a traceback.
std::string
origin(PyObject * tb)
{
  Ref cur = Ref::borrow(tb);
  while (cur)
  {
    Ref next(PyObject_GetAttrString(cur.get(), "tb_next"));
    if (!next || next.get() == Py_None)
    {
      PyErr_Clear();
      break;
    }
    cur = std::move(next);
  }
  if (!cur)
    return "";
  Ref frame(PyObject_GetAttrString(cur.get(), "tb_frame"));
  Ref code(frame ? PyObject_GetAttrString(frame.get(), "f_code") : nullptr);
  if (!code)
  {
    PyErr_Clear();
    return "";
  }
  return attr_str(code.get(), "co_filename") + ":" + attr_str(cur.get(), "tb_lineno") + " in " +
         attr_str(code.get(), "co_name");
}

/// major.minor.patch of a version string ("2.13.0+cu130" -> "2.13.0").
std::string
release_of(const std::string & v)
{
  return v.substr(0, v.find_first_of("+ab"));
}

Handles *
import_neml2()
{
  Gil gil;
  auto fail = [](const std::string & what)
  {
    try
    {
      throw_python_error("neml2::eager: cannot import " + what + " with the Python interpreter " +
                         g_how);
    }
    catch (const std::exception & e)
    {
      throw FatalError(std::string(e.what()) +
                       ". Set NEML2_PYTHON to the python of an environment where neml2-models "
                       "is installed");
    }
  };
  auto h = std::make_unique<Handles>();
  Ref torch(PyImport_ImportModule("torch"));
  if (!torch)
    fail("torch");
  h->torch_version = attr_str(torch.get(), "__version__");
#ifdef NEML2_EAGER_TORCH_VERSION
  if (release_of(h->torch_version) != release_of(NEML2_EAGER_TORCH_VERSION))
    throw FatalError("neml2::eager: the Python interpreter " + g_how + " has torch " +
                     h->torch_version + " but libneml2_eager was built against torch " +
                     NEML2_EAGER_TORCH_VERSION +
                     "; use the environment neml2 was built in (NEML2_PYTHON)");
#endif
  Ref models(PyImport_ImportModule("neml2.models"));
  if (!models)
    fail("neml2.models");
  Ref tensors(PyImport_ImportModule("neml2.tensors"));
  if (!tensors)
    fail("neml2.tensors");
  h->load_model = PyObject_GetAttrString(models.get(), "load_model");
  h->load_input = h->load_model ? PyObject_GetAttrString(models.get(), "load_input") : nullptr;
  h->convergence_error =
      h->load_input ? PyObject_GetAttrString(tensors.get(), "ConvergenceError") : nullptr;
  if (!h->convergence_error)
    fail("neml2.models.load_model, load_input and neml2.tensors.ConvergenceError");
  return h.release(); // alive forever, like the interpreter
}
} // namespace

Gil::Gil() : _state(PyGILState_Ensure()) {}

Gil::~Gil()
{
  PyGILState_Release(_state);
}

bool
python_alive() noexcept
{
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsInitialized() && !Py_IsFinalizing();
#else
  return Py_IsInitialized() && !_Py_IsFinalizing();
#endif
}

const Handles &
interpreter()
{
  if (auto * h = g_handles.load(std::memory_order_acquire))
    return *h;
  std::lock_guard<std::mutex> lock(g_mutex);
  if (auto * h = g_handles.load(std::memory_order_acquire))
    return *h;
  if (!Py_IsInitialized())
    start_interpreter();
  else if (g_how.empty())
  {
    Gil gil;
    Ref sys(PyImport_ImportModule("sys"));
    g_how = (sys ? attr_str(sys.get(), "executable") : std::string("?")) + " (the host's)";
    PyErr_Clear();
  }
  auto * h = import_neml2();
  g_handles.store(h, std::memory_order_release);
  return *h;
}

std::string
interpreter_description()
{
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_how;
}

void
throw_python_error(const std::string & context)
{
  PyObject *type = nullptr, *value = nullptr, *tb = nullptr;
  PyErr_Fetch(&type, &value, &tb);
  if (!type)
    throw FatalError(context + ": Python reported a failure without an exception");
  PyErr_NormalizeException(&type, &value, &tb);
  Ref t(type), v(value), b(tb);
  std::string what = context + ": " + type_name(t.get());
  const auto msg = str_of(v.get());
  if (!msg.empty())
    what += ": " + msg;
  if (b)
  {
    const auto where = origin(b.get());
    if (!where.empty())
      what += " (raised at " + where + ")";
  }
  PyErr_Clear();
  const auto * h = g_handles.load(std::memory_order_acquire);
  if (h && h->convergence_error && PyErr_GivenExceptionMatches(t.get(), h->convergence_error))
    throw ConvergenceError(what);
  throw FatalError(what);
}
} // namespace neml2::eager::detail

namespace neml2::eager
{
std::string
python_interpreter()
{
  detail::interpreter();
  return detail::interpreter_description();
}
} // namespace neml2::eager
