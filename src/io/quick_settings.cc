#include "vramplan/io/quick_settings.h"

#include <fmt/format.h>

#include <cctype>
#include <cmath>

#include "base/term.h"
#include "io/setting_reader.h"
#include "vramplan/io/estimate_request.h"
#include "vramplan/io/inference_request.h"
#include "vramplan/io/options.h"

namespace vramplan {
namespace {

// The three scenarios issue 21 lists, with what the calculator they come from reports.
constexpr QuickExample kExamples[] = {
    {"medium-training", "medium transformer training",
     R"({"mode": "training", "params": "700M", "weight_dtype": "bf16", "grad_dtype": "fp32",
         "batch": 8, "seq_len": 2048, "layers": 32, "hidden": 4096})",
     44.50},
    {"serving", "serving configuration",
     R"({"mode": "inference", "params": "700M", "weight_dtype": "int8", "kv_dtype": "bf16",
         "batch": 4, "seq_len": 1024, "layers": 32, "hidden": 4096})",
     8.37},
    {"large-finetune", "large fine-tuning run",
     R"({"mode": "training", "params": "1300M", "weight_dtype": "bf16", "grad_dtype": "fp32",
         "batch": 4, "seq_len": 4096, "layers": 40, "hidden": 5120})",
     66.70},
};

constexpr const char* kParamsAccepted =
    "a positive parameter count: 700M, 1.3B, 1300M, 2T, 7e8 or a plain number such as 700000000";
constexpr double kMaxParams = 1e14;

std::string example_names() {
  std::string out;
  for (const QuickExample& e : kExamples) out += (out.empty() ? "" : ", ") + std::string(e.name);
  return out;
}

std::optional<Error> require(const nlohmann::json& settings, const char* key) {
  if (settings.contains(key) && !settings[key].is_null()) return std::nullopt;
  return Error{
      key, "(not given)",
      fmt::format("{} (or --example {})", find_option(quick_options(), key)->help, example_names()),
      "required"};
}

std::optional<Error> read_dtype(const SettingReader& r, const char* key, DType& out) {
  return r.dtype(key, out);
}

// The full estimate: `vramplan estimate` (training) or `vramplan infer` (inference) on the
// matching architecture, through the same pipeline those commands run.
Result<QuickFull> full_estimate(const QuickInputs& in) {
  const int64_t tokens = in.cache_tokens > 0 ? in.cache_tokens : in.seq_len;
  Result<nlohmann::json> config =
      matching_config(in.layers, in.hidden, std::max(in.seq_len, tokens));
  if (!config) return config.error();
  const FileReader no_files = [](const std::string& path) -> Result<std::string> {
    return Error{"model", path, "an inline model_config", "no files are read here"};
  };
  QuickFull full;
  full.model = fmt::format("Llama-2 shape, {} layers × {}", in.layers, in.hidden);
  nlohmann::json s = {{"model_config", *config}};
  if (in.mode == QuickMode::kTraining) {
    if (!is_float_format(in.weights.format) && in.weights.format != WeightFormat::kFp8)
      return Error{"weight_dtype", weight_format_name(in.weights.format),
                   "fp32, bf16, fp16 or fp8 for a full training estimate",
                   "vramplan's training estimate trains float weights (a quantised base is "
                   "QLoRA: `vramplan estimate --finetune qlora`)"};
    s["seq_len"] = in.seq_len;
    s["micro_batch"] = in.batch;
    s["param_dtype"] = is_float_format(in.weights.format)
                           ? std::string(dtype_name(float_dtype(in.weights.format)))
                           : std::string("fp8");
    s["grad_dtype"] = dtype_name(in.grad_dtype);
    s["activation_dtype"] = dtype_name(in.activation_dtype);
    s["optimizer"] = optimizer_name(in.optimizer);
    s["optimizer_dtype"] = dtype_name(in.optimizer_dtype);
    s["master_weights"] = in.master_weights;
    s["recompute"] = in.checkpoint_factor < 1.0 ? "full" : "none";
    Result<SettingsEstimate> e = estimate_settings(s, no_files);
    if (!e) return e.error();
    const Estimate& est = e->estimate;
    full.command = "estimate";
    full.parameters = est.parameters.total;
    full.total_bytes = est.peak.device_bytes;
    full.allocated_bytes = est.peak.allocated_bytes;
    full.rows = est.stages.at(est.peak.stage).rows;
  } else {
    s["context"] = tokens;
    s["batch"] = in.batch;
    s["weight_dtype"] = weight_format_name(in.weights.format);
    s["kv_dtype"] = dtype_name(in.kv_dtype);
    if (in.activation_dtype != DType::kFp8 && in.activation_dtype != DType::kFp4)
      s["dtype"] = dtype_name(in.activation_dtype);
    Result<SettingsInference> e = infer_settings(s, no_files);
    if (!e) return e.error();
    full.command = "infer";
    full.parameters = e->estimate.parameters.total;
    full.total_bytes = e->estimate.device_bytes;
    full.allocated_bytes = e->estimate.allocated_bytes;
    full.rows = e->estimate.rows;
  }
  full.settings = std::move(s);
  return full;
}

}  // namespace

