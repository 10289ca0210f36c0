#include "vramplan/perf/hardware.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>

#include "base/embedded_data.h"
#include "base/text.h"

namespace vramplan {
namespace {

using nlohmann::json;

constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kGiB = 1024.0 * kMiB;
// Sizes above these are typos, and would overflow int64 bytes long before they made sense.
constexpr double kMaxNominalGb = 1e6;  // 1 PB
constexpr double kMaxUsableMib = 1e9;  // ~1 PB
constexpr std::string_view kCatalogShape =
    R"({"gpus": [{"id", "name", "nominal_gb", "usable_mib", "source"}, ...]})";

// The value as the user wrote it, for error messages. Parsed strings are valid UTF-8, but
// replace rather than throw in case a caller hands us a json built some other way.
std::string shown(const json& value) {
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

// Records where nlohmann's parser gave up, so that a bad catalog names its line and column
// (the DOM parser in no-exception mode only says "discarded").
class ErrorLocator : public nlohmann::json_sax<json> {
 public:
  std::string message;
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return true; }
  bool key(string_t&) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    message = e.what();
    // Drop the "[json.exception.parse_error.101] " prefix: it means nothing to a user.
    if (auto end = message.find("] "); message.starts_with("[json.") && end != std::string::npos) {
      message.erase(0, end + 2);
    }
    return false;
  }
};

Error syntax_error(std::string_view text) {
  ErrorLocator locator;
  json::sax_parse(text.begin(), text.end(), &locator, json::input_format_t::json, true, true);
  return Error{"gpu catalog", "(not valid JSON)", std::string(kCatalogShape), locator.message};
}

Result<std::string> read_string(const json& gpu, const std::string& path, const char* key,
                                bool required) {
  const std::string field = path + "." + key;
  if (!gpu.contains(key)) {
    if (!required) return std::string();
    return Error{field, "(missing)", "a non-empty string", ""};
  }
  const json& value = gpu[key];
  if (!value.is_string()) return Error{field, shown(value), "a string", ""};
  std::string text = value.get<std::string>();
  if (required && text.empty()) return Error{field, "\"\"", "a non-empty string", ""};
  return text;
}

// Ids are typed on command lines and listed comma-separated, so they carry neither.
Result<std::string> read_id(const json& gpu, const std::string& path) {
  Result<std::string> id = read_string(gpu, path, "id", true);
  if (!id) return id;
  if (id->find_first_of(", \t\r\n") != std::string::npos) {
    return Error{path + ".id", shown(*id), "an id without spaces or commas, e.g. \"h100-80gb\"",
                 ""};
  }
  return id;
}

Result<double> read_size(const json& gpu, const std::string& path, const char* key, double max,
                         std::string_view unit) {
  const std::string field = path + "." + key;
  const std::string accepted = fmt::format("a positive number of {} up to {:g}", unit, max);
  if (!gpu.contains(key)) return Error{field, "(missing)", accepted, ""};
  const json& value = gpu[key];
  if (!value.is_number()) return Error{field, shown(value), accepted, ""};
  const double size = value.get<double>();
  if (!(size > 0) || size > max) return Error{field, shown(value), accepted, ""};
  return size;
}

// An optional speed: absent or null = 0 ("not known"), else a number in [0, max].
std::optional<Error> read_speed(const json& gpu, const std::string& path, const char* key,
                                double max, std::string_view unit, double& out) {
  if (!gpu.contains(key) || gpu[key].is_null()) return std::nullopt;
  const json& value = gpu[key];
  const std::string accepted =
      fmt::format("a number of {} from 0 to {:g}, or null when the GPU has none", unit, max);
  if (!value.is_number()) return Error{path + "." + key, shown(value), accepted, ""};
  const double number = value.get<double>();
  if (!(number >= 0) || number > max) return Error{path + "." + key, shown(value), accepted, ""};
  out = number;
  return std::nullopt;
}

// The optional speed fields (see hardware.h); older catalogs without them still parse.
std::optional<Error> read_speeds(const json& gpu, const std::string& path, Gpu& out) {
  constexpr double kMaxTflops = 1e6;  // an exaflop per GPU is a typo
  constexpr double kMaxGbps = 1e6;    // a petabyte per second is a typo
  const struct {
    const char* key;
    double max;
    const char* unit;
    double* field;
  } speeds[] = {
      {"bf16_tflops", kMaxTflops, "TFLOP/s", &out.bf16_tflops},
      {"fp16_tflops", kMaxTflops, "TFLOP/s", &out.fp16_tflops},
      {"fp8_tflops", kMaxTflops, "TFLOP/s", &out.fp8_tflops},
      {"fp4_tflops", kMaxTflops, "TFLOP/s", &out.fp4_tflops},
      {"tf32_tflops", kMaxTflops, "TFLOP/s", &out.tf32_tflops},
      {"fp32_tflops", kMaxTflops, "TFLOP/s", &out.fp32_tflops},
      {"hbm_gbps", kMaxGbps, "GB/s", &out.hbm_gbps},
      {"nvlink_gbps", kMaxGbps, "GB/s", &out.nvlink_gbps},
      {"inter_node_gbps", kMaxGbps, "GB/s", &out.inter_node_gbps},
      {"host_memory_gib", 1e7, "GiB", &out.host_memory_gib},
      {"host_link_gbps", kMaxGbps, "GB/s", &out.host_link_gbps},
      {"host_memory_gbps", kMaxGbps, "GB/s", &out.host_memory_gbps},
  };
  for (const auto& speed : speeds) {
    if (auto e = read_speed(gpu, path, speed.key, speed.max, speed.unit, *speed.field)) return e;
  }
  if (gpu.contains("gpus_per_node") && !gpu["gpus_per_node"].is_null()) {
    const json& value = gpu["gpus_per_node"];
    if (!value.is_number_integer() || value.get<int64_t>() < 1 || value.get<int64_t>() > 1024) {
      return Error{path + ".gpus_per_node", shown(value), "an integer from 1 to 1024", ""};
    }
    out.gpus_per_node = static_cast<int>(value.get<int64_t>());
  }
  if (gpu.contains("sm_count") && !gpu["sm_count"].is_null()) {
    const json& value = gpu["sm_count"];
    if (!value.is_number_integer() || value.get<int64_t>() < 1 || value.get<int64_t>() > 100000) {
      return Error{path + ".sm_count", shown(value),
                   "an integer from 1 to 100000 (streaming multiprocessors), or null", ""};
    }
    out.sm_count = static_cast<int>(value.get<int64_t>());
  }
  Result<std::string> speed_source = read_string(gpu, path, "speed_source", false);
  if (!speed_source) return speed_source.error();
  out.speed_source = std::move(speed_source).value();
  return std::nullopt;
}

Result<Gpu> parse_gpu(const json& gpu, const std::string& path) {
  if (!gpu.is_object()) return Error{path, shown(gpu), "an object", ""};
  Result<std::string> id = read_id(gpu, path);
  if (!id) return id.error();
  Result<std::string> name = read_string(gpu, path, "name", true);
  if (!name) return name.error();
  Result<double> nominal_gb = read_size(gpu, path, "nominal_gb", kMaxNominalGb, "GB (10^9 B)");
  if (!nominal_gb) return nominal_gb.error();
  Result<double> usable_mib = read_size(gpu, path, "usable_mib", kMaxUsableMib, "MiB (2^20 B)");
  if (!usable_mib) return usable_mib.error();
  Result<std::string> source = read_string(gpu, path, "source", false);
  if (!source) return source.error();
  Gpu result;
  result.id = std::move(id).value();
  result.name = std::move(name).value();
  result.nominal_bytes = std::llround(*nominal_gb * 1e9);
  result.usable_bytes = std::llround(*usable_mib * kMiB);
  result.source = std::move(source).value();
  if (std::optional<Error> e = read_speeds(gpu, path, result)) return *std::move(e);
  return result;
}

GpuCatalog load_builtin() {
  for (const EmbeddedFile& file : embedded_files()) {
    if (std::string_view(file.path) != "gpus.json") continue;
    Result<GpuCatalog> catalog = parse_gpu_catalog(file.text());
    if (catalog) return std::move(catalog).value();
    // The compiled-in catalog is part of the program; hardware_test keeps it valid.
    std::fprintf(stderr, "vramplan: built-in gpus.json is broken: %s\n",
                 catalog.error().message().c_str());
    std::abort();
  }
  std::fprintf(stderr, "vramplan: gpus.json was not compiled in\n");
  std::abort();
}

}  // namespace

