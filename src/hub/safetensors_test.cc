#include "hub/safetensors.h"

#include <gtest/gtest.h>

#include <string>
#include <variant>

namespace vramplan::hub {
namespace {

std::string length_prefix(uint64_t n) {
  std::string bytes(8, '\0');
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  return bytes;
}

TEST(SafetensorsTest, HeaderLengthIsLittleEndian) {
  EXPECT_EQ(safetensors_header_length(length_prefix(0x0920)), 0x0920);
  EXPECT_EQ(safetensors_header_length(length_prefix(1) + "{}"), 1);
  EXPECT_FALSE(safetensors_header_length("short"));
  EXPECT_FALSE(safetensors_header_length(length_prefix(0)));
  EXPECT_FALSE(safetensors_header_length(length_prefix(kMaxSafetensorsHeader + 1)));
  EXPECT_FALSE(safetensors_header_length(length_prefix(~uint64_t{0})));
}

TEST(SafetensorsTest, SumsElementsAndBytesPerDtype) {
  // 4096×4096 BF16 = 16,777,216 elements in 33,554,432 bytes; a 4096 F32 norm = 16,384 bytes.
  const std::string header = R"({
    "__metadata__": {"format": "pt"},
    "w": {"dtype": "BF16", "shape": [4096, 4096], "data_offsets": [0, 33554432]},
    "n": {"dtype": "F32", "shape": [4096], "data_offsets": [33554432, 33570816]},
    "s": {"dtype": "F32", "shape": [], "data_offsets": [33570816, 33570820]}
  })";
  auto parsed = parse_safetensors_header(header);
  ASSERT_TRUE(std::holds_alternative<TensorStats>(parsed)) << std::get<std::string>(parsed);
  const TensorStats& s = std::get<TensorStats>(parsed);
  EXPECT_EQ(s.tensors, 3);
  EXPECT_EQ(s.dtype_elements.at("BF16"), 16777216);
  EXPECT_EQ(s.dtype_elements.at("F32"), 4096 + 1);  // a scalar is one element
  EXPECT_EQ(s.elements, 16777216 + 4097);
  EXPECT_EQ(s.bytes, 33570820);
}

TEST(SafetensorsTest, InvalidHeadersAreReasonsNotCrashes) {
  const char* bad[] = {
      "not json",
      "[1, 2]",
      R"({"w": {"shape": [2], "data_offsets": [0, 4]}})",
      R"({"w": {"dtype": "F32", "shape": [-2], "data_offsets": [0, 4]}})",
      R"({"w": {"dtype": "F32", "shape": "2", "data_offsets": [0, 4]}})",
      R"({"w": {"dtype": "F32", "shape": [2], "data_offsets": [4, 0]}})",
      R"({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0]}})",
      R"({"w": {"dtype": "F32", "shape": [4294967296, 4294967296], "data_offsets": [0, 4]}})",
      R"({"w": 5})",
  };
  for (const char* header : bad)
    EXPECT_TRUE(std::holds_alternative<std::string>(parse_safetensors_header(header))) << header;
}

TEST(SafetensorsTest, IndexListsShardsOnceInOrder) {
  auto parsed = parse_safetensors_index(R"({
    "metadata": {"total_size": 16060522496},
    "weight_map": {"a": "model-00001-of-00002.safetensors", "b": "model-00002-of-00002.safetensors",
                   "c": "model-00001-of-00002.safetensors"}})");
  ASSERT_TRUE(std::holds_alternative<SafetensorsIndex>(parsed)) << std::get<std::string>(parsed);
  const SafetensorsIndex& index = std::get<SafetensorsIndex>(parsed);
  EXPECT_EQ(index.shards, (std::vector<std::string>{"model-00001-of-00002.safetensors",
                                                    "model-00002-of-00002.safetensors"}));
  EXPECT_EQ(index.total_size, 16060522496);
}

TEST(SafetensorsTest, IndexWithoutSizeOrWithUnsafeShardNames) {
  auto no_size = parse_safetensors_index(R"({"weight_map": {"a": "x.safetensors"}})");
  ASSERT_TRUE(std::holds_alternative<SafetensorsIndex>(no_size));
  EXPECT_FALSE(std::get<SafetensorsIndex>(no_size).total_size);
  for (const char* bad : {R"({"weight_map": {"a": "../../etc/passwd"}})",
                          R"({"weight_map": {"a": "/abs.safetensors"}})", R"({"weight_map": {}})",
                          R"({"metadata": {}})", "[]", "garbage"})
    EXPECT_TRUE(std::holds_alternative<std::string>(parse_safetensors_index(bad))) << bad;
}

CheckpointSummary llama_like() {
  CheckpointSummary s;
  s.repo_id = "meta-llama/Llama-3.1-8B";
  s.commit = "d04e592bb4f6aa9cfee91e2e20afa771667e1d4b";
  s.source = "model.safetensors.index.json + 4 shard headers";
  s.files = 4;
  s.total_bytes = 16060522496;
  s.dtypes_known = true;
  s.stats.dtype_elements = {{"BF16", 8030261248}};
  s.stats.elements = 8030261248;
  s.stats.bytes = 16060522496;
  return s;
}

