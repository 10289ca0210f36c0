// The measured datasets as validation rows, one file each: Megatron-LM's functional tests
// (megatron_rows.cc), the Ultra-Scale Playbook sweep (ultrascale_rows.cc) and torchtitan's
// published benchmarks (torchtitan_rows.cc). validation.cc summarises them.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "base/csv.h"
#include "vramplan/base/error.h"
#include "vramplan/training/estimate.h"
#include "vramplan/validation/validation.h"

namespace vramplan::dataset_rows {

inline constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// Nearest-rank percentile of sorted values.
double percentile(const std::vector<double>& sorted, double fraction);

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

}  // namespace vramplan::dataset_rows
