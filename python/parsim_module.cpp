// parsim Python module: the command-line commands as functions on the same engine (sim/api). Keyword arguments are the
// CLI's flags without dashes, '-' → '_' (`--gpus-per-node` → gpus_per_node); each function returns what the command
// prints with `--format json`, as a dict. Bad input raises ValueError with the CLI's one-line message (the text after
// `parsim: error: `). The simulation runs without the GIL, so long sweeps do not block other Python threads.
#include "sim/api/api.hpp"
#include "sim/core/error.hpp"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>

namespace py = pybind11;
using nlohmann::json;

namespace {

// A Python value as JSON: bool, int, float, str, os.PathLike (its path), None, and lists/tuples of these.
json to_json(const py::handle& v, const std::string& key) {
  if (v.is_none()) return nullptr;
  if (py::isinstance<py::bool_>(v)) return v.cast<bool>();
  if (py::isinstance<py::int_>(v)) return v.cast<long long>();
  if (py::isinstance<py::float_>(v)) return v.cast<double>();
  if (py::isinstance<py::str>(v)) return v.cast<std::string>();
  if (py::hasattr(v, "__fspath__")) return py::module_::import("os").attr("fspath")(v).cast<std::string>();
  if (py::isinstance<py::list>(v) || py::isinstance<py::tuple>(v)) {
    json a = json::array();
    for (const py::handle& x : v) a.push_back(to_json(x, key));
    return a;
  }
  throw parsim::InputError(key + " = " + py::repr(v).cast<std::string>() +
                           " is not valid (give a bool, number, string, path or a list of them)");
}

json request(const py::kwargs& kw) {
  json r = json::object();
  for (const auto& [k, v] : kw) {
    const std::string key = k.cast<std::string>();
    if (v.is_none()) continue;  // None = not given (the option's default)
    r[key] = to_json(v, key);
  }
  return r;
}

// Paths given positionally: one path or a list of them.
json paths(const py::handle& p) {
  json a = to_json(p, "paths");
  if (!a.is_array()) a = json::array({a});
  return a;
}

py::object to_python(const json& j) {
  // Through Python's json module: the dict is the CLI's JSON text read back, key order included.
  static py::object loads = py::module_::import("json").attr("loads");
  return loads(j.dump());
}

// Runs fn(request) without the GIL; InputError becomes ValueError.
py::object call(json (*fn)(const json&), const json& req) {
  json out;
  std::string error;
  {
    py::gil_scoped_release release;
    try {
      out = fn(req);
    } catch (const parsim::InputError& e) {
      error = e.what();
    }
  }
  if (!error.empty()) {
    for (char& c : error)
      if (c == '\n' || c == '\r') c = ' ';
    throw py::value_error(error);
  }
  return to_python(out);
}

}  // namespace

PYBIND11_MODULE(parsim, m) {
  m.doc() =
      "parsim: predict the step time, MFU, memory per GPU, pipeline bubble and exposed communication of a parallel LLM "
      "training plan, without a GPU, by simulating one training step (the engine of the `parsim` command line).\n\n"
      "Every function takes the command's options as keyword arguments named after its flags, without dashes and "
      "with '-' -> '_' (`--gpus-per-node 4` -> gpus_per_node=4, a switch such as `--sp` -> sp=True), and returns the "
      "dict that `parsim <command> ... --format json` prints. Bad input raises ValueError with the command line's "
      "one-line message. See README.md (Python) and docs/cli.md.";
  m.attr("__version__") = PARSIM_VERSION;
  // Bad input found while reading the keyword arguments (before the GIL is released) is a ValueError too.
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const parsim::InputError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    }
  });

  m.def(
      "predict", [](const py::kwargs& kw) { return call(&parsim::api::predict, request(kw)); },
      "predict(model, plan, gpu='h100', seq=None, gbs=None, mbs=1, recompute='none', sp=False, ..., svg=None, "
      "trace=None) -> dict\n\n"
      "Simulate one training step of one plan: `parsim predict --format json`. advice=True adds 'advice' (why the "
      "plan is slow or does not fit, the memory each remedy frees, the largest micro-batch that fits). Example: "
      "predict(model='llama7b', plan='tp8pp2dp4')['step_time_s']. svg='step.svg' also writes the picture of the "
      "step; trace='t.json' the Chrome trace.");
  m.def(
      "compare", [](const py::kwargs& kw) { return call(&parsim::api::compare, request(kw)); },
      "compare(model, plan=['tp8pp2dp4', 'tp4pp4dp4'], gpu='h100', ...) -> dict\n\n"
      "Several plans of one model and cluster side by side: `parsim compare --format json`. 'plans' holds each "
      "plan's predict dict plus 'versus_best', one line saying where its time goes compared with the best plan "
      "('best'); plan= a list or a comma list.");
  m.def(
      "sweep", [](const py::kwargs& kw) { return call(&parsim::api::sweep, request(kw)); },
      "sweep(model, gpus, gpu='h100', seq=None, gbs=None, top=10, all=False, threads=0, tp='1,2,4,8', ...) -> dict\n\n"
      "Search the plan space: `parsim sweep --format json` ('results' fastest first; filters as comma lists, e.g. "
      "tp='1,2,4,8' or tp=[1, 2, 4, 8]). The search runs without the GIL.");
  m.def(
      "profile",
      [](const py::object& files, const py::kwargs& kw) {
        json r = request(kw);
        r["files"] = paths(files);
        return call(&parsim::api::profile, r);
      },
      py::arg("paths"),
      "profile(paths, all_kernels=False, ...) -> dict\n\n"
      "Measure real PyTorch-profiler (Kineto) traces, one file per rank (a path or a list of paths; plain or .gz): "
      "`parsim profile --format json`.");
  m.def(
      "calibrate",
      [](const py::object& file, const py::kwargs& kw) {
        json r = request(kw);
        r["file"] = to_json(file, "path");
        return call(&parsim::api::calibrate, r);
      },
      py::arg("path"),
      "calibrate(path, out=None, gpu=None, ranks=None, nodes=None, gpus_per_node=None, device=None, min_gflop=None, "
      "precision=None)"
      " -> dict\n\n"
      "Fit the network model to an nccl-tests / rccl-tests output file, or the GPU's GEMM model to a GEMM table (XLA "
      "GemmPerfTable or CSV of m, n, k, TFLOP/s): `parsim calibrate --format json`.");
  m.def(
      "validate", [](const py::kwargs& kw) { return call(&parsim::api::validate, request(kw)); },
      "validate(profile, model, plan, ...) -> dict\n\n"
      "Simulate a plan and measure its profile side by side with relative errors: `parsim validate --format json` "
      "(profile= a path or a list of Kineto trace paths, one per rank; the other keywords as predict).");
  m.def(
      "merge",
      [](const py::object& files, const py::kwargs& kw) {
        json r = request(kw);
        r["files"] = paths(files);
        return call(&parsim::api::merge, r);
      },
      py::arg("paths"),
      "merge(paths, top=10, all=False) -> dict\n\nCombine the JSON of several `sweep --shard i/N` runs into one "
      "ranking: `parsim merge --format json`.");
}
