// Weight formats: bytes of elements plus their scales, zeros and tables, and reading a
// config.json's quantization_config into per-module-class formats.
#include "vramplan/model/quantization.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "base/term.h"
#include "base/text.h"

namespace vramplan {
namespace {

using nlohmann::json;

constexpr const char* kSourceFloat = "IEEE 754 / bfloat16: 4 or 2 bytes per weight";
constexpr const char* kSourceFp8 =
    "Micikevicius et al. 2022, FP8 Formats for Deep Learning (arXiv 2209.05433); vLLM "
    "model_executor/layers/quantization/fp8.py (fp32 weight_scale per tensor)";
constexpr const char* kSourceFp8Channel =
    "llm-compressor / compressed-tensors FP8_DYNAMIC: fp32 scale per output channel (vLLM "
    "compressed_tensors_w8a8_fp8.py)";
constexpr const char* kSourceFp8Block =
    "DeepSeek-V3 technical report (arXiv 2412.19437) §3.3.2: fp32 scale per 128×128 weight "
    "block (weight_scale_inv)";
constexpr const char* kSourceInt8 =
    "Dettmers et al. 2022, LLM.int8() (arXiv 2208.07339): row-wise absmax, fp32 per output "
    "channel";
constexpr const char* kSourceInt4 =
    "Lin et al. 2023 AWQ (arXiv 2306.00978) / Frantar et al. 2022 GPTQ (arXiv 2210.17323): "
    "packed int4 qweight, fp16 scales and packed 4-bit qzeros per group";
constexpr const char* kSourceNf4 =
    "Dettmers et al. 2023, QLoRA (arXiv 2305.14314) §2: NF4 blocks of 64, double quantisation "
    "(8-bit absmax, fp32 per 256 blocks) = 0.127 bits/param; bitsandbytes Params4bit";
constexpr const char* kSourceMxfp4 =
    "OCP Microscaling Formats (MX) v1.0: MXFP4 = e2m1 elements, one E8M0 scale per 32";
constexpr const char* kSourceNvfp4 =
    "NVIDIA NVFP4 (Blackwell): e2m1 elements, one e4m3 scale per 16, fp32 scale per tensor";

std::string digits(int64_t n) { return group_digits(n); }

}  // namespace

std::optional<WeightFormat> parse_weight_format(std::string_view name) {
  const std::string s = to_lower(name);
  for (size_t i = 0; i < kWeightFormatNames.size(); ++i)
    if (s == kWeightFormatNames[i]) return static_cast<WeightFormat>(i);
  if (s == "float32") return WeightFormat::kFp32;
  if (s == "bfloat16") return WeightFormat::kBf16;
  if (s == "float16" || s == "half") return WeightFormat::kFp16;
  if (s == "fp8-tensor" || s == "fp8_e4m3" || s == "e4m3") return WeightFormat::kFp8;
  if (s == "fp8-block128") return WeightFormat::kFp8Block;
  if (s == "awq" || s == "gptq" || s == "int4-awq" || s == "int4-gptq") return WeightFormat::kInt4;
  return std::nullopt;
}

std::string weight_format_choices() {
  std::string out;
  for (const char* n : kWeightFormatNames) out += (out.empty() ? "" : ", ") + std::string(n);
  return out;
}

bool is_float_format(WeightFormat f) {
  return f == WeightFormat::kFp32 || f == WeightFormat::kBf16 || f == WeightFormat::kFp16;
}

DType float_dtype(WeightFormat f) {
  if (f == WeightFormat::kFp32) return DType::kFp32;
  if (f == WeightFormat::kFp16) return DType::kFp16;
  return DType::kBf16;
}

WeightFormat format_of(DType t) {
  switch (t) {
    case DType::kFp32:
      return WeightFormat::kFp32;
    case DType::kBf16:
      return WeightFormat::kBf16;
    case DType::kFp16:
      return WeightFormat::kFp16;
    case DType::kFp8:
      return WeightFormat::kFp8;
    case DType::kFp4:
      return WeightFormat::kMxfp4;
  }
  return WeightFormat::kBf16;
}

double bits_per_weight(const WeightQuant& q) {
  switch (q.format) {
    case WeightFormat::kFp32:
      return 32;
    case WeightFormat::kBf16:
    case WeightFormat::kFp16:
      return 16;
    case WeightFormat::kFp8:
    case WeightFormat::kFp8Channel:
    case WeightFormat::kInt8:
      return 8;
    case WeightFormat::kFp8Block:
      return 8 + 32.0 / (128 * 128);
    case WeightFormat::kInt4:
      return 4 + 20.0 / static_cast<double>(q.group_size);
    case WeightFormat::kNf4:
      return q.double_quant ? 4 + 8.0 / 64 + 32.0 / (64 * 256) : 4 + 32.0 / 64;
    case WeightFormat::kMxfp4:
      return 4 + 8.0 / 32;
    case WeightFormat::kNvfp4:
      return 4 + 8.0 / 16;
  }
  return 16;
}

QuantBytes quantized_bytes(const WeightQuant& q, const LinearShape& shape, bool explain) {
  const Wide n = shape.params;
  QuantBytes out;
  auto set = [&](Wide bytes, std::string formula, const char* source) {
    out.bytes = static_cast<int64_t>(bytes);
    if (explain) {
      out.formula = std::move(formula);
      out.source = source;
    }
  };
  const std::string p = explain ? digits(shape.params) : "";
  switch (q.format) {
    case WeightFormat::kFp32:
    case WeightFormat::kBf16:
    case WeightFormat::kFp16: {
      const int64_t bytes = bits_of(float_dtype(q.format)) / 8;
      set(n * bytes, explain ? fmt::format("{} × {} B", p, bytes) : "", kSourceFloat);
      break;
    }
    case WeightFormat::kFp8:
      set(n + Wide{4} * shape.tensors,
          explain ? fmt::format("{} × 1 B + {} tensors × 4 B scale", p, shape.tensors) : "",
          kSourceFp8);
      break;
    case WeightFormat::kFp8Channel:
      set(n + Wide{4} * shape.rows,
          explain ? fmt::format("{} × 1 B + {} output channels × 4 B scale", p, digits(shape.rows))
                  : "",
          kSourceFp8Channel);
      break;
    case WeightFormat::kFp8Block:
      // Assumes both matrix dimensions are multiples of 128, as in DeepSeek-V3 and Qwen3-FP8.
      set(n + 4 * ceil_div(n, 128 * 128),
          explain ? fmt::format("{} × 1 B + ⌈{}/(128·128)⌉ blocks × 4 B scale", p, p) : "",
          kSourceFp8Block);
      break;
    case WeightFormat::kInt8:
      set(n + Wide{4} * shape.rows,
          explain ? fmt::format("{} × 1 B + {} output channels × 4 B scale", p, digits(shape.rows))
                  : "",
          kSourceInt8);
      break;
    case WeightFormat::kInt4: {
      // Per group: an fp16 scale (2 B) and a 4-bit zero packed eight to an int32 (0.5 B).
      const Wide groups = ceil_div(n, q.group_size);
      set(ceil_div(n, 2) + ceil_div(groups * 5, 2),
          explain ? fmt::format("{} × 0.5 B + ⌈{}/{}⌉ groups × (2 B fp16 scale + 0.5 B zero) = "
                                "{:.3f} bits/weight",
                                p, p, q.group_size, bits_per_weight(q))
                  : "",
          kSourceInt4);
      break;
    }
    case WeightFormat::kNf4: {
      const Wide blocks = ceil_div(n, 64);
      const Wide absmax =
          q.double_quant ? blocks + 4 * ceil_div(blocks, 256) : 4 * blocks;  // 8-bit or fp32
      set(ceil_div(n, 2) + absmax,
          explain ? fmt::format("{} × 0.5 B + ⌈{}/64⌉ × {} = {:.3f} bits/weight", p, p,
                                q.double_quant ? "(1 B absmax + 4 B per 256 blocks)" : "4 B absmax",
                                bits_per_weight(q))
                  : "",
          kSourceNf4);
      break;
    }
    case WeightFormat::kMxfp4:
      set(ceil_div(n, 2) + ceil_div(n, 32),
          explain ? fmt::format("{} × 0.5 B + ⌈{}/32⌉ × 1 B E8M0 scale = 4.25 bits/weight", p, p)
                  : "",
          kSourceMxfp4);
      break;
    case WeightFormat::kNvfp4:
      set(ceil_div(n, 2) + ceil_div(n, 16) + Wide{4} * shape.tensors,
          explain ? fmt::format("{} × 0.5 B + ⌈{}/16⌉ × 1 B e4m3 scale + {} tensors × 4 B = 4.5 "
                                "bits/weight",
                                p, p, shape.tensors)
                  : "",
          kSourceNvfp4);
      break;
  }
  return out;
}

bool ModuleFormats::quantized() const {
  for (const WeightQuant& q : by_class)
    if (!is_float_format(q.format)) return true;
  return false;
}

ModuleFormats unquantized_formats(DType base) {
  ModuleFormats f;
  f.base = base;
  for (WeightQuant& q : f.by_class) q.format = format_of(base);
  return f;
}

DType serving_dtype(std::string_view torch_dtype) {
  const std::string s = to_lower(torch_dtype);
  if (s == "float16" || s == "fp16" || s == "half") return DType::kFp16;
  return DType::kBf16;
}

// ---------------------------------------------------------------------------------------------
// quantization_config

namespace {

constexpr const char* kPrefix = "config.quantization_config.";

std::string show(const json& v) {
  std::string text = v.dump(-1, ' ', false, json::error_handler_t::replace);
  return text.size() > 40 ? text.substr(0, 40) + "..." : text;
}

// Which module classes a modules_to_not_convert / ignore entry keeps unquantised.
struct Exclusions {
  bool attention = false, mlp = false, experts = false, embedding = false, lm_head = false;
};

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

void exclude(const std::string& raw, Exclusions& ex, std::vector<std::string>& warnings) {
  const std::string p = to_lower(raw);
  if (ends_with(p, "lm_head")) {
    ex.lm_head = true;
  } else if (p.find("embed") != std::string::npos || ends_with(p, "wte")) {
    ex.embedding = true;
  } else if (ends_with(p, "self_attn") || ends_with(p, "attn") || ends_with(p, "attention")) {
    ex.attention = true;
  } else if (ends_with(p, "experts")) {
    ex.experts = true;
  } else if (ends_with(p, "shared_expert") || ends_with(p, "shared_experts")) {
    ex.mlp = true;
  } else if (ends_with(p, "mlp")) {
    ex.mlp = ex.experts = true;
  } else if (ends_with(p, "router") || ends_with(p, "gate") ||
             p.find("norm") != std::string::npos) {
    // Routers and norms are never quantised here anyway.
  } else {
    warnings.push_back(fmt::format(
        "quantization_config excludes \"{}\": exclusions of single layers or projections are not "
        "modelled (counted as quantised)",
        raw));
  }
}

std::optional<Error> read_exclusions(const json& qc, const char* key, Exclusions& ex,
                                     std::vector<std::string>& warnings) {
  auto it = qc.find(key);
  if (it == qc.end() || it->is_null()) return std::nullopt;
  if (!it->is_array()) return Error{kPrefix + std::string(key), show(*it), "a list of names", ""};
  for (const json& entry : *it) {
    if (!entry.is_string())
      return Error{kPrefix + std::string(key), show(entry), "module names as strings", ""};
    exclude(entry.get<std::string>(), ex, warnings);
  }
  return std::nullopt;
}

std::optional<Error> integer_field(const json& object, const std::string& prefix, const char* key,
                                   int64_t& out) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return std::nullopt;
  if (!it->is_number_integer()) return Error{prefix + key, show(*it), "an integer", ""};
  out = it->get<int64_t>();
  return std::nullopt;
}

std::optional<Error> text_field(const json& object, const std::string& prefix, const char* key,
                                std::string& out) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return std::nullopt;
  if (!it->is_string()) return Error{prefix + key, show(*it), "a string", ""};
  out = it->get<std::string>();
  return std::nullopt;
}

