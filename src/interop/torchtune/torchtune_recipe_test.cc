#include "interop/torchtune/torchtune_recipe.h"

#include <gtest/gtest.h>

#include "interop/hf/test_imports.h"

namespace vramplan {
namespace {

using nlohmann::json;
using test_imports::fixture;
using test_imports::ignored_as;
using test_imports::peak;
using test_imports::understood;
using test_imports::warned;

TEST(TorchtuneImport, ReadsThe8BLoraSingleDeviceRecipe) {
  Result<Imported> i = import_config(fixture("torchtune/8B_lora_single_device.yaml"));
  ASSERT_TRUE(i.ok()) << i.error().message();
  const json& s = i->settings;
  EXPECT_EQ(i->format, "torchtune");
  EXPECT_FALSE(s.contains("framework"));  // torchtune's conventions, key by key
  EXPECT_EQ(s["model"], "Llama-3.1-8B");
  EXPECT_EQ(s["finetune"], "lora");
  EXPECT_EQ(s["lora_rank"], 8);
  EXPECT_EQ(s["lora_targets"], "q,v,o,gate,up,down");  // q_proj, v_proj, output_proj + MLP
  EXPECT_EQ(s["micro_batch"], 2);
  EXPECT_EQ(s["grad_accum"], 8);
  EXPECT_EQ(s["gpus"], 1);  // "tune run lora_finetune_single_device" in its header
  EXPECT_EQ(s["fsdp"], "none");
  EXPECT_EQ(s["recompute"], "full");
  EXPECT_EQ(s["param_dtype"], "bf16");
  EXPECT_EQ(s["optimizer_dtype"], "bf16");  // torchtune trains everything in dtype
  EXPECT_EQ(s["master_weights"], false);
  EXPECT_EQ(s["adapter_dtype"], "bf16");
  EXPECT_EQ(s["optimizer_foreach_temporaries"], false);  // fused: True
  EXPECT_EQ(s["loss_bytes_per_logit"], 4);               // LinearCrossEntropyLoss
  EXPECT_EQ(s["loss_chunks"], 8);                        // its num_output_chunks default
  EXPECT_EQ(s["model_code"], "torchtune");               // torchtune's modules
  // max_seq_len: null: the sequence length is the data's: said, with a warning.
  EXPECT_TRUE(ignored_as(*i, "tokenizer.max_seq_len", "no truncation"));
  EXPECT_TRUE(warned(*i, "tokenizer.max_seq_len"));
  EXPECT_TRUE(ignored_as(*i, "checkpointer.checkpoint_dir", "no effect on memory"));
  EXPECT_EQ(s["offload_activations"], false);  // enable_activation_offloading: False
}

TEST(TorchtuneImport, QloraAndDistributedRecipes) {
  Result<Imported> q = import_config(fixture("torchtune/8B_qlora_single_device.yaml"));
  ASSERT_TRUE(q.ok()) << q.error().message();
  EXPECT_EQ(q->settings["finetune"], "qlora");
  Result<Imported> full = import_config(fixture("torchtune/8B_full.yaml"));
  ASSERT_TRUE(full.ok()) << full.error().message();
  EXPECT_FALSE(full->settings.contains("finetune"));
  EXPECT_EQ(full->settings["gpus"], 4);  // "tune run --nproc_per_node 4 full_finetune_distributed"
  EXPECT_EQ(full->settings["fsdp"], "full_shard");
  EXPECT_TRUE(understood(*full, "optimizer_in_bwd", "off"));
  // The recipe's estimate equals vramplan's own settings mapped by hand.
  EXPECT_EQ(peak({{"from", fixture("torchtune/8B_full.yaml")}, {"seq_len", 2048}}),
            peak({{"model", "Llama-3.1-8B"},
                  {"gpus", 4},
                  {"fsdp", "full_shard"},
                  {"micro_batch", 2},
                  {"seq_len", 2048},
                  {"recompute", "full"},
                  {"param_dtype", "bf16"},
                  {"grad_dtype", "bf16"},
                  {"optimizer_dtype", "bf16"},
                  {"master_weights", false},
                  {"fp32_grad_accum", false},
                  {"model_code", "torchtune"},
                  {"loss_bytes_per_logit", 4},
                  {"loss_chunks", 8},
                  {"lazy_gradients", true},
                  {"allocator_overhead", 0.2},
                  {"optimizer_foreach_temporaries", false}}));
}

TEST(TorchtuneImport, ATuneRunScriptWithOverrides) {
  Result<Imported> i = import_config(
      "cat > r.yaml <<'EOF'\n" + fixture("torchtune/8B_lora_single_device.yaml") +
      "EOF\ntune run --nnodes 1 --nproc_per_node 2 lora_finetune_distributed --config r.yaml "
      "batch_size=4 tokenizer.max_seq_len=2048\n");
  ASSERT_TRUE(i.ok()) << i.error().message();
  EXPECT_EQ(i->settings["gpus"], 2);
  EXPECT_EQ(i->settings["fsdp"], "full_shard");
  EXPECT_EQ(i->settings["micro_batch"], 4);
  EXPECT_EQ(i->settings["seq_len"], 2048);
  EXPECT_TRUE(understood(*i, "batch_size=", "micro_batch = 4"));
}

TEST(TorchtuneImport, ErrorsNameTheKey) {
  Result<Imported> fp16 =
      import_config("model:\n  _component_: torchtune.models.llama3_2.llama3_2_1b\ndtype: fp16\n");
  ASSERT_FALSE(fp16.ok());
  EXPECT_EQ(fp16.error().field, "dtype");
  Result<Imported> no_modules = import_config(
      "model:\n  _component_: torchtune.models.llama3_2.lora_llama3_2_1b\n  lora_rank: 8\n");
  ASSERT_FALSE(no_modules.ok());
  EXPECT_EQ(no_modules.error().field, "model.lora_attn_modules");
  Result<Imported> module = import_config(
      "model:\n  _component_: torchtune.models.llama3_2.lora_llama3_2_1b\n"
      "  lora_attn_modules: [q_proj, qkv]\n");
  ASSERT_FALSE(module.ok());
  EXPECT_EQ(module.error().field, "model.lora_attn_modules");
  Result<Imported> optimizer = import_config(
      "model:\n  _component_: torchtune.models.llama3_2.llama3_2_1b\n"
      "optimizer:\n  _component_: mylib.Magic\n");
  ASSERT_FALSE(optimizer.ok());
  EXPECT_EQ(optimizer.error().field, "optimizer._component_");
  Result<Imported> batch = import_config(
      "model:\n  _component_: torchtune.models.llama3_2.llama3_2_1b\nbatch_size: 0\n");
  ASSERT_FALSE(batch.ok());
  EXPECT_EQ(batch.error().field, "batch_size");
}

TEST(TorchtuneImport, IsNeitherMegatronNorAxolotl) {
  const ImportFormat* f = detect_import_format(fixture("torchtune/8B_full.yaml"));
  ASSERT_NE(f, nullptr);
  EXPECT_STREQ(f->name, "torchtune");
  const ImportFormat* m = detect_import_format(fixture("megatron/moe_functional_test.yaml"));
  ASSERT_NE(m, nullptr);
  EXPECT_STREQ(m->name, "megatron-yaml");
  const ImportFormat* a = detect_import_format(fixture("axolotl/qlora.yml"));
  ASSERT_NE(a, nullptr);
  EXPECT_STREQ(a->name, "axolotl");
}

TEST(TorchtuneImport, TheLossSaysHowManyChunks) {
  auto settings = [](const std::string& loss) {
    std::string doc = fixture("torchtune/8B_full.yaml");
    const std::string from =
        "loss:\n  _component_: torchtune.modules.loss.LinearCrossEntropyLoss\n";
    const size_t at = doc.find(from);
    EXPECT_NE(at, std::string::npos);
    doc.replace(at, from.size(), loss);
    Result<Imported> i = import_config(doc);
    EXPECT_TRUE(i.ok()) << (i.ok() ? "" : i.error().message());
    return i.ok() ? i->settings : json();
  };
  const json chunked = settings(
      "loss:\n  _component_: torchtune.modules.loss.CEWithChunkedOutputLoss\n"
      "  num_output_chunks: 16\n");
  EXPECT_EQ(chunked["loss_bytes_per_logit"], 6);
  EXPECT_EQ(chunked["loss_chunks"], 16);
  const json plain = settings("loss:\n  _component_: torch.nn.CrossEntropyLoss\n");
  EXPECT_EQ(plain["loss_bytes_per_logit"], 10);
  EXPECT_EQ(plain["loss_chunks"], 0);  // over model_code torchtune's 8
}

}  // namespace
}  // namespace vramplan
