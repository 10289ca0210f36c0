// Phrases shared by the estimate's terminal table and its markdown: the model, layout, sharding,
// batch and training in a line each, stage details, and the peak with its band.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "vramplan/training/estimate.h"
#include "vramplan/training/scenario.h"

namespace vramplan::estimate_text {

inline constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// What each stage total is measured by, so that a user compares like with like.
struct Total {
  std::string_view name;
  int64_t StageEstimate::*bytes;
  std::string_view measured_by;
};
constexpr Total kTotals[] = {
    {"allocated", &StageEstimate::allocated_bytes, "torch.cuda.max_memory_allocated()"},
    {"reserved", &StageEstimate::reserved_bytes, "+ allocator pool: max_memory_reserved()"},
    {"device", &StageEstimate::device_bytes, "+ CUDA context, NCCL: nvidia-smi used"},
};

const StageEstimate* peak_stage(const Estimate& e);

std::string gib(int64_t bytes);

// 8.03 B, 124.4 M: parameter counts at a glance.
std::string count_text(int64_t n);

// "0–7, 16–23": consecutive runs collapsed, for rank and layer lists.
std::string ranges(const std::vector<int64_t>& ids);

std::string model_title(const ModelConfig& m);

std::string parameters_text(const ParamCounts& p);

std::string layout_text(const Parallelism& p);

std::string sharding_text(const Parallelism& p);

std::string batch_text(const Training& t, const Parallelism& p, const Estimate& e);

std::string training_text(const Training& t);

std::string stage_details(const StageEstimate& s);

// "12.34 GiB allocated (likely 11.90–13.10)": the estimate and its 80% band.
std::string amount_with_band(int64_t bytes, int64_t low, int64_t high, const char* what);

std::string peak_amounts(const Peak& p);

// "during forward/backward; optimizer step 38.10 GiB, first step forward/backward 30.00 GiB"
std::string phases_text(const StageEstimate& st);

std::string peak_text(const Estimate& e);

}  // namespace vramplan::estimate_text