bool boolean_field(const json& object, const char* key, bool fallback) {
  auto it = object.find(key);
  return it != object.end() && it->is_boolean() ? it->get<bool>() : fallback;
}

// Linear layers (attention, dense MLP, experts) in `q`; embedding and LM head stay in base.
void quantize_linears(ModuleFormats& f, const WeightQuant& q) {
  f[ModuleClass::kAttention] = q;
  f[ModuleClass::kMlp] = q;
  f[ModuleClass::kExperts] = q;
}

void apply_exclusions(ModuleFormats& f, const Exclusions& ex) {
  const WeightQuant base{format_of(f.base)};
  if (ex.attention) f[ModuleClass::kAttention] = base;
  if (ex.mlp) f[ModuleClass::kMlp] = base;
  if (ex.experts) f[ModuleClass::kExperts] = base;
  if (ex.embedding) f[ModuleClass::kEmbedding] = base;
  if (ex.lm_head) f[ModuleClass::kLmHead] = base;
}

std::optional<Error> read_fp8(const json& qc, QuantizationConfig& out) {
  WeightQuant q{WeightFormat::kFp8};
  auto block = qc.find("weight_block_size");
  if (block != qc.end() && !block->is_null()) {
    if (!block->is_array() || block->size() != 2 || !(*block)[0].is_number_integer() ||
        !(*block)[1].is_number_integer())
      return Error{std::string(kPrefix) + "weight_block_size", show(*block), "[128, 128]", ""};
    if ((*block)[0].get<int64_t>() != 128 || (*block)[1].get<int64_t>() != 128)
      out.warnings.push_back(fmt::format(
          "fp8 weight_block_size {} is counted as 128×128 blocks (scale bytes differ slightly)",
          show(*block)));
    q.format = WeightFormat::kFp8Block;
  }
  quantize_linears(out.formats, q);
  return std::nullopt;
}

