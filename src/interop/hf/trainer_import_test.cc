// HF TrainingArguments (YAML, flag lists, launch commands) and accelerate configs.
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

TEST(TrainerImport, ReadsAnAlignmentHandbookQloraRecipe) {
  Result<Imported> i = import_config(fixture("hf/zephyr_sft_qlora.yaml"));
  ASSERT_TRUE(i.ok()) << i.error().message();
  const json& s = i->settings;
  EXPECT_EQ(i->format, "hf-trainer");
  EXPECT_EQ(s["framework"], "hf-trainer");
  EXPECT_EQ(s["model"], "Mistral-7B-v0.1");
  EXPECT_EQ(s["finetune"], "qlora");
  EXPECT_EQ(s["lora_rank"], 16);
  EXPECT_EQ(s["lora_targets"], "q,k,v,o,gate,up,down");
  EXPECT_EQ(s["seq_len"], 2048);  // TRL's max_length
  EXPECT_EQ(s["micro_batch"], 4);
  EXPECT_EQ(s["grad_accum"], 2);
  EXPECT_EQ(s["recompute"], "full");
  EXPECT_EQ(s["param_dtype"], "bf16");    // torch_dtype: the weights as loaded
  EXPECT_EQ(s["adapter_dtype"], "fp32");  // PEFT's adapters
  EXPECT_EQ(s["optimizer_dtype"], "fp32");
  EXPECT_EQ(s["flash_attention"], true);
  EXPECT_TRUE(warned(*i, "lora_dropout"));
  EXPECT_TRUE(warned(*i, "double quantisation"));
  EXPECT_TRUE(ignored_as(*i, "chat_template", "no effect on memory"));
  EXPECT_TRUE(ignored_as(*i, "dataset_mixture.test_split_size", "no effect on memory"));
}

TEST(TrainerImport, ReadsAFlagList) {
  Result<Imported> i = import_config(fixture("hf/run_clm_args.txt"));
  ASSERT_TRUE(i.ok()) << i.error().message();
  const json& s = i->settings;
  EXPECT_EQ(i->format, "hf-trainer");
  EXPECT_EQ(s["model"], "Llama-3.2-1B");
  EXPECT_EQ(s["micro_batch"], 8);
  EXPECT_EQ(s["grad_accum"], 2);
  EXPECT_EQ(s["seq_len"], 2048);
  EXPECT_EQ(s["optimizer_foreach_temporaries"], false);  // adamw_torch_fused
  EXPECT_EQ(s["param_dtype"], "fp32");                   // --bf16 is autocast over fp32 weights
  EXPECT_EQ(s["activation_dtype"], "bf16");
  EXPECT_TRUE(understood(*i, "--optim", "fused"));
  EXPECT_EQ(peak({{"from", fixture("hf/run_clm_args.txt")}, {"gpus", 4}}),
            peak({{"model", "Llama-3.2-1B"},
                  {"framework", "hf-trainer"},
                  {"gpus", 4},
                  {"micro_batch", 8},
                  {"global_batch", 64},
                  {"seq_len", 2048},
                  {"optimizer_foreach_temporaries", false}}));
}

TEST(TrainerImport, TorchrunLaunchGivesTheWorldAndFsdp) {
  Result<Imported> i = import_config(
      "torchrun --nproc_per_node 8 --nnodes 2 train.py --model_name_or_path Qwen/Qwen2.5-7B "
      "--per_device_train_batch_size 1 --gradient_accumulation_steps 8 --bf16 "
      "--fsdp \"hybrid_shard auto_wrap\" --fsdp_config '{\"activation_checkpointing\": true}' "
      "--output_dir out");
  ASSERT_TRUE(i.ok()) << i.error().message();
  const json& s = i->settings;
  EXPECT_EQ(i->format, "hf-trainer");
  EXPECT_EQ(s["gpus"], 16);
  EXPECT_EQ(s["fsdp"], "hybrid_shard");
  EXPECT_EQ(s["fsdp_shard_group"], 8);  // a node
  EXPECT_EQ(s["fsdp_mixed_precision"], true);
  EXPECT_EQ(s["reduce_dtype"], "bf16");
}

TEST(TrainerImport, BadValuesAreErrorsNamingTheFlag) {
  Result<Imported> optim =
      import_config("--per_device_train_batch_size 1 --output_dir o --optim adamw_magic");
  ASSERT_FALSE(optim.ok());
  EXPECT_EQ(optim.error().field, "--optim");
  Result<Imported> both = import_config("--per_device_train_batch_size 1 --bf16 --fp16");
  ASSERT_FALSE(both.ok());
  EXPECT_EQ(both.error().field, "--fp16");
  Result<Imported> batch = import_config("--per_device_train_batch_size zero --output_dir o");
  ASSERT_FALSE(batch.ok());
  EXPECT_EQ(batch.error().field, "--per_device_train_batch_size");
  Result<Imported> fsdp = import_config("--per_device_train_batch_size 1 --fsdp shard_everything");
  ASSERT_FALSE(fsdp.ok());
  EXPECT_EQ(fsdp.error().field, "--fsdp");
  Result<Imported> four_bit = import_config("--per_device_train_batch_size 1 --load_in_4bit");
  ASSERT_FALSE(four_bit.ok());
  EXPECT_EQ(four_bit.error().field, "--load_in_4bit");
}

