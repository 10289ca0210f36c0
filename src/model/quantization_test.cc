#include "vramplan/model/quantization.h"

#include <gtest/gtest.h>

namespace vramplan {
namespace {

constexpr int64_t kMi = 1 << 20;  // 1,048,576 weights: every block and group size divides it

int64_t bytes(WeightQuant q, LinearShape shape = {kMi, 1, 1024}) {
  return quantized_bytes(q, shape, true).bytes;
}

TEST(Quantization, FloatFormatsAreTheirWidth) {
  EXPECT_EQ(bytes({WeightFormat::kFp32}), 4 * kMi);
  EXPECT_EQ(bytes({WeightFormat::kBf16}), 2 * kMi);
  EXPECT_EQ(bytes({WeightFormat::kFp16}), 2 * kMi);
}

TEST(Quantization, Fp8ScalesPerTensorChannelOrBlock) {
  // Per tensor: 1 B each + 3 tensors × 4 B.
  EXPECT_EQ(bytes({WeightFormat::kFp8}, {kMi, 3, 3072}), kMi + 12);
  // Per output channel: 3,072 rows × 4 B.
  EXPECT_EQ(bytes({WeightFormat::kFp8Channel}, {kMi, 3, 3072}), kMi + 3072 * 4);
  // 128×128 blocks: 2^20 / 2^14 = 64 blocks × 4 B (DeepSeek-V3's weight_scale_inv).
  EXPECT_EQ(bytes({WeightFormat::kFp8Block}), kMi + 64 * 4);
  EXPECT_NEAR(bits_per_weight({WeightFormat::kFp8Block}), 8.00195, 1e-5);
}

TEST(Quantization, Int8KeepsARowScale) {
  EXPECT_EQ(bytes({WeightFormat::kInt8}, {kMi, 1, 1024}), kMi + 1024 * 4);
}

TEST(Quantization, Int4GroupScalesAndZeros) {
  // 0.5 B per weight + per group of 128: fp16 scale 2 B + packed 4-bit zero 0.5 B.
  // 2^20/2 + 8,192 groups × 2.5 B = 524,288 + 20,480.
  EXPECT_EQ(bytes({WeightFormat::kInt4, 128}), 524'288 + 20'480);
  EXPECT_DOUBLE_EQ(bits_per_weight({WeightFormat::kInt4, 128}), 4.15625);
  // Smaller groups cost more: group 32 → 32,768 groups × 2.5 B.
  EXPECT_EQ(bytes({WeightFormat::kInt4, 32}), 524'288 + 81'920);
}

TEST(Quantization, Nf4DoubleQuantIsQLoRAs4127Bits) {
  // QLoRA §2: 64-weight blocks with an 8-bit absmax, an fp32 scale per 256 absmax values:
  // 4 + 8/64 + 32/(64·256) = 4.127 bits. 2^20 weights: 524,288 + 16,384 + 64 × 4.
  WeightQuant nf4{WeightFormat::kNf4};
  EXPECT_EQ(bytes(nf4), 524'288 + 16'384 + 256);
  EXPECT_NEAR(bits_per_weight(nf4), 4.127, 5e-4);
  // Without double quantisation an fp32 absmax per 64: 4.5 bits.
  nf4.double_quant = false;
  EXPECT_EQ(bytes(nf4), 524'288 + 16'384 * 4);
  EXPECT_DOUBLE_EQ(bits_per_weight(nf4), 4.5);
}

TEST(Quantization, MicroscalingFormats) {
  // MXFP4: one E8M0 byte per 32 → 4.25 bits. NVFP4: one e4m3 byte per 16 + fp32 per tensor.
  EXPECT_EQ(bytes({WeightFormat::kMxfp4}), 524'288 + 32'768);
  EXPECT_DOUBLE_EQ(bits_per_weight({WeightFormat::kMxfp4}), 4.25);
  EXPECT_EQ(bytes({WeightFormat::kNvfp4}, {kMi, 2, 0}), 524'288 + 65'536 + 8);
  EXPECT_DOUBLE_EQ(bits_per_weight({WeightFormat::kNvfp4}), 4.5);
}

TEST(Quantization, FormulasNameTheirSource) {
  const QuantBytes q = quantized_bytes({WeightFormat::kMxfp4}, {kMi, 1, 1}, true);
  EXPECT_NE(q.formula.find("E8M0"), std::string::npos);
  EXPECT_NE(q.source.find("OCP"), std::string::npos);
  EXPECT_TRUE(quantized_bytes({WeightFormat::kMxfp4}, {kMi, 1, 1}, false).formula.empty());
}

TEST(Quantization, ParsesNamesAndAliases) {
  EXPECT_EQ(parse_weight_format("NF4"), WeightFormat::kNf4);
  EXPECT_EQ(parse_weight_format("awq"), WeightFormat::kInt4);
  EXPECT_EQ(parse_weight_format("bfloat16"), WeightFormat::kBf16);
  EXPECT_EQ(parse_weight_format("fp8-block"), WeightFormat::kFp8Block);
  EXPECT_FALSE(parse_weight_format("int3").has_value());
}

TEST(QuantizationConfig, DeepSeekBlockwiseFp8) {
  Result<QuantizationConfig> qc = read_quantization_config(
      R"({"activation_scheme":"dynamic","fmt":"e4m3","quant_method":"fp8",
          "weight_block_size":[128,128]})",
      DType::kBf16);
  ASSERT_TRUE(qc.ok()) << qc.error().message();
  const ModuleFormats& f = qc->formats;
  EXPECT_EQ(f[ModuleClass::kAttention].format, WeightFormat::kFp8Block);
  EXPECT_EQ(f[ModuleClass::kExperts].format, WeightFormat::kFp8Block);
  EXPECT_EQ(f[ModuleClass::kEmbedding].format, WeightFormat::kBf16);
  EXPECT_EQ(f[ModuleClass::kLmHead].format, WeightFormat::kBf16);
}