std::optional<Error> read_int4_family(const json& qc, const std::string& method,
                                      QuantizationConfig& out) {
  int64_t bits = 4, group = 128;
  if (auto e = integer_field(qc, kPrefix, method == "awq" ? "w_bit" : "bits", bits)) return e;
  if (auto e = integer_field(qc, kPrefix, "bits", bits)) return e;
  if (auto e = integer_field(qc, kPrefix, method == "awq" ? "q_group_size" : "group_size", group))
    return e;
  if (auto e = integer_field(qc, kPrefix, "group_size", group)) return e;
  if (bits != 4 && bits != 8)
    return Error{std::string(kPrefix) + "bits", std::to_string(bits), "4 or 8",
                 "only 4- and 8-bit " + method + " checkpoints are modelled"};
  WeightQuant q{bits == 4 ? WeightFormat::kInt4 : WeightFormat::kInt8};
  // group_size -1 means one group per output channel (the whole input row).
  q.group_size = group > 0 ? group : 4096;
  if (group <= 0)
    out.warnings.push_back(
        "group_size -1 (per channel) is counted as groups of 4096 (one scale per row of a "
        "4096-wide layer)");
  quantize_linears(out.formats, q);
  if (boolean_field(qc, "lm_head", false)) out.formats[ModuleClass::kLmHead] = q;
  return std::nullopt;
}

