#include "interop/axolotl/axolotl_config.h"

#include <gtest/gtest.h>

#include "interop/hf/test_imports.h"

namespace vramplan {
namespace {

using nlohmann::json;
using test_imports::fixture;
using test_imports::ignored_as;
using test_imports::understood;
using test_imports::warned;

TEST(AxolotlImport, ReadsTheLlama3LoraExample) {
  Result<Imported> i = import_config(fixture("axolotl/lora-8b.yml"));
  ASSERT_TRUE(i.ok()) << i.error().message();
  const json& s = i->settings;
  EXPECT_EQ(i->format, "axolotl");
  EXPECT_EQ(s["framework"], "hf-trainer");
  EXPECT_EQ(s["model"], "NousResearch/Meta-Llama-3-8B");  // no preset: the Hub client reads it
  EXPECT_EQ(s["finetune"], "lora");
  EXPECT_EQ(s["lora_rank"], 32);
  EXPECT_EQ(s["lora_targets"], "all-linear");
  EXPECT_EQ(s["seq_len"], 4096);
  EXPECT_EQ(s["micro_batch"], 2);
  EXPECT_EQ(s["grad_accum"], 4);
  EXPECT_EQ(s["recompute"], "full");
  EXPECT_EQ(s["optimizer"], "adam8bit");
  EXPECT_EQ(s["param_dtype"], "bf16");  // bf16: auto; axolotl loads the weights in it
  EXPECT_EQ(s["adapter_dtype"], "fp32");
  // An 8-bit base, dropout and trained copies of the embedding and head: all said.
  EXPECT_TRUE(ignored_as(*i, "load_in_8bit", "not modelled"));
  EXPECT_TRUE(ignored_as(*i, "lora_modules_to_save", "not modelled"));
  EXPECT_TRUE(warned(*i, "lora_dropout"));
  EXPECT_TRUE(ignored_as(*i, "wandb_project", "not set"));
  EXPECT_TRUE(ignored_as(*i, "datasets", "no effect on memory"));
}

TEST(AxolotlImport, ReadsTheQloraExample) {
  Result<Imported> i = import_config(fixture("axolotl/qlora.yml"));
  ASSERT_TRUE(i.ok()) << i.error().message();
  EXPECT_EQ(i->settings["finetune"], "qlora");
  EXPECT_EQ(i->settings["optimizer"], "adamw");  // paged_adamw_32bit
  EXPECT_TRUE(understood(*i, "load_in_4bit", "NF4"));
  // The model given beside replaces the Hub id; the estimate runs offline.
  Result<SettingsEstimate> e = estimate_settings(
      {{"from", fixture("axolotl/qlora.yml")}, {"model", "Llama-3.1-8B"}}, nullptr);
  ASSERT_TRUE(e.ok()) << e.error().message();
  EXPECT_EQ(e->resolved.scenario.finetune.method, FinetuneMethod::kQlora);
}

TEST(AxolotlImport, ActivationOffloading) {
  Result<Imported> i = import_config(
      "base_model: meta-llama/Llama-3.1-8B\nmicro_batch_size: 1\nbf16: true\n"
      "gradient_checkpointing: offload\n");
  ASSERT_TRUE(i.ok()) << i.error().message();
  EXPECT_EQ(i->settings["recompute"], "full");
  EXPECT_EQ(i->settings["offload_activations"], true);
  Result<Imported> a = import_config(
      "base_model: meta-llama/Llama-3.1-8B\nmicro_batch_size: 1\nbf16: true\n"
      "activation_offloading: true\n");
  ASSERT_TRUE(a.ok()) << a.error().message();
  EXPECT_EQ(a->settings["offload_activations"], true);
}

TEST(AxolotlImport, DeepspeedAndFsdp) {
  Result<Imported> ds = import_config(
      "base_model: meta-llama/Llama-3.1-8B\nmicro_batch_size: 1\nbf16: true\n"
      "deepspeed: deepspeed_configs/zero3_bf16.json\n");
  ASSERT_TRUE(ds.ok()) << ds.error().message();
  EXPECT_EQ(ds->settings["framework"], "deepspeed");
  EXPECT_EQ(ds->settings["zero"], 3);  // by the bundled config's name
  EXPECT_EQ(ds->settings["master_weights"], true);
  EXPECT_TRUE(warned(*ds, "deepspeed"));
  Result<Imported> fsdp = import_config(
      "base_model: meta-llama/Llama-3.1-8B\nmicro_batch_size: 1\nbf16: true\n"
      "fsdp_config:\n  fsdp_reshard_after_forward: false\n  fsdp_version: 2\n");
  ASSERT_TRUE(fsdp.ok()) << fsdp.error().message();
  EXPECT_EQ(fsdp->settings["fsdp"], "shard_grad_op");
  EXPECT_TRUE(understood(*fsdp, "fsdp_config.fsdp_version", "FSDP2"));
  // full_shard in fsdp and no resharding after the forward: the second contradicts the first.
  Result<Imported> both = import_config(
      "base_model: meta-llama/Llama-3.1-8B\nmicro_batch_size: 1\n"
      "fsdp: [full_shard, auto_wrap]\nfsdp_config:\n  fsdp_reshard_after_forward: false\n");
  ASSERT_FALSE(both.ok());
  EXPECT_EQ(both.error().field, "fsdp_config.fsdp_reshard_after_forward");
}

TEST(AxolotlImport, ErrorsNameTheKey) {
  Result<Imported> qlora =
      import_config("base_model: meta-llama/Llama-3.1-8B\nadapter: qlora\nmicro_batch_size: 1\n");
  ASSERT_FALSE(qlora.ok());
  EXPECT_EQ(qlora.error().field, "adapter");
  Result<Imported> adapter =
      import_config("base_model: meta-llama/Llama-3.1-8B\nadapter: dora\nmicro_batch_size: 1\n");
  ASSERT_FALSE(adapter.ok());
  EXPECT_EQ(adapter.error().field, "adapter");
  Result<Imported> batch =
      import_config("base_model: meta-llama/Llama-3.1-8B\nmicro_batch_size: 4\nbatch_size: 6\n");
  ASSERT_FALSE(batch.ok());
  EXPECT_EQ(batch.error().field, "batch_size");
  Result<Imported> bf16 =
      import_config("base_model: meta-llama/Llama-3.1-8B\nmicro_batch_size: 1\nbf16: maybe\n");
  ASSERT_FALSE(bf16.ok());
  EXPECT_EQ(bf16.error().field, "bf16");
}

}  // namespace
}  // namespace vramplan
