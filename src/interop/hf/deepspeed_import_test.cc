// DeepSpeed configs alone, with TrainingArguments beside them, and in launch scripts.
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

TEST(DeepspeedImport, ReadsALaunchScriptWithItsConfigAndTrainerArguments) {
  Result<Imported> i = import_config(fixture("deepspeed/run_clm_zero3.sh"));
  ASSERT_TRUE(i.ok()) << i.error().message();
  const json& s = i->settings;
  EXPECT_EQ(i->format, "deepspeed");
  EXPECT_EQ(s["framework"], "deepspeed");
  EXPECT_EQ(s["gpus"], 8);  // deepspeed --num_gpus=$NUM_GPUS
  EXPECT_EQ(s["zero"], 3);
  EXPECT_EQ(s["micro_batch"], 2);  // --per_device_train_batch_size $MICRO_BATCH ("auto")
  EXPECT_EQ(s["grad_accum"], 4);
  EXPECT_EQ(s["seq_len"], 4096);  // run_clm's --block_size
  EXPECT_EQ(s["recompute"], "full");
  EXPECT_EQ(s["model"], "Llama-3.1-8B");
  EXPECT_EQ(s["comm_bucket_elements"], 4096 * 4096);  // "auto": hidden_size²
  EXPECT_EQ(s["zero3_live_params"], 1000000000);
  EXPECT_EQ(s["param_dtype"], "bf16");  // bf16.enabled "auto" from --bf16
  EXPECT_EQ(s["master_weights"], true);
  EXPECT_EQ(s["optimizer"], "adamw");
  EXPECT_EQ(s["optimizer_foreach_temporaries"], false);  // DeepSpeed's FusedAdam
  EXPECT_TRUE(i->warnings.empty()) << i->warnings.front();
  EXPECT_TRUE(understood(*i, "--bf16", "bf16"));
  EXPECT_TRUE(ignored_as(*i, "--learning_rate", "no effect on memory"));
  EXPECT_TRUE(ignored_as(*i, "optimizer.params.lr", "no effect on memory"));
  // The estimate equals the one from vramplan's own settings, mapped by hand.
  EXPECT_EQ(peak({{"from", fixture("deepspeed/run_clm_zero3.sh")}}),
            peak({{"model", "Llama-3.1-8B"},
                  {"framework", "deepspeed"},
                  {"zero", 3},
                  {"gpus", 8},
                  {"micro_batch", 2},
                  {"global_batch", 64},
                  {"seq_len", 4096},
                  {"recompute", "full"},
                  {"comm_bucket_elements", 16777216}}));
}

TEST(DeepspeedImport, AConfigAloneTakesTheModelAndWorldGivenBeside) {
  const json beside = {{"model", "Llama-3.1-8B"}};
  Result<Imported> i = import_config(fixture("deepspeed/ds_config_zero3.json"), "", beside);
  ASSERT_TRUE(i.ok()) << i.error().message();
  EXPECT_EQ(i->format, "deepspeed");
  EXPECT_EQ(i->settings["zero"], 3);
  EXPECT_EQ(i->settings["comm_bucket_elements"], 16777216);  // hidden_size² of the model beside
  // Offload devices become the offload settings (docs/offload.md); pinning is DeepSpeed's default.
  EXPECT_EQ(i->settings["offload_optimizer"], "cpu");
  EXPECT_EQ(i->settings["offload_params"], "cpu");
  EXPECT_FALSE(warned(*i, "offload"));
  // "auto" without TrainingArguments is left to vramplan's settings, and said.
  EXPECT_TRUE(ignored_as(*i, "bf16.enabled", "no TrainingArguments"));
  EXPECT_TRUE(ignored_as(*i, "train_micro_batch_size_per_gpu", "not given"));
  EXPECT_TRUE(ignored_as(*i, "zero_optimization.overlap_comm", "not modelled"));
  EXPECT_FALSE(i->settings.contains("param_dtype"));
  // Without a preset model, "auto" buckets are a warning naming the setting to give.
  Result<Imported> alone = import_config(fixture("deepspeed/ds_config_zero3.json"));
  ASSERT_TRUE(alone.ok());
  EXPECT_TRUE(warned(*alone, "--comm-bucket-elements"));
}