std::optional<Error> read_bitsandbytes(const json& qc, QuantizationConfig& out) {
  if (boolean_field(qc, "load_in_8bit", false)) {
    quantize_linears(out.formats, WeightQuant{WeightFormat::kInt8});
    return std::nullopt;
  }
  if (!boolean_field(qc, "load_in_4bit", false)) {
    out.warnings.push_back("bitsandbytes config loads neither 4- nor 8-bit: weights unquantised");
    return std::nullopt;
  }
  std::string type = "nf4";
  if (auto e = text_field(qc, kPrefix, "bnb_4bit_quant_type", type)) return e;
  if (to_lower(type) != "nf4" && to_lower(type) != "fp4")
    return Error{std::string(kPrefix) + "bnb_4bit_quant_type", type, "nf4 or fp4", ""};
  // bitsandbytes' FP4 has the same storage as NF4 (4-bit codes, absmax per 64).
  WeightQuant q{WeightFormat::kNf4};
  q.double_quant = boolean_field(qc, "bnb_4bit_use_double_quant", false);
  quantize_linears(out.formats, q);
  return std::nullopt;
}

// compressed-tensors (llm-compressor): the weights scheme of the first config group.
std::optional<Error> read_compressed_tensors(const json& qc, QuantizationConfig& out) {
  std::string format;
  if (auto e = text_field(qc, kPrefix, "format", format)) return e;
  if (to_lower(format).find("nvfp4") != std::string::npos) {
    quantize_linears(out.formats, WeightQuant{WeightFormat::kNvfp4});
    return std::nullopt;
  }
  auto groups = qc.find("config_groups");
  if (groups == qc.end() || !groups->is_object() || groups->empty())
    return Error{std::string(kPrefix) + "config_groups",
                 groups == qc.end() ? "missing" : show(*groups),
                 "an object of groups with a \"weights\" scheme", ""};
  if (groups->size() > 1)
    out.warnings.push_back("compressed-tensors config has several groups: the first one is used");
  const json& group = groups->begin().value();
  const std::string prefix =
      std::string(kPrefix) + "config_groups." + groups->begin().key() + ".weights.";
  auto weights = group.find("weights");
  if (weights == group.end() || !weights->is_object())
    return Error{prefix.substr(0, prefix.size() - 1), "missing", "a weights scheme object", ""};
  int64_t bits = 8, group_size = 128;
  std::string type = "int", strategy = "channel";
  if (auto e = integer_field(*weights, prefix, "num_bits", bits)) return e;
  if (auto e = text_field(*weights, prefix, "type", type)) return e;
  if (auto e = text_field(*weights, prefix, "strategy", strategy)) return e;
  if (auto e = integer_field(*weights, prefix, "group_size", group_size)) return e;
  WeightQuant q;
  if (bits == 8 && type == "float") {
    q.format = strategy == "tensor"  ? WeightFormat::kFp8
               : strategy == "block" ? WeightFormat::kFp8Block
                                     : WeightFormat::kFp8Channel;
  } else if (bits == 8) {
    q.format = WeightFormat::kInt8;
  } else if (bits == 4 && type == "float") {
    q.format = WeightFormat::kNvfp4;
  } else if (bits == 4) {
    q.format = WeightFormat::kInt4;
    q.group_size = group_size > 0 ? group_size : 4096;
  } else {
    return Error{prefix + "num_bits", std::to_string(bits), "4 or 8", ""};
  }
  quantize_linears(out.formats, q);
  return std::nullopt;
}

