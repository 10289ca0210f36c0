// The Python extension module vramplan._core: a front end like cli/ and server/. Each call takes
// the settings as JSON text (the keys of a scenario file / API body) and answers JSON text built by
// the very functions `vramplan <command> --format json` prints, so that Python's .to_dict() equals
// the CLI's JSON. An Error travels back as its JSON ({"field", "value", "accepted", "reason",
// "message"}) and python/vramplan/_api.py raises vramplan.Error from it.
#include <fmt/format.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "hub/hub_models.h"
#include "validation/validation_modes.h"
#include "vramplan/interop/emit.h"
#include "vramplan/interop/import.h"
#include "vramplan/io/estimate_request.h"
#include "vramplan/io/fit_settings.h"
#include "vramplan/io/inference_request.h"
#include "vramplan/io/plan_settings.h"
#include "vramplan/io/quick_settings.h"
#include "vramplan/io/roofline_settings.h"
#include "vramplan/io/scenario_io.h"
#include "vramplan/perf/hardware.h"
#include "vramplan/perf/roofline.h"
#include "vramplan/perf/step_time.h"
#include "vramplan/plan/planner.h"
#include "vramplan/report/catalog_json.h"
#include "vramplan/report/fit_report.h"
#include "vramplan/report/plan_emit.h"
#include "vramplan/report/plan_report.h"
#include "vramplan/report/quick_report.h"
#include "vramplan/report/roofline_report.h"
#include "vramplan/report/settings_report.h"
#include "vramplan/validation/planner_check.h"
#include "vramplan/validation/validation_json.h"

namespace py = pybind11;
using nlohmann::json;

namespace vramplan::python {
namespace {

// (true, JSON text) or (false, the error's JSON text).
using Answer = std::pair<bool, std::string>;

Answer failed(const Error& error) {
  return {false, json{{"field", error.field},
                      {"value", error.value},
                      {"accepted", error.accepted},
                      {"reason", error.reason},
                      {"message", error.message()}}
                     .dump()};
}

// A model given as a path is read as the CLI reads it (errors name "model").
Result<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return Error{"model", path, "a readable config.json, a preset name or a Hub id",
                 "the file cannot be opened"};
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

Result<json> parse_settings(const std::string& text) {
  json settings = json::parse(text, nullptr, false);
  if (settings.is_discarded() || !settings.is_object())
    return Error{"settings", text, "a JSON object of scenario keys", "not a JSON object"};
  return settings;
}

// "emit" is no scenario setting: it is taken out before the settings are read, as the API does.
Result<std::optional<std::string>> take_emit(json& settings) {
  if (!settings.contains("emit")) return std::optional<std::string>();
  json value = settings["emit"];
  settings.erase("emit");
  if (value.is_null()) return std::optional<std::string>();
  if (!value.is_string())
    return Error{"emit", value.dump(), "a format name (vramplan.emit_formats())", "not a string"};
  return std::optional<std::string>(value.get<std::string>());
}

Answer emitted(const Result<std::string>& config, const std::string& format) {
  if (!config) return failed(config.error());
  return {true, json{{"config", *config}, {"format", format}}.dump()};
}

// estimate and infer alike: settings → the request reader → emitted config or the JSON with the
// checkpoint's parameter check, as the CLI and the server answer.
template <typename Read, typename Emit, typename ToJson>
Answer answer_settings(const std::string& text, Read read, Emit emit_as, ToJson to_json) {
  Result<json> parsed = parse_settings(text);
  if (!parsed) return failed(parsed.error());
  json settings = std::move(parsed).value();
  Result<std::optional<std::string>> emit = take_emit(settings);
  if (!emit) return failed(emit.error());
  const FileReader reader = read_file;
  hub::HubModels hub_models;
  auto result = read(settings, reader, hub_models.fetcher(reader));
  if (!result) return failed(result.error());
  auto answer = std::move(result).value();
  if (*emit) return emitted(emit_as(answer.resolved.scenario, settings, **emit), **emit);
  const std::optional<json> checkpoint =
      hub_models.report(answer.estimate.parameters.total, answer.estimate.warnings);
  json out = to_json(answer);
  if (checkpoint) out["checkpoint"] = *checkpoint;
  return {true, out.dump()};
}

Answer estimate(const std::string& text) {
  return answer_settings(
      text,
      [](const json& s, const FileReader& r, const ModelFetcher& f) {
        return estimate_settings(s, r, f);
      },
      [](const auto& scenario, const json& s, const std::string& format) {
        return emit_training(scenario, s, format);
      },
      [](const SettingsEstimate& a) { return settings_estimate_to_json(a); });
}

// A JSON value as the Python value json.loads would give for its text (objects keep their keys'
// order), without writing and parsing the text.
py::object to_python(const json& j) {
  switch (j.type()) {
    case json::value_t::boolean:
      return py::bool_(j.get<bool>());
    case json::value_t::number_integer:
      return py::int_(j.get<int64_t>());
    case json::value_t::number_unsigned:
      return py::int_(j.get<uint64_t>());
    case json::value_t::number_float:
      return py::float_(j.get<double>());
    case json::value_t::string:
      return py::str(j.get_ref<const std::string&>());
    case json::value_t::array: {
      py::list list(j.size());
      size_t i = 0;
      for (const json& v : j) list[i++] = to_python(v);
      return list;
    }
    case json::value_t::object: {
      py::dict dict;
      for (auto it = j.begin(); it != j.end(); ++it)
        dict[py::str(it.key())] = to_python(it.value());
      return dict;
    }
    default:  // null (binary and discarded values are never in an answer)
      return py::none();
  }
}

// One training estimate kept in C++ for Python to read in parts (python/vramplan/_result.py):
// a top-level key alone when asked for (est.peak), the whole answer only for to_dict()/to_json(),
// each as the Python value json.loads gives for `vramplan estimate --format json`'s text.
class EstimateAnswer {
 public:
  EstimateAnswer(SettingsEstimate answer, std::optional<json> checkpoint)
      : answer_(std::move(answer)), checkpoint_(std::move(checkpoint)) {}
  std::vector<std::string> keys() const {
    std::vector<std::string> keys = settings_estimate_keys(answer_);
    if (checkpoint_) keys.push_back("checkpoint");
    std::sort(keys.begin(), keys.end());
    return keys;
  }
  // One key's value as a Python value (== json.loads of that key's JSON text).
  py::object part(const std::string& key) const {
    if (key == "checkpoint") return checkpoint_ ? to_python(*checkpoint_) : py::none();
    return to_python(settings_estimate_part(answer_, key));
  }
  // The whole answer as a Python value (== json.loads of `vramplan estimate --format json`).
  py::object value() const {
    json out = settings_estimate_to_json(answer_);
    if (checkpoint_) out["checkpoint"] = *checkpoint_;
    return to_python(out);
  }