TEST(AccelerateImport, ReadsTheFsdpTemplate) {
  Result<Imported> i = import_config(fixture("accelerate/fsdp.yaml"));
  ASSERT_TRUE(i.ok()) << i.error().message();
  const json& s = i->settings;
  EXPECT_EQ(i->format, "accelerate");
  EXPECT_EQ(s["framework"], "hf-trainer");
  EXPECT_EQ(s["gpus"], 2);
  EXPECT_EQ(s["fsdp"], "full_shard");
  EXPECT_EQ(s["activation_dtype"], "bf16");
  EXPECT_EQ(s["fsdp_mixed_precision"], true);
  EXPECT_EQ(s["reduce_dtype"], "bf16");  // accelerate's policy reduces in the mixed dtype
  EXPECT_TRUE(understood(*i, "fsdp_config.fsdp_activation_checkpointing", "no activation"));
  EXPECT_TRUE(ignored_as(*i, "fsdp_config.fsdp_state_dict_type", "no effect on memory"));
}

TEST(AccelerateImport, ReadsALaunchScriptWithItsConfig) {
  Result<Imported> i = import_config(fixture("accelerate/sft_fsdp_launch.sh"));
  ASSERT_TRUE(i.ok()) << i.error().message();
  const json& s = i->settings;
  EXPECT_EQ(i->format, "accelerate");
  EXPECT_EQ(s["gpus"], 8);
  EXPECT_EQ(s["recompute"], "full");  // fsdp_activation_checkpointing
  EXPECT_EQ(s["model"], "Llama-3.1-8B");
  EXPECT_EQ(s["micro_batch"], 2);
  EXPECT_EQ(s["grad_accum"], 4);
  EXPECT_EQ(s["seq_len"], 4096);
  EXPECT_TRUE(i->warnings.empty()) << i->warnings.front();
  EXPECT_TRUE(understood(*i, "mixed_precision", "bf16"));
}

TEST(AccelerateImport, DeepspeedTypeAndLaunchFlags) {
  Result<Imported> ds = import_config(fixture("accelerate/deepspeed_zero3.yaml"));
  ASSERT_TRUE(ds.ok()) << ds.error().message();
  EXPECT_EQ(ds->settings["framework"], "deepspeed");
  EXPECT_EQ(ds->settings["zero"], 3);
  EXPECT_EQ(ds->settings["param_dtype"], "bf16");
  EXPECT_EQ(ds->settings["offload_params"], "cpu");
  EXPECT_EQ(ds->settings["offload_optimizer"], "cpu");
  // accelerate launch's flags over the config file, shown as written.
  Result<Imported> flags = import_config(
      "accelerate launch --num_processes 4 --use_fsdp --fsdp_sharding_strategy SHARD_GRAD_OP "
      "--mixed_precision bf16 train.py --model_name_or_path Qwen/Qwen3-8B "
      "--per_device_train_batch_size 1 --output_dir out");
  ASSERT_TRUE(flags.ok()) << flags.error().message();
  EXPECT_EQ(flags->format, "accelerate");
  EXPECT_EQ(flags->settings["fsdp"], "shard_grad_op");
  EXPECT_EQ(flags->settings["gpus"], 4);
  EXPECT_TRUE(understood(*flags, "--fsdp_sharding_strategy", "fsdp = shard_grad_op"));
}

TEST(AccelerateImport, ErrorsNameTheKey) {
  Result<Imported> strategy = import_config(
      "distributed_type: FSDP\nnum_processes: 8\nfsdp_config:\n  fsdp_sharding_strategy: HALF\n");
  ASSERT_FALSE(strategy.ok());
  EXPECT_EQ(strategy.error().field, "fsdp_config.fsdp_sharding_strategy");
  Result<Imported> type = import_config("distributed_type: SOMETIMES\nnum_processes: 8\n");
  ASSERT_FALSE(type.ok());
  EXPECT_EQ(type.error().field, "distributed_type");
  // The Trainer's --fp16 against accelerate's bf16: the run's precision set twice.
  Result<Imported> twice = import_config(
      "cat > a.yaml <<EOF\ndistributed_type: MULTI_GPU\nmixed_precision: bf16\nnum_processes: "
      "2\nEOF\naccelerate launch --config_file a.yaml train.py --fp16 "
      "--per_device_train_batch_size 1 --output_dir o\n");
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.error().field, "mixed_precision");
}

TEST(AccelerateImport, AKeyWithADotIsListedNotRead) {
  // Found by fuzzing: an FSDP key whose name holds a dot has no dotted path to look it up by.
  Result<Imported> i = import_config(
      "distributed_type: FSDP\nnum_processes: 2\nfsdp_config:\n  fsdp_sharding_strategy: "
      "FULL_SHARD\n  fsdp_from_multi_gpu.yaml: 1\n");
  ASSERT_TRUE(i.ok()) << i.error().message();
  EXPECT_EQ(i->settings["fsdp"], "full_shard");
  bool listed = false;
  for (const auto& row : i->ignored) listed |= row.key.find("multi_gpu.yaml") != std::string::npos;
  EXPECT_TRUE(listed);
}

TEST(AccelerateImport, BytesThatAreNotUtf8AreReplaced) {
  // Found by fuzzing (Megatron YAML, recipes): a string that is not UTF-8 reached a JSON dump.
  Result<Imported> i = import_config(
      "distributed_type: FSDP\nnum_processes: 2\n# caf\xE9\nfsdp_config:\n  "
      "fsdp_sharding_strategy: "
      "FULL_SHARD\n  fsdp_note: \"\xFF\xFE\"\n");
  ASSERT_TRUE(i.ok()) << i.error().message();
  EXPECT_EQ(i->settings["fsdp"], "full_shard");
  EXPECT_NO_THROW((void)imported_to_json(*i).dump());
}

}  // namespace
}  // namespace vramplan
