#include "vramplan/io/quick_settings.h"

#include <gtest/gtest.h>

namespace vramplan {
namespace {

using nlohmann::json;

int64_t count(const json& v) {
  Result<int64_t> n = parse_param_count("params", v);
  EXPECT_TRUE(n.ok()) << v.dump() << ": " << (n.ok() ? "" : n.error().message());
  return n.ok() ? *n : -1;
}

TEST(QuickSettings, ParameterCounts) {
  EXPECT_EQ(count("700M"), 700'000'000);
  EXPECT_EQ(count("1.3B"), 1'300'000'000);
  EXPECT_EQ(count("1300M"), 1'300'000'000);
  EXPECT_EQ(count("1.3b"), 1'300'000'000);
  EXPECT_EQ(count("2T"), 2'000'000'000'000);
  EXPECT_EQ(count("700000000"), 700'000'000);
  EXPECT_EQ(count("7e8"), 700'000'000);
  EXPECT_EQ(count(json(700000000)), 700'000'000);
  EXPECT_EQ(count("125k"), 125'000);
  for (const json& bad : {json("abc"), json("-5"), json("0"), json("7X"), json(""), json("M"),
                          json("1e30"), json(true), json(0.5), json("1.5.3B"), json("+inf")}) {
    Result<int64_t> n = parse_param_count("params", bad);
    ASSERT_FALSE(n.ok()) << bad.dump();
    EXPECT_EQ(n.error().field, "params");
    EXPECT_NE(n.error().accepted.find("700M, 1.3B"), std::string::npos);
  }
}

TEST(QuickSettings, ExamplesRunAndSettingsBesideThemWin) {
  for (const QuickExample& e : quick_examples()) {
    Result<QuickAnswer> a = quick_settings(json{{"example", e.name}});
    ASSERT_TRUE(a.ok()) << e.name << ": " << a.error().message();
    EXPECT_EQ(a->example, e.name);
    ASSERT_TRUE(a->calculator_gib.has_value());
    EXPECT_EQ(*a->calculator_gib, e.calculator_gib);
    ASSERT_TRUE(a->full.has_value()) << e.name;
    EXPECT_GT(a->full->total_bytes, 0);
  }
  Result<QuickAnswer> a = quick_settings(json{{"example", "medium-training"}, {"batch", 2}});
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->inputs.batch, 2);
  EXPECT_EQ(a->inputs.seq_len, 2048);
  EXPECT_EQ(a->inputs.grad_dtype, DType::kFp32);
}

TEST(QuickSettings, FullEstimateIsTheMatchingArchitecture) {
  Result<QuickAnswer> a = quick_settings(json{{"example", "medium-training"}});
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->full->command, "estimate");
  EXPECT_EQ(a->full->parameters, 6'738'415'616);  // Llama-2-7B
  // 700M parameters in 32 layers × 4096 is not an architecture: the note says so.
  ASSERT_FALSE(a->notes.empty());
  EXPECT_NE(a->notes[0].find("12·L·h²"), std::string::npos);
  Result<QuickAnswer> serving = quick_settings(json{{"example", "serving"}});
  ASSERT_TRUE(serving.ok());
  EXPECT_EQ(serving->full->command, "infer");
  EXPECT_TRUE(serving->inputs.kv_cache);
  EXPECT_EQ(serving->full->settings["weight_dtype"], "int8");
}

TEST(QuickSettings, DefaultsAndModes) {
  Result<QuickAnswer> a = quick_settings(
      json{{"params", "1.3B"}, {"layers", 24}, {"hidden", 2048}, {"mode", "inference"}});
  ASSERT_TRUE(a.ok()) << a.error().message();
  EXPECT_EQ(a->inputs.params, 1'300'000'000);
  EXPECT_TRUE(a->inputs.kv_cache);
  EXPECT_EQ(a->inputs.kv_dtype, DType::kBf16);
  Result<QuickAnswer> t = quick_settings(
      json{{"params", "1.3B"}, {"layers", 24}, {"hidden", 2048}, {"activation_dtype", "fp32"}});
  ASSERT_TRUE(t.ok());
  EXPECT_FALSE(t->inputs.kv_cache);
  EXPECT_EQ(t->inputs.kv_dtype, DType::kFp32);  // follows the activations unless given
}

TEST(QuickSettings, QuantisedTrainingWeightsHaveNoFullEstimate) {
  Result<QuickAnswer> a = quick_settings(
      json{{"params", "700M"}, {"layers", 32}, {"hidden", 4096}, {"weight_dtype", "int4"}});
  ASSERT_TRUE(a.ok());
  EXPECT_FALSE(a->full.has_value());
  ASSERT_FALSE(a->notes.empty());
  EXPECT_NE(a->notes[0].find("weight_dtype"), std::string::npos);
}

TEST(QuickSettings, ErrorsNameTheSettingAsWritten) {
  struct Case {
    json settings;
    const char* field;
  };
  const json base = {{"params", "700M"}, {"layers", 32}, {"hidden", 4096}};
  auto with = [&](const char* key, json value) {
    json s = base;
    s[key] = std::move(value);
    return s;
  };
  const Case cases[] = {
      {json{{"layers", 32}, {"hidden", 4096}}, "params"},
      {with("params", "lots"), "params"},
      {with("layers", "x"), "layers"},
      {with("mode", "serving"), "mode"},
      {with("weight_dtype", "int3"), "weight_dtype"},
      {with("grad_dtype", "int8"), "grad_dtype"},
      {with("optimizer", "adagrad"), "optimizer"},
      {with("checkpoint_factor", 2), "checkpoint_factor"},
      {with("activation_multiplier", 0), "activation_multiplier"},
      {with("overhead_gib", -1), "overhead_gib"},
      {with("example", "huge"), "example"},
      {with("tp", 2), "tp"},
  };
  for (const Case& c : cases) {
    Result<QuickAnswer> a = quick_settings(c.settings);
    ASSERT_FALSE(a.ok()) << c.settings.dump();
    EXPECT_EQ(a.error().field, c.field) << c.settings.dump() << ": " << a.error().message();
    EXPECT_FALSE(a.error().accepted.empty()) << c.field;
  }
}

}  // namespace
}  // namespace vramplan