 private:
  SettingsEstimate answer_;
  std::optional<json> checkpoint_;
};

// estimate() answered as an EstimateAnswer (or, with "emit" or on an error, as JSON text).
struct LazyEstimate {
  Answer text;
  std::optional<EstimateAnswer> answer;
};

LazyEstimate estimate_lazy(const std::string& text) {
  Result<json> parsed = parse_settings(text);
  if (!parsed) return {failed(parsed.error()), std::nullopt};
  json settings = std::move(parsed).value();
  Result<std::optional<std::string>> emit = take_emit(settings);
  if (!emit) return {failed(emit.error()), std::nullopt};
  const FileReader reader = read_file;
  hub::HubModels hub_models;
  Result<SettingsEstimate> result = estimate_settings(settings, reader, hub_models.fetcher(reader));
  if (!result) return {failed(result.error()), std::nullopt};
  SettingsEstimate answer = std::move(result).value();
  if (*emit)
    return {emitted(emit_training(answer.resolved.scenario, settings, **emit), **emit),
            std::nullopt};
  std::optional<json> checkpoint =
      hub_models.report(answer.estimate.parameters.total, answer.estimate.warnings);
  return {{true, ""}, EstimateAnswer(std::move(answer), std::move(checkpoint))};
}

Answer infer(const std::string& text) {
  return answer_settings(
      text,
      [](const json& s, const FileReader& r, const ModelFetcher& f) {
        return infer_settings(s, r, f);
      },
      [](const auto& scenario, const json& s, const std::string& format) {
        return emit_serving(scenario, s, format);
      },
      [](const SettingsInference& a) { return settings_inference_to_json(a); });
}

// `vramplan plan --format json`, or with "emit" the first choice the format can write
// ({config, format, choice (1 = the first), layout, skipped: why better ones could not be}).
Answer plan(const std::string& text) {
  Result<json> parsed = parse_settings(text);
  if (!parsed) return failed(parsed.error());
  json settings = std::move(parsed).value();
  Result<std::optional<std::string>> emit = take_emit(settings);
  if (!emit) return failed(emit.error());
  Result<PlanResult> result = plan_from_settings(settings, read_file);
  if (!result) return failed(result.error());
  if (!*emit) return {true, plan_to_json(*result).dump()};
  Result<PlanEmit> winner = emit_plan_winner(*result, **emit, read_file);
  if (!winner) return failed(winner.error());
  return {true, json{{"config", winner->config},
                     {"format", winner->format},
                     {"choice", winner->choice + 1},
                     {"layout", winner->layout},
                     {"skipped", winner->skipped}}
                    .dump()};
}

// `vramplan fit --format json` (the settings hold "question"): the same reader and writer as the
// CLI and POST /api/fit.
Answer fit(const std::string& text) {
  Result<json> parsed = parse_settings(text);
  if (!parsed) return failed(parsed.error());
  Result<FitAnswer> answer = fit_from_settings(*parsed, read_file);
  if (!answer) return failed(answer.error());
  return {true, fit_to_json(*answer).dump()};
}

// `vramplan roofline --format json`: the same pipeline and writer as the CLI and POST
// /api/roofline (the cluster keys gpus_per_node, intra_node_gbps, inter_node_gbps included).
// "gpu_catalog" (the CLI's --gpu-catalog; not a scenario key) is a catalog's JSON text used
// instead of the built-in one; its errors name "gpu_catalog: <field>".
Answer roofline(const std::string& text) {
  Result<json> parsed = parse_settings(text);
  if (!parsed) return failed(parsed.error());
  json settings = std::move(parsed).value();
  std::optional<GpuCatalog> catalog;
  if (settings.contains("gpu_catalog")) {
    const json value = settings["gpu_catalog"];
    settings.erase("gpu_catalog");
    if (!value.is_null()) {
      if (!value.is_string())
        return failed(Error{"gpu_catalog", value.dump(),
                            "a GPU catalog file, its JSON text or a dict (as data/gpus.json)",
                            "not text"});
      Result<GpuCatalog> read = parse_gpu_catalog(value.get<std::string>());
      if (!read) {
        Error e = read.error();
        e.field = "gpu_catalog: " + e.field;
        return failed(e);
      }
      catalog = std::move(read).value();
    }
  }
  Result<SettingsRoofline> result =
      roofline_settings(settings, read_file, nullptr, catalog ? *catalog : builtin_gpus());
  if (!result) return failed(result.error());
  return {true, settings_roofline_to_json(*result).dump()};
}

// `vramplan quick --format json` (docs/quick.md); "example" starts from a shipped scenario.
Answer quick(const std::string& text) {
  Result<json> parsed = parse_settings(text);
  if (!parsed) return failed(parsed.error());
  Result<QuickAnswer> answer = quick_settings(*parsed);
  if (!answer) return failed(answer.error());
  return {true, quick_to_json(*answer).dump()};
}

// `vramplan validate [--dataset D] [--serving | --throughput | --planner | --bands] [--check]
// --format json`: {"result": the CLI's JSON, "gate": --check's counts} (mode "" = memory; the
// memory validation of every dataset carries the uncertainty bands, as the CLI's does).
Answer validate(const std::string& mode, const std::string& dataset, bool check) {
  static const std::vector<std::string> kModes = {"", "serving", "throughput", "planner", "bands"};
  if (std::find(kModes.begin(), kModes.end(), mode) == kModes.end())
    return failed(Error{"mode", mode, "serving, throughput, planner or bands", "no such mode"});
  if (!dataset.empty()) {
    if (!mode.empty())
      return failed(Error{"dataset", dataset, "the memory validation",
                          fmt::format("{} does not take it", mode)});
    const std::vector<std::string>& names = validation_datasets();
    if (std::find(names.begin(), names.end(), dataset) == names.end())
      return failed(Error{"dataset", dataset, fmt::format("{}", fmt::join(names, ", ")),
                          "no measured dataset of that name"});
  }
  if (check && mode != "" && mode != "throughput")
    return failed(Error{"check", "true", "the memory validation or throughput",
                        fmt::format("{} does not take it", mode)});
  json gate = {{"failed", 0}, {"open", 0}};
  json out;
  if (mode == "serving") {
    Result<ServingValidation> v = validate_serving();
    if (!v) return failed(v.error());
    out = serving_validation_to_json(*v);
  } else if (mode == "planner") {
    Result<PlannerCheck> v = check_planner_on_ultrascale();
    if (!v) return failed(v.error());
    out = planner_check_to_json(*v);
  } else if (mode == "throughput") {
    Result<ThroughputReport> v = validate_throughput();
    if (!v) return failed(v.error());
    out = throughput_report_to_json(*v);
    gate["failed"] = throughput_targets_missed(*v);
  } else {
    Result<ValidationReport> report = validate_measurements();
    if (!report) return failed(report.error());
    if (mode == "bands") {
      out = bands_to_json(derive_bands(*report));
    } else {
      out = validation_to_json(*report, dataset);
      if (dataset.empty()) out["uncertainty"] = bands_to_json(derive_bands(*report));
      const MemoryGate g = memory_gate(*report, dataset);
      gate = {{"failed", g.failed}, {"open", g.open}};
    }
  }
  return {true, json{{"result", std::move(out)}, {"gate", std::move(gate)}}.dump()};
}

// The files a launch config names (a DeepSpeed JSON beside a torchrun line, ...), for the caller
// to read beside the config as the CLI's --from does.
std::vector<std::string> named_files(const std::string& text, const std::string& format,
                                     const std::string& beside) {
  Result<json> settings = parse_settings(beside);
  return files_named(text, format, settings ? *settings : json::object());
}

json formats_json() {
  json out = {{"from", json::array()}, {"emit", json::array()}};
  for (const ImportFormat& f : import_formats())
    out["from"].push_back({{"name", f.name}, {"what", f.what}});
  for (const EmitFormat& f : emit_formats())
    out["emit"].push_back({{"name", f.name}, {"what", f.what}});
  return out;
}

// Runs `f` with the GIL released: the core is pure C++ and thread-safe, so other Python threads
// (and several plans at once) run alongside.
template <typename F>
Answer released(F f, const std::string& text) {
  py::gil_scoped_release release;
  return f(text);
}

}  // namespace
}  // namespace vramplan::python

