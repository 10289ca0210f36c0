#include "validation/dataset_rows.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "base/embedded_data.h"
#include "vramplan/io/scenario_io.h"

namespace vramplan::dataset_rows {

Result<nlohmann::json> embedded_rows_file(const char* path, const char* what) {
  const std::string_view text = embedded_file(std::string("measurements/") + path);
  nlohmann::json data = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (data.is_discarded() || !data.contains("rows") || !data["rows"].is_array())
    return Error{path, "", what, "the embedded file is missing or not valid JSON"};
  return data;
}

Result<Estimate> estimate_of_settings(const nlohmann::json& settings, RowsAt rows_at) {
  Result<ResolvedScenario> scenario =
      resolve_scenario(settings, [](const std::string& path) -> Result<std::string> {
        return Error{"model", path, "a preset", "validation reads no files"};
      });
  if (!scenario) return scenario.error();
  return estimate(scenario->scenario, {.explain = false, .rows_at = rows_at});
}

int64_t integer_or(const std::string& text, int64_t fallback) {
  if (text.empty()) return fallback;
  int64_t value = fallback;
  std::from_chars(text.data(), text.data() + text.size(), value);
  return value;
}

double number_or(const std::string& text, double fallback) {
  return text.empty() ? fallback : std::strtod(text.c_str(), nullptr);
}

bool is_true(const std::string& text) { return text == "True" || text == "true"; }

ValidationRow skipped_row(const std::string& dataset, const std::string& id,
                          const std::string& group, const std::string& quantity, double measured,
                          std::string reason) {
  ValidationRow row{dataset, id, group, quantity, measured, 0, "", true, std::move(reason)};
  return row;
}

// torchtitan logs max_reserved as the maximum over ranks.
double max_reserved_gib(const Estimate& est) {
  int64_t most = 0;
  for (const StageEstimate& st : est.stages) most = std::max(most, st.reserved_bytes);
  return most / kGiB;
}

double committed_figure(std::span<const CommittedFigure> table, const std::string& name) {
  for (const CommittedFigure& c : table)
    if (name == c.name) return c.figure;
  return -1;
}

NoiseFloor floor_of_groups(std::map<std::string, std::vector<double>> groups) {
  NoiseFloor floor;
  std::vector<double> abs_errors;
  for (auto& [key, measured] : groups) {
    if (measured.size() < 2) continue;
    ++floor.groups;
    std::sort(measured.begin(), measured.end());
    const size_t n = measured.size();
    const double median = n % 2 ? measured[n / 2] : (measured[n / 2 - 1] + measured[n / 2]) / 2;
    for (double m : measured)
      if (m > 0) abs_errors.push_back(std::fabs(median - m) / m * 100.0);
  }
  std::sort(abs_errors.begin(), abs_errors.end());
  floor.rows = static_cast<int>(abs_errors.size());
  floor.median_abs_pct = percentile(abs_errors, 0.5);
  floor.p90_abs_pct = percentile(abs_errors, 0.9);
  return floor;
}

// Nearest-rank percentile of sorted values.
double percentile(const std::vector<double>& sorted, double fraction) {
  if (sorted.empty()) return 0;
  const size_t rank = static_cast<size_t>(std::ceil(fraction * sorted.size()));
  return sorted[std::clamp<size_t>(rank, 1, sorted.size()) - 1];
}

}  // namespace vramplan::dataset_rows