std::span<const QuickExample> quick_examples() { return kExamples; }

Result<int64_t> parse_param_count(const std::string& field, const nlohmann::json& value) {
  double count = 0;
  std::string text = setting_text(value);
  if (value.is_number()) {
    count = value.get<double>();
  } else if (value.is_string()) {
    std::string s = value.get<std::string>();
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
    double scale = 1;
    if (!s.empty()) {
      switch (std::tolower(static_cast<unsigned char>(s.back()))) {
        case 'k':
          scale = 1e3;
          break;
        case 'm':
          scale = 1e6;
          break;
        case 'b':
        case 'g':
          scale = 1e9;
          break;
        case 't':
          scale = 1e12;
          break;
        default:
          break;
      }
      if (scale != 1) s.pop_back();
    }
    size_t used = 0;
    const bool digits = !s.empty() && (std::isdigit(static_cast<unsigned char>(s[0])) ||
                                       (s[0] == '.' && s.size() > 1));
    try {
      if (digits) count = std::stod(s, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (!digits || used != s.size()) return Error{field, text, kParamsAccepted, ""};
    count *= scale;
  } else {
    return Error{field, text, kParamsAccepted, ""};
  }
  if (!std::isfinite(count) || count < 1 || count > kMaxParams)
    return Error{field, text, kParamsAccepted, "at least 1 and at most 100T"};
  const double rounded = std::round(count);
  if (std::fabs(rounded - count) > 1e-6 * count && value.is_number())
    return Error{field, text, kParamsAccepted, "not a whole number"};
  return static_cast<int64_t>(rounded);
}

Result<QuickInputs> resolve_quick(const nlohmann::json& given) {
  if (auto e = unknown_setting(given, quick_options(), "quick")) return *e;
  nlohmann::json settings = nlohmann::json::object();
  if (given.contains("example") && !given["example"].is_null()) {
    const nlohmann::json& name = given["example"];
    const QuickExample* found = nullptr;
    for (const QuickExample& e : kExamples)
      if (name.is_string() && name.get<std::string>() == e.name) found = &e;
    if (found == nullptr) return Error{"example", setting_text(name), example_names(), ""};
    settings = nlohmann::json::parse(found->settings);
  }
  for (const auto& [key, value] : given.items())
    if (key != "example") settings[key] = value;

  for (const char* key : {"params", "layers", "hidden"})
    if (auto e = require(settings, key)) return *e;
  QuickInputs in;
  Result<int64_t> params = parse_param_count("params", settings["params"]);
  if (!params) return params.error();
  in.params = *params;
  const SettingReader r(settings);
  if (auto e = r.integer("layers", in.layers)) return *e;
  if (auto e = r.integer("hidden", in.hidden)) return *e;
  if (auto e = r.integer("batch", in.batch)) return *e;
  if (auto e = r.integer("seq_len", in.seq_len)) return *e;
  if (auto e = r.choice("mode", kQuickModeNames, in.mode)) return *e;
  std::string weights = "bf16";
  if (auto e = r.text("weight_dtype", weights)) return *e;
  const std::optional<WeightFormat> format = parse_weight_format(weights);
  if (!format)
    return Error{"weight_dtype", weights, find_option(quick_options(), "weight_dtype")->choices,
                 ""};
  in.weights.format = *format;
  if (auto e = read_dtype(r, "grad_dtype", in.grad_dtype)) return *e;
  if (auto e = read_dtype(r, "activation_dtype", in.activation_dtype)) return *e;
  if (auto e = read_dtype(r, "optimizer_dtype", in.optimizer_dtype)) return *e;
  in.kv_dtype = in.activation_dtype;
  if (auto e = read_dtype(r, "kv_dtype", in.kv_dtype)) return *e;
  if (auto e = r.boolean("master_weights", in.master_weights)) return *e;
  if (auto e = r.choice("optimizer", kOptimizerNames, in.optimizer)) return *e;
  if (r.has("activation_multiplier")) {
    double m = 0;
    if (auto e = r.number("activation_multiplier", m)) return *e;
    in.activation_multiplier = m;
  }
  if (auto e = r.number("checkpoint_factor", in.checkpoint_factor)) return *e;
  in.kv_cache = in.mode == QuickMode::kInference;
  if (auto e = r.boolean("kv_cache", in.kv_cache)) return *e;
  if (auto e = r.integer("cache_tokens", in.cache_tokens)) return *e;
  if (r.has("overhead_gib")) {
    double gib = 0;
    if (auto e = r.number("overhead_gib", gib)) return *e;
    if (!(gib >= 0 && gib <= 1024))
      return Error{"overhead_gib", setting_text(settings["overhead_gib"]),
                   "a number of GiB from 0 to 1024", ""};
    in.overhead_bytes = std::llround(gib * double(int64_t{1} << 30));
  }
  if (auto e = r.number("allocator_overhead", in.allocator_overhead)) return *e;
  return in;
}

Result<QuickAnswer> quick_settings(const nlohmann::json& settings) {
  if (!settings.is_object())
    return Error{"settings", setting_text(settings), "a JSON object of quick settings", ""};
  Result<QuickInputs> in = resolve_quick(settings);
  if (!in) return in.error();
  Result<QuickEstimate> estimate = quick_estimate(*in);
  if (!estimate) return estimate.error();
  QuickAnswer out;
  out.inputs = *in;
  out.estimate = std::move(estimate).value();
  if (settings.contains("example") && settings["example"].is_string()) {
    out.example = settings["example"].get<std::string>();
    for (const QuickExample& e : kExamples)
      if (out.example == e.name) out.calculator_gib = e.calculator_gib;
  }
  Result<QuickFull> full = full_estimate(*in);
  if (full)
    out.full = std::move(full).value();
  else
    out.notes.push_back("no full estimate of the matching architecture: " + full.error().message());
  if (in->params > 0 && out.full && out.full->parameters > 0) {
    const double ratio = static_cast<double>(out.full->parameters) / in->params;
    if (ratio > 1.5 || ratio < 1 / 1.5)
      out.notes.push_back(fmt::format(
          "params = {} but {} layers × {} hold about {} parameters in the matching architecture "
          "(12·L·h² for attention and MLP alone is {}): the coarse rows scale with params, the "
          "full estimate with the architecture",
          group_digits(in->params), in->layers, in->hidden, group_digits(out.full->parameters),
          group_digits(Wide{12} * in->layers * in->hidden * in->hidden)));
  }
  return out;
}

}  // namespace vramplan