std::optional<Error> read_modelopt(const json& qc, QuantizationConfig& out) {
  const json* holder = &qc;
  if (auto nested = qc.find("quantization"); nested != qc.end() && nested->is_object())
    holder = &*nested;
  std::string algo;
  if (auto e = text_field(*holder, kPrefix, "quant_algo", algo)) return e;
  const std::string a = to_lower(algo);
  if (a == "fp8") {
    quantize_linears(out.formats, WeightQuant{WeightFormat::kFp8});
  } else if (a == "nvfp4") {
    quantize_linears(out.formats, WeightQuant{WeightFormat::kNvfp4});
  } else {
    return Error{std::string(kPrefix) + "quant_algo", algo, "FP8 or NVFP4", ""};
  }
  Exclusions ex;
  if (auto e = read_exclusions(*holder, "exclude_modules", ex, out.warnings)) return e;
  apply_exclusions(out.formats, ex);
  return std::nullopt;
}

std::optional<Error> read_method(const json& qc, const std::string& method,
                                 QuantizationConfig& out) {
  if (method == "fp8") return read_fp8(qc, out);
  if (method == "fbgemm_fp8") {
    quantize_linears(out.formats, WeightQuant{WeightFormat::kFp8Channel});
    return std::nullopt;
  }
  if (method == "mxfp4") {
    // gpt-oss: only the MoE experts are MXFP4 (transformers Mxfp4HfQuantizer, vLLM Mxfp4Config).
    out.formats[ModuleClass::kExperts] = WeightQuant{WeightFormat::kMxfp4};
    return std::nullopt;
  }
  if (method == "awq" || method == "gptq") return read_int4_family(qc, method, out);
  if (method == "bitsandbytes") return read_bitsandbytes(qc, out);
  if (method == "compressed-tensors") return read_compressed_tensors(qc, out);
  if (method == "modelopt") return read_modelopt(qc, out);
  out.warnings.push_back(fmt::format(
      "quantization_config.quant_method \"{}\" is not modelled: weights counted in {} (set "
      "--weight-dtype to say how they are stored)",
      method, dtype_name(out.formats.base)));
  return std::nullopt;
}

}  // namespace

Result<QuantizationConfig> read_quantization_config(std::string_view json_text, DType base) {
  QuantizationConfig out;
  out.formats = unquantized_formats(base);
  if (json_text.empty()) return out;
  const json qc = json::parse(json_text, nullptr, false);
  if (qc.is_discarded() || !qc.is_object())
    return Error{"config.quantization_config", std::string(json_text.substr(0, 40)),
                 "an object with quant_method", ""};
  if (auto e = text_field(qc, kPrefix, "quant_method", out.method)) return *e;
  out.method = to_lower(out.method);
  if (out.method.empty())
    return Error{std::string(kPrefix) + "quant_method", "missing",
                 "fp8, mxfp4, awq, gptq, bitsandbytes, compressed-tensors, modelopt, fbgemm_fp8",
                 ""};
  if (auto e = read_method(qc, out.method, out)) return *e;
  Exclusions ex;
  for (const char* key : {"modules_to_not_convert", "ignore", "llm_int8_skip_modules"})
    if (auto e = read_exclusions(qc, key, ex, out.warnings)) return *e;
  apply_exclusions(out.formats, ex);
  return out;
}

}  // namespace vramplan
