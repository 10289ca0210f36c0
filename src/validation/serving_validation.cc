// Published serving memory figures (vLLM and SGLang logs) against vramplan's predictions. Each
// CSV row gives only the run's inputs; the conventions are the defaults every user gets.
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

// The CSV's inputs as the same settings a user would pass to `vramplan infer`.
nlohmann::json settings_of(const CsvRow& r) {
  nlohmann::json s = {{"model", r["model"]}, {"tp", r["tp"]}, {"engine", r["engine"]}};
  auto copy = [&](const char* column, const char* key) {
    if (!r[column].empty()) s[key] = r[column];
  };
  copy("weight_dtype", "weight_dtype");
  copy("kv_dtype", "kv_dtype");
  copy("gpu", "gpu");
  copy("gpu_total_gib", "gpu_memory_gib");
  copy("max_model_len", "context");
  copy("max_num_seqs", "max_num_seqs");
  copy("max_num_batched_tokens", "max_num_batched_tokens");
  copy("cuda_graph_in_budget", "cuda_graph_in_budget");
  s[r["engine"] == "sglang" ? "mem_fraction_static" : "gpu_memory_utilization"] = r["fraction"];
  return s;
}

struct Predicted {
  double weights, activation, non_torch, kv_gib, kv_tokens;
};

Result<Predicted> predict(const CsvRow& r) {
  Result<ResolvedInference> resolved = resolve_inference(settings_of(r), nullptr);
  if (!resolved) return resolved.error();
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