TEST(DeepspeedImport, OffloadDevicesAndRatio) {
  const json beside = {{"model", "Llama-3.1-8B"}};
  Result<Imported> i = import_config(
      R"({"zero_optimization": {"stage": 3, "offload_optimizer": {"device": "nvme",
          "nvme_path": "/nvme"}, "offload_param": {"device": "nvme", "nvme_path": "/nvme"}}})",
      "", beside);
  ASSERT_TRUE(i.ok()) << i.error().message();
  EXPECT_EQ(i->settings["offload_optimizer"], "nvme");
  EXPECT_EQ(i->settings["offload_params"], "nvme");
  Result<Imported> ratio = import_config(
      R"({"zero_optimization": {"stage": 3, "offload_optimizer": {"device": "cpu", "ratio": 0.3}}})",
      "", beside);
  ASSERT_TRUE(ratio.ok()) << ratio.error().message();
  EXPECT_EQ(ratio->settings["optimizer_offload_fraction"], 0.3);
  Result<Imported> old =
      import_config(R"({"zero_optimization": {"stage": 2, "cpu_offload": true}})", "", beside);
  ASSERT_TRUE(old.ok()) << old.error().message();
  EXPECT_EQ(old->settings["offload_optimizer"], "cpu");
}

TEST(DeepspeedImport, TrainBatchSizeMustBeMicroTimesAccumulationTimesGpus) {
  const std::string config = fixture("deepspeed/ds_config_zero2.json");  // 64 = 2 × 4 × 8
  Result<Imported> derived = import_config(config);
  ASSERT_TRUE(derived.ok()) << derived.error().message();
  EXPECT_EQ(derived->settings["gpus"], 8);  // DeepSpeed derives the world size
  EXPECT_EQ(derived->settings["comm_bucket_elements"], 200000000);
  EXPECT_EQ(derived->settings["param_dtype"], "bf16");
  Result<Imported> agreed = import_config(config, "", {{"gpus", 8}});
  EXPECT_TRUE(agreed.ok());
  Result<Imported> wrong = import_config(config, "", {{"gpus", 16}});
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.error().field, "train_batch_size");
  EXPECT_EQ(wrong.error().value, "64");
  EXPECT_NE(wrong.error().accepted.find("128"), std::string::npos) << wrong.error().accepted;
}

TEST(DeepspeedImport, ContradictionsWithTheTrainerNameTheKey) {
  const std::string script =
      "cat > ds.json <<'EOF'\n"
      "{\"fp16\": {\"enabled\": true}, \"zero_optimization\": {\"stage\": 2},\n"
      " \"train_micro_batch_size_per_gpu\": 2}\n"
      "EOF\n"
      "deepspeed --num_gpus 4 train.py --deepspeed ds.json --model_name_or_path gpt2 "
      "--per_device_train_batch_size 2 --output_dir out --bf16\n";
  Result<Imported> precision = import_config(script);
  ASSERT_FALSE(precision.ok());
  EXPECT_EQ(precision.error().field, "fp16.enabled");
  std::string batch = script;
  batch.replace(batch.find("--bf16"), 6, "--fp16");
  batch.replace(batch.find("--per_device_train_batch_size 2"), 31,
                "--per_device_train_batch_size 4");
  Result<Imported> micro = import_config(batch);
  ASSERT_FALSE(micro.ok());
  EXPECT_EQ(micro.error().field, "train_micro_batch_size_per_gpu");
}

TEST(DeepspeedImport, BadValuesAreErrorsNamingTheKey) {
  Result<Imported> stage = import_config(R"({"zero_optimization": {"stage": 4}})");
  ASSERT_FALSE(stage.ok());
  EXPECT_EQ(stage.error().field, "zero_optimization.stage");
  EXPECT_EQ(stage.error().accepted, "0, 1, 2 or 3");
  Result<Imported> optimizer =
      import_config(R"({"zero_optimization": {"stage": 1}, "optimizer": {"type": "Nesterov"}})");
  ASSERT_FALSE(optimizer.ok());
  EXPECT_EQ(optimizer.error().field, "optimizer.type");
  Result<Imported> bucket =
      import_config(R"({"zero_optimization": {"stage": 2, "reduce_bucket_size": "big"}})");
  ASSERT_FALSE(bucket.ok());
  EXPECT_EQ(bucket.error().field, "zero_optimization.reduce_bucket_size");
  Result<Imported> both = import_config(
      R"({"train_batch_size": 8, "bf16": {"enabled": true}, "fp16": {"enabled": true}})");
  ASSERT_FALSE(both.ok());
  EXPECT_EQ(both.error().field, "fp16.enabled");
}

