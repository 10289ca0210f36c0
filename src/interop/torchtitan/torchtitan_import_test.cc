#include "interop/torchtitan/torchtitan_import.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "vramplan/interop/import.h"
#include "vramplan/io/estimate_request.h"

namespace vramplan {
namespace {

using nlohmann::json;

std::string fixture(const std::string& name) {
  std::ifstream in(std::string(VRAMPLAN_SOURCE_DIR) + "/tests/fixtures/imports/torchtitan/" + name);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

bool has_key(const std::vector<UnderstoodKey>& keys, const std::string& key,
             const std::string& setting) {
  return std::any_of(keys.begin(), keys.end(), [&](const UnderstoodKey& k) {
    return k.key == key && k.setting.find(setting) != std::string::npos;
  });
}

bool ignored_as(const Imported& i, const std::string& key, const std::string& reason) {
  return std::any_of(i.ignored.begin(), i.ignored.end(), [&](const IgnoredKey& k) {
    return k.key == key && k.reason.find(reason) != std::string::npos;
  });
}

bool warns(const Imported& i, const std::string& text) {
  return std::any_of(i.warnings.begin(), i.warnings.end(),
                     [&](const std::string& w) { return w.find(text) != std::string::npos; });
}

Imported imported(const std::string& text) {
  Result<Imported> r = import_config(text, "torchtitan");
  EXPECT_TRUE(r.ok()) << (r ? "" : r.error().message());
  return r ? *r : Imported{};
}

Error import_error(const std::string& text, const std::string& format = "torchtitan") {
  Result<Imported> r = import_config(text, format);
  EXPECT_FALSE(r.ok());
  return r ? Error{} : r.error();
}

int64_t peak(const json& settings) {
  Result<SettingsEstimate> e = estimate_settings(settings, nullptr);
  EXPECT_TRUE(e.ok()) << (e ? "" : e.error().message());
  return e ? e->estimate.peak.reserved_bytes : -1;
}

TEST(TorchtitanImport, ReadsThePublished8BConfig) {
  const Imported i = imported(fixture("llama3_8b.toml"));
  EXPECT_EQ(i.format, "torchtitan");
  const json& s = i.settings;
  EXPECT_EQ(s["model"], "Llama-3.1-8B");
  EXPECT_EQ(s["framework"], "torchtitan");
  EXPECT_EQ(s["gpus"], 8);  // NGPU=8 run_train.sh, in a comment
  EXPECT_EQ(s["fsdp"], "full_shard");
  EXPECT_EQ(s["micro_batch"], 2);
  EXPECT_EQ(s["global_batch"], 16);
  EXPECT_EQ(s["seq_len"], 8192);
  EXPECT_EQ(s["recompute"], "selective-op");
  EXPECT_TRUE(i.warnings.empty());
  EXPECT_TRUE(has_key(i.understood, "activation_checkpoint.selective_ac_option", "selective-op"));
  EXPECT_TRUE(ignored_as(i, "optimizer.lr", "no effect on memory"));
  EXPECT_TRUE(ignored_as(i, "quantize.linear.float8.filter_fqns", "not in model.converters"));
  // The same estimate as the settings written by hand (torchtitan's Table 1 run, 80.5 GiB).
  EXPECT_EQ(peak({{"from", fixture("llama3_8b.toml")}}), peak({{"model", "Llama-3.1-8B"},
                                                               {"framework", "torchtitan"},
                                                               {"gpus", 8},
                                                               {"micro_batch", 2},
                                                               {"seq_len", 8192},
                                                               {"recompute", "selective-op"}}));
}

TEST(TorchtitanImport, ReadsTheSpellingOf2024) {
  const Imported i = imported(fixture("llama3_405b_2024.toml"));
  const json& s = i.settings;
  EXPECT_EQ(s["model"], "Llama-3.1-405B");
  EXPECT_EQ(s["gpus"], 512);  // torchrun --nnodes 64 --nproc_per_node 8
  EXPECT_EQ(s["tp"], 8);
  EXPECT_EQ(s["pp"], 8);
  EXPECT_EQ(s["vpp"], 2);  // Interleaved1F1B: two stages per rank
  EXPECT_EQ(s["schedule"], "interleaved");
  EXPECT_EQ(s["micro_batch"], 4);     // batch_size 32 in 8 microbatches
  EXPECT_EQ(s["global_batch"], 256);  // 32 × dp 8
  EXPECT_EQ(s["recompute"], "full");
  EXPECT_TRUE(has_key(i.understood, "training.batch_size", "global_batch"));
  EXPECT_TRUE(has_key(i.understood, "float8.enable_float8_linear", "torchao"));
  EXPECT_TRUE(has_key(i.understood, "training.compile", "full checkpointing"));
  EXPECT_TRUE(warns(i, "experimental.enable_async_tensor_parallel"));
  // Async TP overlaps the TP collectives with the GEMMs in the step time.
  EXPECT_EQ(s["tp_comm_overlap"], true);
  EXPECT_TRUE(warns(i, "float8.enable_fsdp_float8_all_gather"));
}

TEST(TorchtitanImport, BothSpellingsMustAgree) {
  const Error e =
      import_error("[model]\nflavor = \"8B\"\n[training]\nbatch_size = 2\nlocal_batch_size = 4\n");
  EXPECT_EQ(e.field, "training.batch_size");
  EXPECT_NE(e.message().find("training.local_batch_size"), std::string::npos);
  // The same value in both is read once, and the other listed.
  const Imported once =
      imported("[model]\nflavor = \"8B\"\n[training]\nbatch_size = 2\nlocal_batch_size = 2\n");
  EXPECT_TRUE(ignored_as(once, "training.batch_size", "read there"));
}

TEST(TorchtitanImport, FlavorsWithoutAPresetBringTheirArchitecture) {
  const Imported i = imported(fixture("llama4_17bx16e.toml"));
  ASSERT_TRUE(i.settings.contains("model_config"));
  EXPECT_EQ(i.settings["model_config"]["model_type"], "megatron_gpt");
  EXPECT_EQ(i.settings["etp"], 8);  // expert_tensor_parallel_degree = tp
  EXPECT_EQ(i.settings["gpus"], 32);
  Result<SettingsEstimate> e = estimate_settings({{"from", fixture("llama4_17bx16e.toml")}}, {});
  ASSERT_TRUE(e.ok()) << e.error().message();
  EXPECT_EQ(e->estimate.parameters.total, 107769861120);  // Llama 4 Scout's text model
}

TEST(TorchtitanImport, EveryNthLayerIsFullRecomputeOfThatMany) {
  const std::string job =
      "[model]\nname = \"llama3\"\nflavor = \"8B\"\n[activation_checkpoint]\nmode = "
      "\"selective\"\nselective_ac_option = \"4\"\n";
  const Imported i = imported(job);
  EXPECT_EQ(i.settings["recompute"], "full");
  EXPECT_EQ(i.settings["recompute_layers"], 8);  // 32 layers, every 4th
  EXPECT_TRUE(i.warnings.empty());
  // Without [activation_checkpoint], torchtitan's default: selective, every 2nd layer.
  const Imported d = imported("[model]\nname = \"llama3\"\nflavor = \"8B\"\n");
  EXPECT_EQ(d.settings["recompute_layers"], 16);
  EXPECT_TRUE(has_key(d.understood, "(default activation_checkpoint.selective_ac_option = 2)",
                      "recompute_layers = 16"));
  // Pipeline ranks of 15 and 16 layers cannot all be matched: said.
  const Imported pp = imported(
      "[model]\nflavor = \"8B\"\n[parallelism]\npipeline_parallel_degree = 4\n"
      "data_parallel_shard_degree = 2\n[activation_checkpoint]\nselective_ac_option = \"2\"\n");
  EXPECT_TRUE(warns(pp, "approximated"));
}

TEST(TorchtitanImport, DataParallelFlavours) {
  const std::string model = "[model]\nflavor = \"8B\"\n";
  const Imported hsdp = imported(
      model +
      "[parallelism]\ndata_parallel_replicate_degree = 4\ndata_parallel_shard_degree = 8\n");
  EXPECT_EQ(hsdp.settings["fsdp"], "hybrid_shard");
  EXPECT_EQ(hsdp.settings["fsdp_shard_group"], 8);
  EXPECT_EQ(hsdp.settings["gpus"], 32);
  const Imported ddp = imported(
      model +
      "[parallelism]\ndata_parallel_replicate_degree = 8\ndata_parallel_shard_degree = 1\n");
  EXPECT_EQ(ddp.settings["fsdp"], "none");
  EXPECT_TRUE(warns(ddp, "torch.autocast"));
  // TP without FSDP: torchtitan trains without mixed precision.
  const Imported tp = imported(
      model + "[parallelism]\ndata_parallel_shard_degree = 1\ntensor_parallel_degree = 8\n");
  EXPECT_EQ(tp.settings["activation_dtype"], "fp32");
  // never resharding after forward is ZeRO-2's layout.
  const Imported never =
      imported(model + "[parallelism]\nfsdp_reshard_after_forward = \"never\"\n");
  EXPECT_EQ(never.settings["fsdp"], "shard_grad_op");
}

TEST(TorchtitanImport, LossParallelIsItsOwnSetting) {
  const std::string model = "[model]\nflavor = \"8B\"\n[parallelism]\ntensor_parallel_degree = 8\n";
  const Imported off = imported(model + "disable_loss_parallel = true\n");
  EXPECT_EQ(off.settings["loss_parallel"], false);
  EXPECT_TRUE(has_key(off.understood, "parallelism.disable_loss_parallel", "loss_parallel"));
  // Full-vocabulary logits on every TP rank: more memory than with the loss on shards.
  EXPECT_GT(peak(off.settings), peak(imported(model).settings));
  const Imported without_tp =
      imported("[model]\nflavor = \"8B\"\n[parallelism]\ndisable_loss_parallel = true\n");
  EXPECT_TRUE(ignored_as(without_tp, "parallelism.disable_loss_parallel", "no effect without TP"));
}

TEST(TorchtitanImport, ErrorsNameTheKeyAsWritten) {
  EXPECT_EQ(import_error("[model]\nname = \"gpt5\"\nflavor = \"8B\"\n").field, "model.name");
  EXPECT_EQ(import_error("[model]\nname = \"llama3\"\nflavor = \"7B\"\n").field, "model.flavor");
  const std::string m = "[model]\nflavor = \"8B\"\n";
  EXPECT_EQ(import_error(m + "[activation_checkpoint]\nselective_ac_option = \"ops\"\n").field,
            "activation_checkpoint.selective_ac_option");
  EXPECT_EQ(import_error(m + "[activation_checkpoint]\nmode = \"partial\"\n").field,
            "activation_checkpoint.mode");
  EXPECT_EQ(import_error(m + "[parallelism]\npipeline_parallel_degree = 2\n"
                             "pipeline_parallel_schedule = \"Zigzag\"\n")
                .field,
            "parallelism.pipeline_parallel_schedule");
  EXPECT_EQ(
      import_error(m + "[training]\nlocal_batch_size = 6\n[parallelism]\n"
                       "pipeline_parallel_degree = 2\npipeline_parallel_microbatch_size = 4\n")
          .field,
      "parallelism.pipeline_parallel_microbatch_size");
  EXPECT_EQ(import_error(m + "[parallelism]\ntensor_parallel_degree = 0\n").field,
            "parallelism.tensor_parallel_degree");
  EXPECT_EQ(import_error(m + "[parallelism]\ndata_parallel_replicate_degree = 2\n").field,
            "parallelism.data_parallel_replicate_degree");  // HSDP needs the world size
  EXPECT_EQ(import_error("# torchrun --nproc_per_node 8 -m torchtitan.train\n" + m +
                         "[parallelism]\ndata_parallel_shard_degree = 4\n")
                .field,
            "parallelism.data_parallel_shard_degree");  // 4 ≠ 8 GPUs
  EXPECT_EQ(import_error(m + "[training]\nglobal_batch_size = 20\nlocal_batch_size = 2\n"
                             "[parallelism]\ndata_parallel_shard_degree = 4\n")
                .field,
            "training.global_batch_size");
  EXPECT_EQ(import_error("[model]\nname = \"qwen3\"\nflavor = \"30B-A3B\"\n[parallelism]\n"
                         "tensor_parallel_degree = 2\nexpert_parallel_degree = 2\n"
                         "expert_tensor_parallel_degree = 4\n")
                .field,
            "parallelism.expert_tensor_parallel_degree");
  EXPECT_EQ(import_error(m + "[optimizer]\nname = \"Lion\"\n").field, "optimizer.name");
  EXPECT_EQ(import_error("[model]\nflavor = \"8B\"\nconverters = [\"int4\"]\n").field,
            "model.converters");
}

TEST(TorchtitanImport, WhatItCannotHonourIsAWarning) {
  const std::string m = "[model]\nflavor = \"8B\"\n";
  EXPECT_TRUE(warns(imported(m + "[compile]\nenable = true\n[activation_checkpoint]\n"
                                 "selective_ac_option = \"op\"\n"),
                    "torch.compile fuses"));
  EXPECT_TRUE(
      warns(imported(m + "[activation_checkpoint]\nmode = \"memory_budget\"\n"), "memory-budget"));
  const Imported offload = imported(m + "[training]\nenable_cpu_offload = true\n");
  EXPECT_EQ(offload.settings["offload_params"], "cpu");  // FSDP2 CPUOffloadPolicy
  EXPECT_EQ(offload.settings["offload_optimizer"], "cpu");
  const Imported unknown = imported(m + "[training]\nnew_knob = 3\n");
  EXPECT_TRUE(ignored_as(unknown, "training.new_knob", "not read by vramplan's torchtitan"));
}

TEST(TorchtitanImport, ErrorsAboutSettingsNameTheFileKey) {
  // Op-level checkpointing of MoE layers is not modelled: the error names the TOML's key and
  // the value it wrote.
  Result<SettingsEstimate> e =
      estimate_settings({{"from", fixture("deepseek_v3_16b.toml")}, {"gpus", 8}}, {});
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().field, "activation_checkpoint.selective_ac_option");
  EXPECT_EQ(e.error().value, "op");
}

TEST(TorchtitanImport, ACommandCarryingTheJob) {
  const std::string command =
      "torchrun --nproc_per_node=8 --rdzv_backend c10d -m torchtitan.train \\\n"
      "  --model.name llama3 --model.flavor 8B --training.local_batch_size 2 \\\n"
      "  --training.seq_len 8192 --activation_checkpoint.selective_ac_option op \\\n"
      "  --compile.no-enable\n";
  Result<Imported> i = import_config(command);
  ASSERT_TRUE(i.ok()) << i.error().message();
  EXPECT_EQ(i->format, "torchtitan-command");
  EXPECT_EQ(i->settings["gpus"], 8);
  EXPECT_EQ(i->settings["recompute"], "selective-op");
  EXPECT_EQ(peak({{"from", command}}), peak({{"from", fixture("llama3_8b.toml")}}));
  EXPECT_EQ(import_error("torchrun --nproc_per_node 8 -m torchtitan.train --job.config_file "
                         "x.toml",
                         "")
                .field,
            "--job.config_file");
  EXPECT_EQ(import_error("NGPU=8 ./run_train.sh --training.steps 10", "").field, "CONFIG_FILE");
}

TEST(TorchtitanImport, ACommandNamingItsJobTomlReadsItWithTheOverridesOnTop) {
  const std::string command =
      "torchrun --nproc_per_node=8 -m torchtitan.train --job.config_file "
      "./torchtitan/models/llama3/train_configs/llama3_8b.toml --training.local_batch_size 1";
  EXPECT_EQ(files_named(command),
            std::vector<std::string>{"./torchtitan/models/llama3/train_configs/llama3_8b.toml"});
  const NamedFiles files{{"llama3_8b.toml", fixture("llama3_8b.toml")}};
  Result<Imported> i = import_config(command, "", json::object(), files);
  ASSERT_TRUE(i.ok()) << i.error().message();
  EXPECT_EQ(i->format, "torchtitan-command");
  EXPECT_EQ(i->settings["model"], "Llama-3.1-8B");  // from the file
  EXPECT_EQ(i->settings["micro_batch"], 1);         // the command line wins over its 2
  EXPECT_TRUE(has_key(i->understood, "--job.config_file", "job config TOML"));
  // run_train.sh runs CONFIG_FILE's job: given, it is read the same way.
  const std::string script =
      "CONFIG_FILE=./torchtitan/models/llama3/train_configs/llama3_8b.toml NGPU=8 "
      "./run_train.sh\n";
  EXPECT_EQ(files_named(script).size(), 1u);
  Result<Imported> run = import_config(script, "", json::object(), files);
  ASSERT_TRUE(run.ok()) << run.error().message();
  EXPECT_EQ(peak({{"from", script}, {"from_files", files}}),
            peak({{"from", fixture("llama3_8b.toml")}}));
  // A file given that is not a TOML is an error naming the key that names it.
  Result<Imported> bad = import_config(command, "", json::object(), {{"llama3_8b.toml", "[x"}});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().field, "--job.config_file");
}

}  // namespace
}  // namespace vramplan
