// The PyTorch reference (data/measurements/pytorch_reference.json, reference/README.md): training
// memory measured with Hugging Face transformers, PEFT, torchao and PyTorch's FSDP2 / DTensor /
// pipelining on fake tensors. Each row's settings go through the same reader as the CLI; its
// rank's stage is compared on peak allocated, per phase and per category at the peak.
#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "validation/dataset_rows.h"

namespace vramplan::dataset_rows {
namespace {

constexpr const char* kDataset = "pytorch-reference";

// The categories the reference splits its peak into (reference/vramref/tracker.py), as
// vramplan's rows fall into them. vramplan does not tell what the forward saved from the
// backward's scratch, so the reference's activations and temporaries are compared together.
enum class Category { kParameters, kGradients, kOptimizerStates, kActivations, kNone };

struct CategoryName {
  Category category;
  const char* quantity;           // the ValidationRow quantity
  std::vector<const char*> keys;  // the reference's at_peak keys summed
};

const std::vector<CategoryName>& categories() {
  static const std::vector<CategoryName> kCategories = {
      {Category::kParameters, "parameters at peak", {"parameters"}},
      {Category::kGradients, "gradients at peak", {"gradients"}},
      {Category::kOptimizerStates, "optimizer states at peak", {"optimizer_states"}},
      {Category::kActivations,
       "activations + temporaries at peak",
       {"activations", "temporaries"}}};
  return kCategories;
}

// GEMM workspaces are cuBLAS's, held by the caching allocator but never an ATen tensor: the
// reference cannot see them (data/measurements/README.md), so they are left out of every
// comparison.
bool outside_tensors(const Row& r) { return r.component == "GEMM workspaces"; }

Category category_of(const Row& r) {
  if (r.counts_toward != CountsToward::kAllocated || outside_tensors(r)) return Category::kNone;
  const std::string& c = r.component;
  auto has = [&](const char* text) { return c.find(text) != std::string::npos; };
  // FSDP's unsharded buffers hold the gathered parameters (and one unit's gradient: small).
  if (c == "weights" || c == "master weights" || c == "adapter weights" ||
      c == "adapter master weights" || c == "fp8 weight copies" || has("frozen") ||
      c.rfind("embeddings, norms", 0) == 0 || c == "unsharded parameter buffers" ||
      c == "prefetched parameter buffers" ||
      c == "last all-gather output (kept through the loss)" || c == "unsharded params + grads" ||
      c == "RoPE cache (torchtune)")
    return Category::kParameters;
  if (has("gradient")) return Category::kGradients;
  if (has("optimizer states")) return Category::kOptimizerStates;
  return Category::kActivations;
}

int64_t tensor_bytes(const StageEstimate& st) {
  int64_t bytes = 0;
  for (const Row& r : st.rows)
    if (r.counts_toward == CountsToward::kAllocated && !outside_tensors(r)) bytes += r.bytes;
  return bytes;
}

int64_t workspace_bytes(const StageEstimate& st) {
  int64_t bytes = 0;
  for (const Row& r : st.rows)
    if (outside_tensors(r)) bytes += r.bytes;
  return bytes;
}

int64_t phase_bytes(const StageEstimate& st, const std::string& name) {
  for (const Phase& p : st.phases)
    if (p.name == name) return p.allocated_bytes - workspace_bytes(st);
  return 0;
}

// The stage the measured rank runs: torch.distributed.pipelining's stage index is the rank's
// coordinate on the pipeline dimension, the outermost of the harness's mesh.
const StageEstimate* stage_of_rank(const Estimate& est, int64_t rank, int64_t world, int64_t pp) {
  const int64_t stage = pp > 1 ? rank / std::max<int64_t>(world / pp, 1) : 0;
  for (const StageEstimate& st : est.stages)
    if (std::find(st.ranks.begin(), st.ranks.end(), stage) != st.ranks.end()) return &st;
  return nullptr;
}

struct RowContext {
  std::string id, family;
  std::map<std::string, std::string> facets;
  double peak_gib = 0;
};

ValidationRow make_row(const RowContext& c, const std::string& quantity, double measured,
                       double predicted) {
  ValidationRow row{kDataset, c.id, c.family, quantity, measured, predicted, "", false, ""};
  row.facets = c.facets;
  return row;
}

ValidationRow make_skipped(const RowContext& c, const std::string& quantity, double measured,
                           std::string reason) {
  ValidationRow row = skipped_row(kDataset, c.id, c.family, quantity, measured, std::move(reason));
  row.facets = c.facets;
  return row;
}

// The quantities one reference row is compared on, measured (GiB) from its JSON.
std::vector<std::pair<std::string, double>> measured_quantities(const nlohmann::json& row) {
  const nlohmann::json& phases = row.value("phase_peaks", nlohmann::json::object());
  const double forward_backward = std::max(gib_of(phases.value("forward", nlohmann::json())),
                                           gib_of(phases.value("backward", nlohmann::json())));
  std::vector<std::pair<std::string, double>> out = {
      {"peak allocated", gib_of(row["peak_allocated_bytes"])},
      {"forward/backward allocated", forward_backward},
      {"optimizer step allocated", gib_of(phases.value("optimizer", nlohmann::json()))}};
  const nlohmann::json& at_peak = row.value("at_peak", nlohmann::json::object());
  for (const CategoryName& c : categories()) {
    double bytes = 0;
    for (const char* key : c.keys) bytes += gib_of(at_peak.value(key, nlohmann::json()));
    out.push_back({c.quantity, bytes});
  }
  return out;
}

void add_reference_row(const nlohmann::json& row, ValidationReport& report) {
  RowContext c;
  c.id = text_of(row, "id");
  c.family = text_of(row, "family");
  const nlohmann::json& settings = row["settings"];
  const nlohmann::json& harness = row.value("harness", nlohmann::json::object());
  c.facets = {{"family", c.family},
              {"method", text_of(row, "method")},
              {"layout", text_of(harness, "layout")},
              {"framework", settings.value("framework", std::string("none"))},
              {"model_code", settings.contains("model_code")
                                 ? text_of(settings, "model_code")
                                 : "the framework's own (" +
                                       settings.value("framework", std::string("none")) + ")"},
              {"attention", text_of(harness, "attention")},
              {"precision", text_of(harness, "precision")},
              {"optimizer", text_of(harness, "optimizer")},
              {"recompute", text_of(harness, "recompute")},
              {"peak_phase", text_of(row, "peak_phase")}};
  const auto measured = measured_quantities(row);
  c.peak_gib = measured.front().second;
  auto skip_all = [&](const std::string& reason) {
    for (const auto& [quantity, value] : measured)
      report.rows.push_back(make_skipped(c, quantity, value, reason));
  };
  if (!row.value("in_target", false)) {
    skip_all("out of target: " + text_of(row, "note"));
    return;
  }
  Result<Estimate> est = estimate_of_settings(settings);
  if (!est) {
    skip_all("not a valid scenario: " + est.error().message());
    return;
  }
  const StageEstimate* st =
      stage_of_rank(*est, row.value("rank", int64_t{0}), row.value("world", int64_t{1}),
                    settings.value("pp", int64_t{1}));
  if (st == nullptr) {
    skip_all("no pipeline stage holds this rank");
    return;
  }
  c.facets["predicted_peak_phase"] = st->peak_phase;
  // The categories are compared at the moment the reference peaked: where vramplan's largest
  // phase is another one (two phases often peak within a percent or two), its rows at its own
  // peak are a different moment's, so the breakdown of the measured phase is asked for. Which
  // phase peaks is compared on the two phase rows above.
  const RowsAt measured_phase =
      text_of(row, "peak_phase") == "optimizer" ? RowsAt::kOptimizerStep : RowsAt::kForwardBackward;
  const bool same_phase =
      (measured_phase == RowsAt::kOptimizerStep) == (st->peak_phase == "optimizer step");
  const StageEstimate* breakdown = st;
  std::optional<Result<Estimate>> at_phase;
  if (!same_phase) at_phase = estimate_of_settings(settings, measured_phase);
  if (at_phase && at_phase->ok())
    if (const StageEstimate* other =
            stage_of_rank(**at_phase, row.value("rank", int64_t{0}), row.value("world", int64_t{1}),
                          settings.value("pp", int64_t{1})))
      breakdown = other;
  int64_t by_category[4] = {0, 0, 0, 0};
  for (const Row& r : breakdown->rows) {
    const Category cat = category_of(r);
    if (cat != Category::kNone) by_category[static_cast<int>(cat)] += r.bytes;
  }
  const double predicted[] = {gib(tensor_bytes(*st)), gib(phase_bytes(*st, "forward/backward")),
                              gib(phase_bytes(*st, "optimizer step"))};
  for (size_t i = 0; i < measured.size(); ++i) {
    const auto& [quantity, value] = measured[i];
    if (i < 3) {
      report.rows.push_back(make_row(c, quantity, value, predicted[i]));
      continue;
    }
    ValidationRow r = make_row(c, quantity, value, gib(by_category[i - 3]));
    r.basis_gib = c.peak_gib;  // a category may be 0 at the peak: errors in % of the peak
    report.rows.push_back(std::move(r));
  }
}

}  // namespace

Result<nlohmann::json> reference_dataset() {
  return embedded_rows_file("pytorch_reference.json",
                            "the reference dataset (reference/README.md)");
}

void add_reference_rows(const nlohmann::json& data, ValidationReport& report) {
  for (const nlohmann::json& row : data["rows"]) add_reference_row(row, report);
}

}  // namespace vramplan::dataset_rows