double Gpu::peak_tflops(DType t) const {
  switch (t) {
    case DType::kBf16:
      return bf16_tflops;
    case DType::kFp16:
      return fp16_tflops > 0 ? fp16_tflops : bf16_tflops;
    case DType::kFp8:
      return fp8_tflops;
    case DType::kFp4:
      return fp4_tflops;
    case DType::kFp32:
      return tf32_tflops;
  }
  return 0;
}

const Gpu* GpuCatalog::find(std::string_view id) const {
  for (const Gpu& gpu : gpus) {
    if (iequals(gpu.id, id)) return &gpu;
  }
  return nullptr;
}

std::string GpuCatalog::ids() const {
  std::string text;
  for (const Gpu& gpu : gpus) {
    if (!text.empty()) text += ", ";
    text += gpu.id;
  }
  return text;
}

Result<GpuCatalog> parse_gpu_catalog(std::string_view json_text) {
  const json doc = json::parse(json_text.begin(), json_text.end(), nullptr, false, true);
  if (doc.is_discarded()) return syntax_error(json_text);
  if (!doc.is_object() || !doc.contains("gpus")) {
    return Error{"gpus", "(missing)", std::string(kCatalogShape), ""};
  }
  const json& list = doc["gpus"];
  if (!list.is_array()) return Error{"gpus", shown(list), "an array of GPU objects", ""};
  GpuCatalog catalog;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string path = fmt::format("gpus[{}]", i);
    Result<Gpu> gpu = parse_gpu(list[i], path);
    if (!gpu) return gpu.error();
    if (const Gpu* earlier = catalog.find(gpu->id)) {
      return Error{path + ".id", shown(gpu->id), "an id not already in the catalog",
                   fmt::format("\"{}\" is listed twice (ids are case-insensitive)", earlier->id)};
    }
    catalog.gpus.push_back(std::move(gpu).value());
  }
  return catalog;
}