TEST(DeepspeedImport, AConfigTheScriptNamesButDoesNotHoldIsAWarning) {
  Result<Imported> i = import_config(
      "deepspeed --num_gpus 8 train.py --deepspeed configs/ds_zero3.json "
      "--model_name_or_path meta-llama/Llama-3.1-8B --per_device_train_batch_size 1 --bf16");
  ASSERT_TRUE(i.ok()) << i.error().message();
  EXPECT_EQ(i->format, "deepspeed");
  EXPECT_TRUE(ignored_as(*i, "--deepspeed", "does not hold"));
  EXPECT_TRUE(warned(*i, "--deepspeed"));
  EXPECT_EQ(i->settings["param_dtype"], "bf16");  // the Trainer's --bf16 reaches DeepSpeed
}

TEST(DeepspeedImport, AConfigGivenBesideTheScriptIsRead) {
  const std::string script =
      "deepspeed --num_gpus 8 train.py --deepspeed configs/ds_zero3.json "
      "--model_name_or_path meta-llama/Llama-3.1-8B --per_device_train_batch_size 1 --bf16";
  // The CLI asks which files the script names, then reads them beside it.
  EXPECT_EQ(files_named(script), std::vector<std::string>{"configs/ds_zero3.json"});
  const NamedFiles files{{"ds_zero3.json", R"({"zero_optimization": {"stage": 3},
                                               "bf16": {"enabled": "auto"}})"}};
  Result<Imported> i = import_config(script, "", nlohmann::json::object(), files);
  ASSERT_TRUE(i.ok()) << i.error().message();
  EXPECT_EQ(i->settings["zero"], 3);
  EXPECT_FALSE(ignored_as(*i, "--deepspeed", "does not hold"));
  EXPECT_FALSE(warned(*i, "--deepspeed"));
  // from_files is an object of texts; anything else names it (or the file) in the error.
  const nlohmann::json request = {{"from", script}, {"from_files", 3}};
  Result<SettingsWithImport> bad = apply_from(request, ImportFor::kEstimate);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().field, "from_files");
  Result<SettingsWithImport> bad_text =
      apply_from({{"from", script}, {"from_files", {{"ds_zero3.json", 1}}}}, ImportFor::kEstimate);
  ASSERT_FALSE(bad_text.ok());
  EXPECT_EQ(bad_text.error().field, "from_files.ds_zero3.json");
  // A here-document in the script wins over a file of the same name beside it.
  EXPECT_EQ(files_named("train.py --deepspeed ds.json --bf16\ncat > ds.json <<EOF\n{}\nEOF\n"),
            std::vector<std::string>{});
}

TEST(DeepspeedImport, FieldNamesWithoutStage3AndZeroDefaults) {
  // axolotl's zero3.json writes DeepSpeedZeroConfig's field names (no stage3_ prefix).
  Result<Imported> i = import_config(
      R"({"zero_optimization": {"stage": 3, "max_live_parameters": 0, "max_reuse_distance": 0},
          "bf16": {"enabled": true}, "train_micro_batch_size_per_gpu": 1})");
  ASSERT_TRUE(i.ok()) << i.error().message();
  EXPECT_EQ(i->settings["zero3_live_params"], 0);
  Result<Imported> none = import_config(R"({"train_micro_batch_size_per_gpu": 1})");
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->settings["zero"], 0);  // DeepSpeed's default, over vramplan's ZeRO-2 preset
}

TEST(DeepspeedImport, IsNotAScenarioFile) {
  EXPECT_EQ(detect_import_format(R"({"model": "Llama-3.1-8B", "seq_len": 4096})"), nullptr);
  const ImportFormat* f = detect_import_format(fixture("deepspeed/ds_config_zero2.json"));
  ASSERT_NE(f, nullptr);
  EXPECT_STREQ(f->name, "deepspeed");
}

}  // namespace
}  // namespace vramplan
