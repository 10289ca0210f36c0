// Training memory measured on a real GPU (data/measurements/gpu_measured.json, reference/README.md
// "On a real GPU"): the PyTorch reference's single-GPU scenarios run for two steps on an H200,
// read from the caching allocator (torch.cuda.max_memory_allocated, per phase, and
// max_memory_reserved). Unlike the fake-tensor reference, the allocator's figures include what no
// tensor holds (cuBLAS workspaces, rounding), so every allocated row of vramplan is compared.
#include <nlohmann/json.hpp>
#include <string>

#include "validation/dataset_rows.h"

namespace vramplan::dataset_rows {
namespace {

constexpr const char* kDataset = "gpu-measured";

int64_t phase_allocated(const StageEstimate& st, const std::string& name) {
  for (const Phase& p : st.phases)
    if (p.name == name) return p.allocated_bytes;
  return 0;
}

// The quantities one row is compared on: measured (GiB) and vramplan's (GiB).
struct Quantity {
  const char* name;
  double measured;
  double predicted;
};

std::vector<Quantity> quantities(const nlohmann::json& row, const StageEstimate* st) {
  const nlohmann::json& phases = row.value("phase_peaks", nlohmann::json::object());
  const double forward_backward = std::max(gib_of(phases.value("forward", nlohmann::json())),
                                           gib_of(phases.value("backward", nlohmann::json())));
  auto predicted = [&](auto value) { return st ? value() : 0.0; };
  return {
      {"peak allocated", gib_of(row["peak_allocated_bytes"]),
       predicted([&] { return gib(st->allocated_bytes); })},
      {"forward/backward allocated", forward_backward,
       predicted([&] { return gib(phase_allocated(*st, "forward/backward")); })},
      {"optimizer step allocated", gib_of(phases.value("optimizer", nlohmann::json())),
       predicted([&] { return gib(phase_allocated(*st, "optimizer step")); })},
      {"peak reserved", gib_of(row["peak_reserved_bytes"]),
       predicted([&] { return gib(st->reserved_bytes); })},
  };
}

void add_gpu_row(const nlohmann::json& row, ValidationReport& report) {
  const std::string id = text_of(row, "id"), family = text_of(row, "family");
  const nlohmann::json& settings = row["settings"];
  const nlohmann::json& harness = row.value("harness", nlohmann::json::object());
  const std::map<std::string, std::string> facets = {{"family", family},
                                                     {"method", text_of(row, "method")},
                                                     {"precision", text_of(harness, "precision")},
                                                     {"optimizer", text_of(harness, "optimizer")},
                                                     {"recompute", text_of(harness, "recompute")},
                                                     {"gpu", settings.value("gpu", std::string())}};
  auto add = [&](const Quantity& q, const std::string& skip_reason) {
    ValidationRow r =
        skip_reason.empty()
            ? ValidationRow{kDataset, id, family, q.name, q.measured, q.predicted, "", false, ""}
            : skipped_row(kDataset, id, family, q.name, q.measured, skip_reason);
    r.facets = facets;
    report.rows.push_back(std::move(r));
  };
  auto skip_all = [&](const std::string& reason) {
    for (const Quantity& q : quantities(row, nullptr)) add(q, reason);
  };
  if (!row.value("in_target", false)) {
    skip_all("out of target: " + text_of(row, "note"));
    return;
  }
  Result<Estimate> est = estimate_of_settings(settings);
  if (!est || est->stages.empty()) {
    skip_all("not a valid scenario: " + (est ? std::string("no stage") : est.error().message()));
    return;
  }
  for (const Quantity& q : quantities(row, &est->stages.front())) add(q, "");
}

}  // namespace

Result<nlohmann::json> gpu_dataset() {
  return embedded_rows_file("gpu_measured.json", "the GPU-measured dataset (reference/README.md)");
}

void add_gpu_rows(const nlohmann::json& data, ValidationReport& report) {
  for (const nlohmann::json& row : data["rows"]) add_gpu_row(row, report);
}

}  // namespace vramplan::dataset_rows
