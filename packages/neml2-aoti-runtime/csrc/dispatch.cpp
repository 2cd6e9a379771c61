// pybind11 binding of neml2::aoti::DispatchedModel: neml2.aoti.DispatchedModel.
//
// The surface every model class shares (bind_surface.h: name-keyed forward / jvp /
// jacobian, names, types, base and sub-batch shapes, torch device and dtype, path,
// named_parameters / set_parameter), plus the workers and the scheduler. Calls
// release the GIL: the workers are C++ threads. Errors are translated by the
// module's translator (binding.cpp).
#include "bind_surface.h"
#include "neml2/aoti/dispatched_model.h"
#include "neml2/aoti/errors.h"

#include <pybind11/stl.h>
#include <torch/csrc/utils/pybind.h>

namespace py = pybind11;
using namespace neml2::aoti;

namespace
{
std::string
dtype_string(const py::object & dtype)
{
  if (dtype.is_none())
    return "";
  std::string s = py::str(dtype);
  return s.rfind("torch.", 0) == 0 ? s.substr(6) : s;
}

std::shared_ptr<Scheduler>
scheduler_of(const std::string & name, int64_t chunk_size, const std::vector<double> & weights)
{
  if (name == "round-robin")
    return std::make_shared<RoundRobinScheduler>(chunk_size);
  if (name == "queue")
    return std::make_shared<QueueScheduler>(chunk_size);
  if (name == "hybrid")
    return std::make_shared<HybridScheduler>(weights);
  return make_scheduler(name); // FatalError naming the known ones
}
} // namespace

void
bind_dispatch(py::module_ & m)
{
  py::class_<DispatchedModel> cls(
      m,
      "DispatchedModel",
      R"(A compiled neml2 model whose batched calls are split across workers.

``DispatchedModel(path, workers=["cpu", "cpu"], scheduler="round-robin", device=None,
dtype=None, threads_per_worker=0, chunk_size=0, weights=None)``: *workers* are "cpu"
(one thread each) and "cuda:N" (one per GPU); *scheduler* is "round-robin",
"hybrid" (static split weighted by *weights* or by a calibration on the first
large call) or "queue" (workers pull *chunk_size*-point chunks); *device* is
where inputs and outputs live (default cpu); *dtype* picks the compiled target.
Same surface as neml2.aoti.Model; see docs/cpp-dispatch.md.)");
  cls.def(py::init(
              [](const py::object & path,
                 const std::vector<std::string> & workers,
                 const std::string & scheduler,
                 const py::object & device,
                 const py::object & dtype,
                 int threads_per_worker,
                 int64_t chunk_size,
                 const std::optional<std::vector<double>> & weights)
              {
                const std::string p = py::str(py::module_::import("os").attr("fspath")(path));
                const std::string dev = device.is_none() ? "cpu" : std::string(py::str(device));
                DispatchOptions opts;
                opts.threads_per_worker = threads_per_worker;
                auto s =
                    scheduler_of(scheduler, chunk_size, weights.value_or(std::vector<double>{}));
                const std::string dt = dtype_string(dtype);
                py::gil_scoped_release release;
                return std::make_unique<DispatchedModel>(p, workers, s, dev, dt, opts);
              }),
          py::arg("path"),
          py::arg("workers") = std::vector<std::string>{"cpu", "cpu"},
          py::arg("scheduler") = "round-robin",
          py::arg("device") = py::none(),
          py::arg("dtype") = py::none(),
          py::arg("threads_per_worker") = 0,
          py::arg("chunk_size") = 0,
          py::arg("weights") = py::none())
      .def_property_readonly(
          "workers",
          [](const DispatchedModel & self)
          {
            py::list out;
            for (const auto & w : self.workers())
              out.append(py::make_tuple(w.device, w.threads));
            return out;
          },
          "[(device, intra-op threads)] per worker.")
      .def_property_readonly(
          "scheduler",
          [](DispatchedModel & self)
          {
            return self.scheduler().name();
          },
          "Name of the scheduler.")
      .def("__repr__",
           [](DispatchedModel & self)
           {
             std::string w;
             for (const auto & x : self.workers())
               w += (w.empty() ? "" : ", ") + x.device;
             return "neml2.aoti.DispatchedModel('" + self.path() + "', workers=[" + w +
                    "], scheduler=" + self.scheduler().name() + ")";
           });
  neml2::python::bind_surface(cls);

  m.def("available_devices",
        &available_devices,
        "Worker devices torch can see here: 'cpu', then 'cuda:N' per GPU.");
}