const GpuCatalog& builtin_gpus() {
  static const GpuCatalog catalog = load_builtin();
  return catalog;
}

Gpu custom_gpu(double gib) {
  const int64_t bytes = std::llround(gib * kGiB);
  Gpu gpu;
  gpu.id = fmt::format("custom-{:g}gib", gib);
  gpu.name = fmt::format("Custom GPU ({:g} GiB)", gib);
  gpu.nominal_bytes = gpu.usable_bytes = bytes;
  gpu.source = "--gpu-memory-gib";
  return gpu;
}

Fit fit_on(const Gpu& gpu, int64_t device_bytes) {
  Fit fit;
  fit.gpu = gpu.id;
  fit.name = gpu.name;
  fit.nominal_bytes = gpu.nominal_bytes;
  fit.usable_bytes = gpu.usable_bytes;
  if (gpu.usable_bytes > 0) {
    fit.used_fraction = static_cast<double>(device_bytes) / static_cast<double>(gpu.usable_bytes);
  } else if (device_bytes > 0) {
    fit.used_fraction = std::numeric_limits<double>::infinity();
  }
  // Integer comparison for OOM: a byte over is over, whatever the division rounds to.
  if (device_bytes > gpu.usable_bytes) {
    fit.verdict = Verdict::kOom;
  } else if (fit.used_fraction > kTightFraction) {
    fit.verdict = Verdict::kTight;
  }
  return fit;
}

void fit_host(Fit& fit, int64_t host_rank_bytes, int64_t world_size, int64_t gpus_per_node,
              double host_memory_gib) {
  fit.host_checked = false;
  if (!(host_memory_gib > 0) || gpus_per_node < 1) return;
  constexpr double kGiB = 1024.0 * 1024 * 1024;
  fit.host_checked = true;
  fit.gpus_per_node = std::min(gpus_per_node, std::max<int64_t>(world_size, 1));
  // Saturate rather than overflow: a rank's host bytes are below 2^62 (StageBuilder's bound).
  const __int128 node = static_cast<__int128>(fit.gpus_per_node) * host_rank_bytes;
  fit.host_node_bytes = node > std::numeric_limits<int64_t>::max()
                            ? std::numeric_limits<int64_t>::max()
                            : static_cast<int64_t>(node);
  fit.host_memory_bytes = static_cast<int64_t>(std::llround(host_memory_gib * kGiB));
  fit.host_used_fraction =
      static_cast<double>(fit.host_node_bytes) / static_cast<double>(fit.host_memory_bytes);
  fit.host_verdict = fit.host_node_bytes > fit.host_memory_bytes ? Verdict::kOom
                     : fit.host_used_fraction > kTightFraction   ? Verdict::kTight
                                                                 : Verdict::kFits;
}

std::vector<Fit> fit_table(const GpuCatalog& catalog, int64_t device_bytes) {
  std::vector<Fit> table;
  table.reserve(catalog.gpus.size());
  for (const Gpu& gpu : catalog.gpus) table.push_back(fit_on(gpu, device_bytes));
  return table;
}

}  // namespace vramplan
