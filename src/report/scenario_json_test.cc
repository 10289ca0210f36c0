#include "report/scenario_json.h"

#include <gtest/gtest.h>

#include "vramplan/io/scenario_io.h"
#include "vramplan/model/params.h"

namespace vramplan {
namespace {

using nlohmann::json;

Scenario resolved(const json& settings) {
  Result<ResolvedScenario> r = resolve_scenario(settings, nullptr);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message());
  return r.ok() ? r->scenario : Scenario{};
}

// The issue: "the resolved scenario in the JSON does not echo fine-tuning settings".
TEST(ScenarioJson, EchoesLoraSettingsAndTheAdapterCount) {
  const Scenario s = resolved({{"model", "Llama-2-7b"},
                               {"finetune", "lora"},
                               {"lora_rank", 8},
                               {"lora_targets", "q,v"},
                               {"adapter_dtype", "fp32"}});
  const ParamCounts counts = count_parameters(s.model);
  const json f = report_json::scenario_json(s, &counts)["finetune"];
  EXPECT_EQ(f["method"], "lora");
  EXPECT_EQ(f["lora_rank"], 8);
  EXPECT_EQ(f["lora_targets"], "q,v");
  EXPECT_EQ(f["adapter_dtype"], "fp32");
  EXPECT_EQ(f["base_weights"], "bf16");
  // PEFT's r = 8 on q,v of Llama-2-7B (finetune.h).
  EXPECT_EQ(f["trainable_parameters"], 4194304);
}

TEST(ScenarioJson, EchoesQloraBaseAndFrozenLayers) {
  const Scenario q = resolved({{"model", "Llama-2-7b"}, {"finetune", "qlora"}});
  EXPECT_EQ(report_json::scenario_json(q)["finetune"]["base_weights"], "nf4");
  EXPECT_FALSE(report_json::scenario_json(q)["finetune"].contains("trainable_parameters"));

  const Scenario full = resolved({{"model", "Llama-2-7b"}, {"freeze_first_layers", 2}});
  const ParamCounts counts = count_parameters(full.model);
  const json f = report_json::scenario_json(full, &counts)["finetune"];
  EXPECT_EQ(f["method"], "none");
  EXPECT_TRUE(f["lora_rank"].is_null());
  EXPECT_EQ(f["freeze_first_layers"], 2);
  EXPECT_EQ(f["trainable_parameters"],
            counts.total - counts.layers[0].total() - counts.layers[1].total());
}

}  // namespace
}  // namespace vramplan
