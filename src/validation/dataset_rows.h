// The measured datasets as validation rows, one file each: Megatron-LM's functional tests
// (megatron_rows.cc), the Ultra-Scale Playbook sweep (ultrascale_rows.cc), torchtitan's
// published benchmarks (torchtitan_rows.cc) and the PyTorch reference (reference_rows.cc,
// reference_params.cc). validation.cc summarises them; accuracy_gate.cc holds the targets.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "base/csv.h"
#include "vramplan/base/error.h"
#include "vramplan/training/estimate.h"
#include "vramplan/validation/validation.h"

namespace vramplan::dataset_rows {

inline constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// Bytes as GiB; a JSON number of bytes as GiB (0 when it is not a number); a JSON string field
// ("" when absent or not a string). The JSON datasets' readers share these.
inline double gib(int64_t bytes) { return static_cast<double>(bytes) / kGiB; }
inline double gib_of(const nlohmann::json& v) { return v.is_number() ? v.get<double>() / kGiB : 0; }
inline std::string text_of(const nlohmann::json& j, const char* key) {
  return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "";
}

// A JSON dataset compiled in (data/<path>) whose "rows" is an array; `what` names it in the error.
Result<nlohmann::json> embedded_rows_file(const char* path, const char* what);

// A row's settings through the same reader as the CLI (presets only: validation reads no files),
// estimated without formulas.
Result<Estimate> estimate_of_settings(const nlohmann::json& settings,
                                      RowsAt rows_at = RowsAt::kPeak);

// Nearest-rank percentile of sorted values.
double percentile(const std::vector<double>& sorted, double fraction);

// How far measurements that should agree disagree: each value of a group of two or more against
// its group's median, |median − value| / value (values ≤ 0 left out), as median and p90 %.
NoiseFloor floor_of_groups(std::map<std::string, std::vector<double>> groups);

// An open target's committed figure: the value `vramplan validate` printed when the target was
// opened or last improved, which the gate holds it to until it is met.
struct CommittedFigure {
  const char* name;
  double figure;
};

// The figure `table` commits for the target `name`; -1 (none: the target must be met) otherwise.
double committed_figure(std::span<const CommittedFigure> table, const std::string& name);

// CSV cells: empty means the fallback.
int64_t integer_or(const std::string& text, int64_t fallback);
double number_or(const std::string& text, double fallback);
bool is_true(const std::string& text);

ValidationRow skipped_row(const std::string& dataset, const std::string& id,
                          const std::string& group, const std::string& quantity, double measured,
                          std::string reason);

// torchtitan logs max_reserved as the maximum over ranks.
double max_reserved_gib(const Estimate& est);

// Arguments a test's model_config.yaml sets that the measurement table has no column for
// (data/measurements/megatron_test_args.csv), by argument name.
using TestArgs = std::map<std::string, std::string>;

Result<std::map<std::string, TestArgs>> args_by_test(const std::vector<CsvRow>& rows);

void add_megatron_rows(const std::vector<CsvRow>& table,
                       const std::map<std::string, TestArgs>& args_of, ValidationReport& report);

void add_ultrascale_rows(const std::vector<CsvRow>& ran, const std::vector<CsvRow>& crashed,
                         ValidationReport& report);

NoiseFloor ultrascale_noise_floor(const std::vector<CsvRow>& ran);

// torchtitan's published runs (data/measurements/README.md): the page's settings through the
// same reader as the CLI, with torchtitan's conventions; the figure is peak reserved, max over
// ranks.
void add_torchtitan_rows(const std::vector<CsvRow>& runs, ValidationReport& report);

// The PyTorch reference (data/measurements/pytorch_reference.json, compiled in), parsed.
Result<nlohmann::json> reference_dataset();

// Its rows (reference_rows.cc): each row's settings through the same reader as the CLI, the
// measured rank's stage compared on peak allocated (tensors only: no GEMM workspaces), the
// forward/backward and optimizer-step phases, and the categories at the peak; rows out of target
// skipped with their note.
void add_reference_rows(const nlohmann::json& data, ValidationReport& report);

// Training memory measured on a real GPU (data/measurements/gpu_measured.json, compiled in),
// parsed; its rows (gpu_rows.cc): the reference's single-GPU scenarios read from the caching
// allocator, compared on peak allocated (GEMM workspaces included), per phase, and peak reserved.
Result<nlohmann::json> gpu_dataset();
void add_gpu_rows(const nlohmann::json& data, ValidationReport& report);

// Its presets' parameter counts against count_parameters, part by part (reference_params.cc).
void add_reference_parameter_counts(const nlohmann::json& data, ValidationReport& report);

// Summaries per dataset and quantity, and the targets with the gate's committed figures
// (accuracy_gate.cc). Needs the rows, the fit confusion and the Ultra-Scale noise floor.
void add_summaries_and_targets(ValidationReport& report);

// The targets that are open: not met yet, held to a committed figure (accuracy_gate.cc).
std::vector<std::string> committed_target_names();

}  // namespace vramplan::dataset_rows