PYBIND11_MODULE(_core, m) {
  namespace vp = vramplan::python;
  m.doc() = "vramplan's C++ core; use the vramplan package, not this module.";
  m.def("estimate", [](const std::string& s) { return vp::released(vp::estimate, s); });
  py::class_<vp::EstimateAnswer>(m, "EstimateAnswer")
      .def("keys", &vp::EstimateAnswer::keys)
      .def("part", &vp::EstimateAnswer::part)
      .def("value", &vp::EstimateAnswer::value);
  // (True, EstimateAnswer), or (ok, JSON text) for emit= and errors.
  m.def("estimate_answer", [](const std::string& s) -> py::tuple {
    vp::LazyEstimate lazy;
    {
      py::gil_scoped_release release;
      lazy = vp::estimate_lazy(s);
    }
    if (lazy.answer) return py::make_tuple(true, std::move(*lazy.answer));
    return py::make_tuple(lazy.text.first, lazy.text.second);
  });
  m.def("infer", [](const std::string& s) { return vp::released(vp::infer, s); });
  m.def("plan", [](const std::string& s) { return vp::released(vp::plan, s); });
  m.def("fit", [](const std::string& s) { return vp::released(vp::fit, s); });
  m.def("roofline", [](const std::string& s) { return vp::released(vp::roofline, s); });
  m.def("models", [] { return vramplan::presets_json().dump(); });
  m.def("gpus", [] { return vramplan::gpus_json().dump(); });
  m.def("formats", [] { return vp::formats_json().dump(); });
  m.def("files_named", &vp::named_files);
  m.def("quick", [](const std::string& s) { return vp::released(vp::quick, s); });
  m.def("quick_examples", [] { return vramplan::quick_examples_json().dump(); });
  m.def("validate", [](const std::string& mode, const std::string& dataset, bool check) {
    py::gil_scoped_release release;
    return vp::validate(mode, dataset, check);
  });
}
