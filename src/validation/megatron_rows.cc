// Megatron-LM's functional tests (H100 memory): each test's arguments as a Scenario, then its
// static and peak allocated memory against the estimate.
#include <algorithm>
#include <cmath>
#include <map>
#include <regex>

#include "interop/megatron/megatron_args.h"
#include "validation/dataset_rows.h"
#include "validation/ultrascale.h"
#include "vramplan/io/scenario_io.h"
#include "vramplan/perf/hardware.h"
#include "vramplan/training/frameworks.h"

namespace vramplan::dataset_rows {
namespace {

// Every argument the side table may hold: each one is applied or gives a skip reason below.
constexpr std::string_view kKnownTestArgs[] = {"--q-lora-rank",
                                               "--kv-lora-rank",
                                               "--qk-head-dim",
                                               "--qk-pos-emb-head-dim",
                                               "--v-head-dim",
                                               "--cross-entropy-loss-fusion",
                                               "--fp8-param-gather",
                                               "--tp-comm-overlap",
                                               "--cuda-graph-impl",
                                               "--cuda-graph-scope",
                                               "--cuda-graph-modules",
                                               "--first-last-layers-bf16",
                                               "--pipeline-model-parallel-layout",
                                               "--moe-grouped-gemm",
                                               "--account-for-embedding-in-pipeline-split",
                                               "--account-for-loss-in-pipeline-split"};

// The table's columns are Megatron's arguments under short names (data/measurements/README.md);
// a row is turned back into the argument list its test ran, then read by the Megatron importer
// like any user's launch command.
struct Column {
  const char* column;
  const char* argument;
  bool flag;  // "True" gives the flag; anything else leaves it out
};
constexpr Column kColumns[] = {
    {"layers", "--num-layers", false},
    {"hidden", "--hidden-size", false},
    {"ffn", "--ffn-hidden-size", false},
    {"heads", "--num-attention-heads", false},
    {"gqa", "--group-query-attention", true},
    {"query_groups", "--num-query-groups", false},
    {"kv_channels", "--kv-channels", false},
    {"seq_len", "--seq-length", false},
    {"micro_batch", "--micro-batch-size", false},
    {"global_batch", "--global-batch-size", false},
    {"tp", "--tensor-model-parallel-size", false},
    {"pp", "--pipeline-model-parallel-size", false},
    {"layers_per_virtual_stage", "--num-layers-per-virtual-pipeline-stage", false},
    {"virtual_stages_per_rank", "--num-virtual-stages-per-pipeline-rank", false},
    {"cp", "--context-parallel-size", false},
    {"ep", "--expert-model-parallel-size", false},
    {"etp", "--expert-tensor-parallel-size", false},
    {"num_experts", "--num-experts", false},
    {"topk", "--moe-router-topk", false},
    {"moe_ffn", "--moe-ffn-hidden-size", false},
    {"shared_expert_ffn", "--moe-shared-expert-intermediate-size", false},
    {"moe_layer_freq", "--moe-layer-freq", false},
    {"mla", "--multi-latent-attention", true},
    {"mtp_layers", "--mtp-num-layers", false},
    {"dist_opt", "--use-distributed-optimizer", true},
    {"seq_parallel", "--sequence-parallel", true},
    {"recompute_granularity", "--recompute-granularity", false},
    {"recompute_method", "--recompute-method", false},
    {"recompute_num_layers", "--recompute-num-layers", false},
    {"recompute_modules", "--recompute-modules", false},
    {"bf16", "--bf16", true},
    {"fp16", "--fp16", true},
    {"fp8_format", "--fp8-format", false},
    {"fp8_recipe", "--fp8-recipe", false},
    {"transformer_impl", "--transformer-impl", false},
    {"attention_backend", "--attention-backend", false},
    {"swiglu", "--swiglu", true},
    {"untie_embeddings", "--untie-embeddings-and-output-weights", true},
    {"position_embedding", "--position-embedding-type", false},
    {"normalization", "--normalization", false},
    {"vocab_size", "--vocab-size", false},
    {"vocab_file", "--vocab-file", false},
    {"tokenizer_type", "--tokenizer-type", false},
    {"make_vocab_divisible_by", "--make-vocab-size-divisible-by", false},
    {"hidden_dropout", "--hidden-dropout", false},
    {"attention_dropout", "--attention-dropout", false},
    {"disable_bias_linear", "--disable-bias-linear", true},
    {"precision_aware_opt", "--use-precision-aware-optimizer", true},
};

interop::MegatronArgs megatron_arguments(const CsvRow& r, const TestArgs& side) {
  interop::MegatronArgs args;
  for (const Column& c : kColumns) {
    const std::string& value = r[c.column];
    if (value.empty()) continue;
    if (!c.flag)
      args.push_back({c.argument, value});
    else if (is_true(value))
      args.push_back({c.argument, "true"});
  }
  for (const auto& [name, value] : side) args.push_back({name, value});
  return args;
}

// The test's scenario as the importer reads its arguments, on the table's GPU count.
Result<Scenario> megatron_scenario(const CsvRow& r, const TestArgs& side) {
  interop::ImportBuilder out("megatron");
  if (auto e = interop::import_megatron_args(megatron_arguments(r, side), integer_or(r["gpus"], 8),
                                             "(the test's GPUs)", out))
    return *e;
  Imported imported = out.finish();
  Result<ResolvedScenario> resolved = resolve_scenario(imported.settings, nullptr);
  if (!resolved) return resolved.error();
  return resolved->scenario;
}

// Why a Megatron row cannot be compared yet; empty when it can.
std::string megatron_skip_reason(const CsvRow& r, const TestArgs& args) {
  const std::string& family = r["family"];
  if (family != "gpt" && family != "moe") return family + " models are outside vramplan's scope";
  if (r["max_allocated_GiB"].empty()) return "no training memory recorded (inference test)";
  if (args.contains("--cuda-graph-scope") || args.contains("--cuda-graph-modules"))
    return "CUDA graphs of parts of each layer (--cuda-graph-scope/--cuda-graph-modules) are not "
           "modelled yet";
  if (args.contains("--tp-comm-overlap"))
    return "--tp-comm-overlap (Transformer Engine userbuffers) is not modelled yet";
  if (args.contains("--first-last-layers-bf16"))
    return "--first-last-layers-bf16 (fp8 models with bf16 end layers) is not modelled yet";
  if (is_true(r["fsdp"])) return "Megatron FSDP is not modelled yet";
  if (r["transformer_impl"] == "inference_optimized") return "inference-optimised layers";
  // Features the CSV names only in the test name (its model_config.yaml sets the flag).
  const std::string& test = r["test_case"];
  if (test.find("muon") != std::string::npos)
    return "Megatron's Muon (emerging_optimizers) state layout is not modelled yet";
  if (test.find("multi_dist_optimizer_instances") != std::string::npos)
    return "--num-distributed-optimizer-instances is not modelled yet";
  if (test.find("defer_embedding_wgrad_compute") != std::string::npos)
    return "--defer-embedding-wgrad-compute (output-layer gradients kept per microbatch) is not "
           "modelled yet";
  if (r["vocab_size"].empty() && r["vocab_file"] != "vocab.json")
    return "vocabulary size not recorded (" + r["tokenizer_type"] + ")";
  return "";
}

int64_t row_bytes(const StageEstimate& stage, const char* component) {
  for (const Row& r : stage.rows)
    if (r.component == component) return r.bytes;
  return 0;
}

int64_t static_bytes(const Scenario& s, const StageEstimate& stage) {
  // What stays allocated between steps: model states, Transformer Engine's cached fp8 weight
  // casts, the persistent GEMM workspaces and attention-scores buffer, and the optimizer's fp32
  // copy of gradients kept below fp32, which lives until the next step's zero_grad.
  const int64_t grad_copy = has_fp32_grad_copy(s) ? row_bytes(stage, "master weights") : 0;
  return row_bytes(stage, "weights") + row_bytes(stage, "fp8 weight copies") +
         row_bytes(stage, "gradients") + row_bytes(stage, "master weights") +
         row_bytes(stage, "optimizer states") + row_bytes(stage, "GEMM workspaces") +
         row_bytes(stage, "attention scores buffer") + grad_copy;
}

}  // namespace

Result<std::map<std::string, TestArgs>> args_by_test(const std::vector<CsvRow>& rows) {
  std::map<std::string, TestArgs> out;
  for (const CsvRow& r : rows) {
    const std::string& name = r["argument"];
    if (std::find(std::begin(kKnownTestArgs), std::end(kKnownTestArgs), name) ==
        std::end(kKnownTestArgs))
      return Error{"megatron_test_args.csv", name, "an argument the validation applies", ""};
    out[r["test_case"]][name] = r["value"];
  }
  return out;
}

void add_megatron_rows(const std::vector<CsvRow>& table,
                       const std::map<std::string, TestArgs>& args_of, ValidationReport& report) {
  const TestArgs none;
  for (const CsvRow& r : table) {
    const std::string id = r["test_case"], family = r["family"];
    auto found = args_of.find(id);
    const TestArgs& args = found == args_of.end() ? none : found->second;
    const double peak = number_or(r["max_allocated_GiB"], 0);
    const double after_step = number_or(r["current_allocated_GiB_after_last_step"], 0);
    std::string reason = megatron_skip_reason(r, args);
    Result<Scenario> imported =
        reason.empty() ? megatron_scenario(r, args) : Result<Scenario>(Error{});
    if (reason.empty() && !imported.ok()) reason = "not read: " + imported.error().message();
    const Scenario scenario = reason.empty() ? *imported : Scenario{};
    Result<Estimate> est =
        reason.empty() ? estimate(scenario, {.explain = false}) : Result<Estimate>(Error{});
    if (reason.empty() && !est.ok()) reason = "not a valid layout here: " + est.error().message();
    if (!reason.empty()) {
      report.rows.push_back(
          skipped_row("megatron", id, family, "static allocated", after_step, reason));
      report.rows.push_back(skipped_row("megatron", id, family, "peak allocated", peak, reason));
      continue;
    }
    // Megatron logs the last rank: the last pipeline stage.
    const StageEstimate& last = est->stages.back();
    report.rows.push_back({"megatron", id, family, "static allocated", after_step,
                           static_bytes(scenario, last) / kGiB, "", false, ""});
    report.rows.push_back({"megatron", id, family, "peak allocated", peak,
                           last.allocated_bytes / kGiB, "", false, ""});
  }
}

}  // namespace vramplan::dataset_rows
