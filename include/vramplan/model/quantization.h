// Weight storage formats and what each really costs: the packed elements plus the scales, zeros
// and tables stored beside them. Formats are chosen per module class (attention, dense MLP,
// routed experts, embedding, LM head), read from a config.json's quantization_config or set by
// the user; norms, biases and routers always stay in the base dtype.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "vramplan/base/error.h"
#include "vramplan/model/precision.h"

namespace vramplan {

enum class WeightFormat {
  kFp32,
  kBf16,
  kFp16,
  kFp8,         // e4m3, one fp32 scale per tensor
  kFp8Channel,  // e4m3, one fp32 scale per output channel
  kFp8Block,    // e4m3, one fp32 scale per 128×128 block (DeepSeek-V3)
  kInt8,        // int8, one fp32 scale per output channel (LLM.int8, W8A8)
  kInt4,        // AWQ/GPTQ: int4, fp16 scale and 4-bit zero per group along the input
  kNf4,         // bitsandbytes NF4: absmax per 64 (8-bit, double-quantised, by default)
  kMxfp4,       // OCP MX: e2m1, one E8M0 scale byte per 32
  kNvfp4,       // NVIDIA: e2m1, one e4m3 scale per 16, one fp32 scale per tensor
};

// Names as users type them, indexed by enum value.
inline constexpr std::array<const char*, 11> kWeightFormatNames = {
    "fp32", "bf16", "fp16", "fp8",   "fp8-channel", "fp8-block",
    "int8", "int4", "nf4",  "mxfp4", "nvfp4"};
inline const char* weight_format_name(WeightFormat f) {
  return kWeightFormatNames[static_cast<size_t>(f)];
}
// Case-insensitive; also "float16", "bfloat16", "float32", "awq", "gptq", "fp8-tensor",
// "fp8-block128". Returns nullopt for anything else.
std::optional<WeightFormat> parse_weight_format(std::string_view name);
std::string weight_format_choices();  // "fp32, bf16, ..., nvfp4" for error messages

// True for the unquantised floating-point formats (fp32, bf16, fp16).
bool is_float_format(WeightFormat f);
// The DType of an unquantised format. REQUIRES: is_float_format(f).
DType float_dtype(WeightFormat f);
WeightFormat format_of(DType t);  // fp8 -> fp8 (per tensor), fp4 -> mxfp4

struct WeightQuant {
  WeightFormat format = WeightFormat::kBf16;
  int64_t group_size = 128;  // int4: input elements per scale/zero group (AWQ/GPTQ default 128)
  bool double_quant = true;  // nf4: absmax stored as 8-bit with an fp32 scale per 256 (QLoRA)
};

// Weight matrices of one module class on one GPU: the shape facts that scale counts need.
struct LinearShape {
  int64_t params = 0;   // elements
  int64_t tensors = 0;  // weight matrices (per-tensor scales)
  int64_t rows = 0;     // output channels summed over the matrices (per-channel scales)
};

// Bytes of `shape` stored as `quant`, the formula with values, and where the layout comes from.
struct QuantBytes {
  int64_t bytes = 0;
  std::string formula;
  std::string source;
};
QuantBytes quantized_bytes(const WeightQuant& quant, const LinearShape& shape, bool explain);

// Storage bits per weight including scales, for the formula text and quick comparisons (per-tensor
// and per-channel scales are left out: they depend on the shape).
double bits_per_weight(const WeightQuant& quant);

enum class ModuleClass { kAttention, kMlp, kExperts, kEmbedding, kLmHead };
inline constexpr std::array<const char*, 5> kModuleClassNames = {"attention", "mlp", "experts",
                                                                 "embedding", "lm_head"};

// The format of each module class, and the dtype of everything left unquantised.
struct ModuleFormats {
  DType base = DType::kBf16;  // norms, biases, routers, buffers; 16-bit classes default to it
  std::array<WeightQuant, 5> by_class{};
  const WeightQuant& operator[](ModuleClass c) const { return by_class[static_cast<size_t>(c)]; }
  WeightQuant& operator[](ModuleClass c) { return by_class[static_cast<size_t>(c)]; }
  bool quantized() const;  // any class in a non-float format
};

// Every class in the base dtype.
ModuleFormats unquantized_formats(DType base);

// The base dtype a config's torch_dtype ("bfloat16", "float16", "float32", "") serves in: as
// vLLM's dtype=auto, 32-bit checkpoints are served in 16 bits (bf16).
DType serving_dtype(std::string_view torch_dtype);

struct QuantizationConfig {
  ModuleFormats formats;
  std::string method;                 // quant_method as written, "" when none
  std::vector<std::string> warnings;  // parts of the config that are not modelled
};

// Reads a config.json's quantization_config (as JSON text; "" = none) into per-class formats:
// fp8 (per-tensor, or block-wise with weight_block_size), mxfp4 (gpt-oss: experts only), awq and
// gptq (bits, group_size; lm_head only when the config says so), bitsandbytes (nf4/int8),
// compressed-tensors (fp8 channel/tensor/block, int4 group, nvfp4), modelopt (fp8, nvfp4),
// fbgemm_fp8. modules_to_not_convert / ignore patterns keep attention, embedding or LM head in the
// base dtype. Errors name config.quantization_config.<key>.
Result<QuantizationConfig> read_quantization_config(std::string_view json_text, DType base);

}  // namespace vramplan