TEST(QuantizationConfig, GptOssMxfp4ExpertsOnly) {
  Result<QuantizationConfig> qc = read_quantization_config(
      R"({"modules_to_not_convert":["model.layers.*.self_attn","model.layers.*.mlp.router",
          "model.embed_tokens","lm_head"],"quant_method":"mxfp4"})",
      DType::kBf16);
  ASSERT_TRUE(qc.ok());
  EXPECT_EQ(qc->formats[ModuleClass::kExperts].format, WeightFormat::kMxfp4);
  EXPECT_EQ(qc->formats[ModuleClass::kAttention].format, WeightFormat::kBf16);
  EXPECT_EQ(qc->formats[ModuleClass::kLmHead].format, WeightFormat::kBf16);
  EXPECT_TRUE(qc->warnings.empty());
}

TEST(QuantizationConfig, AwqGptqBitsandbytesCompressedTensors) {
  auto read = [](const char* text) {
    Result<QuantizationConfig> qc = read_quantization_config(text, DType::kFp16);
    EXPECT_TRUE(qc.ok()) << (qc.ok() ? "" : qc.error().message());
    return qc.ok() ? qc->formats : ModuleFormats{};
  };
  ModuleFormats awq = read(R"({"quant_method":"awq","bits":4,"group_size":64,"zero_point":true})");
  EXPECT_EQ(awq[ModuleClass::kMlp].format, WeightFormat::kInt4);
  EXPECT_EQ(awq[ModuleClass::kMlp].group_size, 64);
  EXPECT_EQ(awq[ModuleClass::kLmHead].format, WeightFormat::kFp16);
  ModuleFormats gptq = read(R"({"quant_method":"gptq","bits":4,"group_size":128,"lm_head":true})");
  EXPECT_EQ(gptq[ModuleClass::kLmHead].format, WeightFormat::kInt4);
  ModuleFormats bnb = read(
      R"({"quant_method":"bitsandbytes","load_in_4bit":true,"bnb_4bit_quant_type":"nf4",
          "bnb_4bit_use_double_quant":true})");
  EXPECT_EQ(bnb[ModuleClass::kAttention].format, WeightFormat::kNf4);
  EXPECT_TRUE(bnb[ModuleClass::kAttention].double_quant);
  ModuleFormats ct = read(
      R"({"quant_method":"compressed-tensors","format":"float-quantized","ignore":["lm_head"],
          "config_groups":{"group_0":{"targets":["Linear"],
          "weights":{"num_bits":8,"type":"float","strategy":"channel"}}}})");
  EXPECT_EQ(ct[ModuleClass::kAttention].format, WeightFormat::kFp8Channel);
  EXPECT_EQ(ct[ModuleClass::kLmHead].format, WeightFormat::kFp16);
}

TEST(QuantizationConfig, UnknownMethodIsAWarningNotASilentGuess) {
  Result<QuantizationConfig> qc =
      read_quantization_config(R"({"quant_method":"hqq","nbits":4})", DType::kBf16);
  ASSERT_TRUE(qc.ok());
  EXPECT_FALSE(qc->formats.quantized());
  ASSERT_EQ(qc->warnings.size(), 1u);
  EXPECT_NE(qc->warnings[0].find("hqq"), std::string::npos);
}

TEST(QuantizationConfig, ErrorsNameTheField) {
  Result<QuantizationConfig> bits =
      read_quantization_config(R"({"quant_method":"gptq","bits":3})", DType::kBf16);
  ASSERT_FALSE(bits.ok());
  EXPECT_EQ(bits.error().field, "config.quantization_config.bits");
  EXPECT_EQ(bits.error().value, "3");
  Result<QuantizationConfig> block =
      read_quantization_config(R"({"quant_method":"fp8","weight_block_size":"big"})", DType::kBf16);
  ASSERT_FALSE(block.ok());
  EXPECT_EQ(block.error().field, "config.quantization_config.weight_block_size");
  EXPECT_FALSE(read_quantization_config("[1]", DType::kBf16).ok());
  EXPECT_FALSE(read_quantization_config(R"({"bits":4})", DType::kBf16).ok());
}

TEST(QuantizationConfig, ServingDtypeFollowsTorchDtype) {
  EXPECT_EQ(serving_dtype("float16"), DType::kFp16);
  EXPECT_EQ(serving_dtype("bfloat16"), DType::kBf16);
  EXPECT_EQ(serving_dtype("float32"), DType::kBf16);  // served in 16 bits, as vLLM's auto
  EXPECT_EQ(serving_dtype(""), DType::kBf16);
}

}  // namespace
}  // namespace vramplan
