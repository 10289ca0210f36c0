// The quick calculator (docs/quick.md): memory from a parameter count, layers and hidden size
// alone, as the one-formula calculators compute it — weights, master weights, gradients,
// optimizer states, activations (b·s·h·L × tensors per token and layer), KV cache and a runtime
// overhead — each row with its formula and source. The activation multiplier defaults to what
// vramplan's own per-layer activation accounting gives for a matching architecture, so the
// coarse figure and the full estimate (docs/quick.md) differ only where the coarse formula
// leaves something out.
#pragma once

#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "vramplan/base/error.h"
#include "vramplan/model/precision.h"
#include "vramplan/model/quantization.h"
#include "vramplan/training/estimate.h"
#include "vramplan/training/scenario.h"

namespace vramplan {

enum class QuickMode { kTraining, kInference };
inline constexpr std::array<const char*, 2> kQuickModeNames = {"training", "inference"};
inline const char* quick_mode_name(QuickMode m) { return kQuickModeNames[static_cast<size_t>(m)]; }

struct QuickInputs {
  int64_t params = 0;  // P
  int64_t layers = 0;  // L
  int64_t hidden = 0;  // h
  int64_t batch = 1;   // b
  int64_t seq_len = 2048;
  QuickMode mode = QuickMode::kTraining;
  WeightQuant weights{WeightFormat::kBf16};
  DType grad_dtype = DType::kBf16;
  DType activation_dtype = DType::kBf16;
  DType optimizer_dtype = DType::kFp32;
  bool master_weights = true;  // fp32 copy when the weights are below fp32 (training)
  Optimizer optimizer = Optimizer::kAdamW;
  std::optional<double> activation_multiplier;  // tensors of h per token and layer; none: derived
  double checkpoint_factor = 1.0;               // share of the activations kept (0, 1]
  bool kv_cache = false;
  int64_t cache_tokens = 0;  // 0: seq_len
  DType kv_dtype = DType::kBf16;
  int64_t overhead_bytes = 600ll << 20;  // CUDA context and kernels
  double allocator_overhead = 0.10;      // caching-allocator pool above the tensors
};

struct QuickEstimate {
  double activation_multiplier = 0;
  std::string multiplier_source;  // "given", or how the default was derived
  std::vector<Row> rows;          // every row, 0 bytes where the mode keeps none
  int64_t total_bytes = 0;
};

// The matching architecture of L layers of width h: Llama-2's shape (SwiGLU MLP of
// 256·⌈(8h/3)/256⌉, h/128 heads of 128 with as many KV heads, RMSNorm, 32,000-token vocabulary,
// untied head) as a config.json object; 32 × 4096 is Llama-2-7B and 40 × 5120 Llama-2-13B.
// Errors name `layers` / `hidden` (h must be a multiple of 128, up to 65,536).
Result<nlohmann::json> matching_config(int64_t layers, int64_t hidden, int64_t seq_len);

// The training scenario of the matching architecture at these inputs (one GPU, no framework):
// what the default multiplier and the full estimate use.
Result<Scenario> matching_training_scenario(const QuickInputs& in);

// Tensors of h per token and layer one decoder layer of the matching architecture keeps for the
// backward (training/activations.cc layer_activations, no recompute), in the activation dtype.
Result<double> derived_activation_multiplier(const QuickInputs& in);

// Validates (every error names its setting) and computes the rows.
Result<QuickEstimate> quick_estimate(const QuickInputs& in);

}  // namespace vramplan