TEST(SafetensorsTest, JsonRoundTrip) {
  const nlohmann::json j = checkpoint_to_json(llama_like());
  EXPECT_EQ(j["total_bytes"], 16060522496);
  EXPECT_EQ(j["dtypes"]["BF16"], 8030261248);
  EXPECT_EQ(j["params"], 8030261248);
  EXPECT_EQ(j["source"], "model.safetensors.index.json + 4 shard headers");
  const CheckpointSummary back = checkpoint_from_json(j);
  EXPECT_EQ(back.stats.dtype_elements, llama_like().stats.dtype_elements);
  EXPECT_EQ(back.total_bytes, 16060522496);
  EXPECT_EQ(back.files, 4);
  EXPECT_TRUE(back.dtypes_known);
}

TEST(SafetensorsTest, UnknownDtypesAreNullInJson) {
  CheckpointSummary s = llama_like();
  s.dtypes_known = false;
  const nlohmann::json j = checkpoint_to_json(s);
  EXPECT_TRUE(j["dtypes"].is_null());
  EXPECT_TRUE(j["params"].is_null());
  EXPECT_NE(checkpoint_note(s, 8030261248).find("dtypes not available"), std::string::npos);
}

TEST(SafetensorsTest, NoteComparesWithTheComputedCount) {
  const std::string same = checkpoint_note(llama_like(), 8030261248);
  EXPECT_NE(same.find("16.06 GB"), std::string::npos) << same;
  EXPECT_NE(same.find("BF16 8,030,261,248"), std::string::npos) << same;
  EXPECT_NE(same.find("the same as vramplan's parameter count"), std::string::npos) << same;
  // 1% more stored than counted: (8,030,261,248 - 7,950,258,000) / 7,950,258,000 = +1.01%.
  const std::string more = checkpoint_note(llama_like(), 7950258000);
  EXPECT_NE(more.find("7,950,258,000 parameters counted by vramplan (+1.01%"), std::string::npos)
      << more;
}

TEST(SafetensorsTest, TensorsGroupByModule) {
  EXPECT_EQ(module_of("model.layers.12.self_attn.q_proj.weight"), "layer 12");
  EXPECT_EQ(module_of("backbone.layers.3.mixer.in_proj.weight"), "layer 3");
  EXPECT_EQ(module_of("transformer.h.0.attn.c_attn.bias"), "layer 0");
  EXPECT_EQ(module_of("model.language_model.layers.7.mlp.up_proj.weight"), "layer 7");
  EXPECT_EQ(module_of("visual.blocks.3.attn.qkv.weight"), "vision tower + projector");
  EXPECT_EQ(module_of("vision_tower.vision_model.encoder.layers.0.mlp.fc1.weight"),
            "vision tower + projector");
  EXPECT_EQ(module_of("multi_modal_projector.linear_1.weight"), "vision tower + projector");
  EXPECT_EQ(module_of("model.embed_tokens.weight"), "embedding");
  EXPECT_EQ(module_of("backbone.embeddings.weight"), "embedding");
  EXPECT_EQ(module_of("lm_head.weight"), "lm head");
  EXPECT_EQ(module_of("model.norm.weight"), "other");
  EXPECT_EQ(module_of("model.layers.99999999999.x"), "other");  // no absurd index
  auto parsed = parse_safetensors_header(R"({
    "model.layers.0.w": {"dtype": "BF16", "shape": [4, 4], "data_offsets": [0, 32]},
    "model.layers.1.w": {"dtype": "BF16", "shape": [4, 4], "data_offsets": [32, 64]},
    "lm_head.weight": {"dtype": "BF16", "shape": [2, 4], "data_offsets": [64, 80]}})");
  ASSERT_TRUE(std::holds_alternative<TensorStats>(parsed));
  const ModuleCounts expected = {{"layer 0", 16}, {"layer 1", 16}, {"lm head", 8}};
  EXPECT_EQ(std::get<TensorStats>(parsed).modules, expected);
}

// A checkpoint more than 0.01% away from the count names the modules that differ: an extra
// layer (MTP) and a head stored although the config ties it.
TEST(SafetensorsTest, NoteNamesTheModulesThatDiffer) {
  CheckpointSummary s = llama_like();
  s.stats.modules = {{"embedding", 100}, {"lm head", 100}, {"layer 0", 50}, {"layer 1", 30}};
  s.stats.elements = 280;
  const ModuleCounts counted = {{"embedding", 100}, {"layer 0", 50}};
  const std::string note = checkpoint_note(s, 150, &counted);
  EXPECT_NE(note.find("lm head stores 100 vs 0 counted"), std::string::npos) << note;
  EXPECT_NE(note.find("1 layer(s) beyond the 1 counted store 30 (multi-token prediction)"),
            std::string::npos)
      << note;
  EXPECT_EQ(note.find("layer 0 stores"), std::string::npos) << note;
  // The summary keeps its modules through the cache.
  EXPECT_EQ(checkpoint_from_json(checkpoint_to_json(s)).stats.modules, s.stats.modules);
}

}  // namespace
}  // namespace vramplan::hub
