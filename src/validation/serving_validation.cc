// Published serving memory figures (vLLM and SGLang logs) against vramplan's predictions. Each
// row's run is its published command line, read by the vLLM / SGLang importer (--from); the
// conventions are the defaults every user gets.
#include "vramplan/validation/serving_validation.h"

#include <algorithm>
#include <cmath>

#include "base/csv.h"
#include "base/embedded_data.h"
#include "vramplan/io/inference_settings.h"
#include "vramplan/serving/inference.h"

namespace vramplan {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr const char* kFile = "measurements/serving_published.csv";

// A row's run as a user would give it to `vramplan infer`: the published command line (and the
// log lines that say which engine ran and the GPU total it saw) read through --from, with the
// GPU beside it. Checkpoints that are no preset (Hub ids outside the compiled-in presets, a
// quantised variant, a local path) are given as the preset of the same shape and their weight
// format, as a user without network access would give them.
Result<nlohmann::json> settings_of(const CsvRow& r) {
  const std::string command(embedded_file("measurements/" + r["command"]));
  if (command.empty())
    return Error{"command", r["command"], "a file under data/measurements/serving_commands",
                 "row " + r["id"] + " of " + kFile + " names no command file"};
  nlohmann::json s = {{"from", command}};
  auto copy = [&](const char* column, const char* key) {
    if (!r[column].empty()) s[key] = r[column];
  };
  copy("model", "model");
  copy("weight_dtype", "weight_dtype");
  copy("gpu", "gpu");
  copy("gpu_total_gib", "gpu_memory_gib");
  return s;
}

struct Predicted {
  double weights, activation, non_torch, kv_gib, kv_tokens;
};

Result<Predicted> predict(const CsvRow& r) {
  Result<nlohmann::json> settings = settings_of(r);
  if (!settings) return settings.error();
  Result<ResolvedInference> resolved = resolve_inference(*settings, nullptr);
  if (!resolved) return resolved.error();
  if (!resolved->imported || resolved->imported->format != r["engine"])
    return Error{"engine", r["engine"], "the engine the row's command launches",
                 "the command was read as " +
                     (resolved->imported ? resolved->imported->format : std::string("nothing"))};
  InferenceScenario& s = resolved.value().scenario;
  if (!r["max_position_embeddings"].empty())
    s.model.max_position_embeddings = std::stoll(r["max_position_embeddings"]);
  Result<InferenceEstimate> e = estimate_inference(s, {.explain = false});
  if (!e) return e.error();
  const Capacity& c = *e->capacity;
  int64_t non_torch = s.overheads.non_torch_bytes;
  for (const Row& row : e->rows)
    if (row.component == "NCCL buffers") non_torch += row.bytes;
  return Predicted{static_cast<double>(e->weights_bytes) / kGiB,
                   static_cast<double>(e->activation_bytes) / kGiB,
                   static_cast<double>(non_torch) / kGiB,
                   static_cast<double>(c.kv_budget_bytes - c.shortfall_bytes) / kGiB,
                   static_cast<double>(c.max_kv_tokens)};
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

void summarise(ServingValidation& out) {
  std::vector<std::string> order;
  for (const ServingCheck& c : out.rows)
    if (std::find(order.begin(), order.end(), c.quantity) == order.end())
      order.push_back(c.quantity);
  for (const std::string& q : order) {
    std::vector<double> errors;
    for (const ServingCheck& c : out.rows)
      if (c.quantity == q) errors.push_back(std::fabs(c.error_pct()));
    out.summaries.push_back(ServingSummary{q, static_cast<int>(errors.size()), median(errors),
                                           *std::max_element(errors.begin(), errors.end())});
  }
}

}  // namespace

double ServingCheck::error_pct() const {
  if (published == 0) return predicted == 0 ? 0 : 100;
  return (predicted - published) / std::fabs(published) * 100.0;
}

Result<ServingValidation> validate_serving() {
  Result<std::vector<CsvRow>> rows = parse_csv(embedded_file(kFile), kFile);
  if (!rows) return rows.error();
  ServingValidation out;
  for (const CsvRow& r : *rows) {
    Result<Predicted> p = predict(r);
    if (!p) {
      Error e = p.error();
      e.reason = "row " + r["id"] + " of " + kFile + ": " + e.reason;
      return e;
    }
    const std::pair<const char*, double> quantities[] = {{"weights_gib", p->weights},
                                                         {"activation_gib", p->activation},
                                                         {"non_torch_gib", p->non_torch},
                                                         {"kv_gib", p->kv_gib},
                                                         {"kv_tokens", p->kv_tokens}};
    static const char* kNames[] = {"weights", "activation peak", "non-torch", "KV cache",
                                   "KV tokens"};
    for (size_t i = 0; i < std::size(quantities); ++i) {
      const auto& [column, predicted] = quantities[i];
      if (r[column].empty()) continue;
      out.rows.push_back(ServingCheck{r["id"], r["engine"], r["version"], kNames[i],
                                      i == 4 ? "tokens" : "GiB", std::stod(r[column]), predicted,
                                      r["source"], r["note"]});
    }
  }
  summarise(out);
  return out;
}

}  // namespace vramplan
