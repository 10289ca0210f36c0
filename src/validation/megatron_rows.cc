// Megatron-LM's functional tests (H100 memory): each test's arguments as a Scenario, then its
// static and peak allocated memory against the estimate.
#include <algorithm>
#include <cmath>
#include <map>
#include <regex>

#include "validation/dataset_rows.h"
#include "validation/ultrascale.h"
#include "vramplan/io/scenario_io.h"
#include "vramplan/perf/hardware.h"
#include "vramplan/training/frameworks.h"

namespace vramplan::dataset_rows {
namespace {

// Megatron's --moe-layer-freq: "([0]*3+[1]*12)" lists dense (0) and MoE (1) layers; an integer k
// makes every k-th layer MoE; empty means every layer.
std::vector<bool> moe_pattern(const std::string& text, int64_t layers) {
  std::vector<bool> pattern;
  static const std::regex kPiece(R"(\[([01])\]\*(\d+))");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), kPiece);
       it != std::sregex_iterator(); ++it)
    pattern.insert(pattern.end(), std::stoll((*it)[2]), (*it)[1] == "1");
  if (!pattern.empty()) {
    pattern.resize(layers, pattern.back());
    return pattern;
  }
  const int64_t every = integer_or(text, 1);
  for (int64_t i = 0; i < layers; ++i) pattern.push_back(every > 0 && i % every == 0);
  return pattern;
}

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
                                               "--moe-grouped-gemm"};

std::string arg_or(const TestArgs& args, const char* name, const std::string& fallback) {
  auto it = args.find(name);
  return it == args.end() ? fallback : it->second;
}

// Megatron-LM's defaults for what a functional test leaves unset (megatron/training/arguments.py).
ModelConfig megatron_model(const CsvRow& r, const TestArgs& args) {
  ModelConfig m;
  m.name = r["test_case"];
  m.model_type = "megatron-gpt";
  m.hidden = integer_or(r["hidden"], 0);
  m.num_layers = integer_or(r["layers"], 0);
  m.num_heads = integer_or(r["heads"], 0);
  m.num_kv_heads = is_true(r["gqa"]) ? integer_or(r["query_groups"], m.num_heads) : m.num_heads;
  m.head_dim = integer_or(r["kv_channels"], m.num_heads > 0 ? m.hidden / m.num_heads : 0);
  const bool swiglu = is_true(r["swiglu"]);
  m.mlp = swiglu ? MlpKind::kGated : MlpKind::kPlain;
  m.ffn = integer_or(r["ffn"], swiglu ? (4 * m.hidden * 2 / 3) / 64 * 64 : 4 * m.hidden);
  m.norm = r["normalization"] == "RMSNorm" ? NormKind::kRmsNorm : NormKind::kLayerNorm;
  const bool bias = !is_true(r["disable_bias_linear"]);
  m.qkv_bias = m.attn_out_bias = m.mlp_bias = bias;
  m.tied_embeddings = !is_true(r["untie_embeddings"]);
  m.learned_position_embeddings = r["position_embedding"].empty();  // learned_absolute
  m.max_position_embeddings = integer_or(r["seq_len"], 0);
  const int64_t experts = integer_or(r["num_experts"], 0);
  if (experts > 0) {
    m.moe.num_experts = experts;
    m.moe.top_k = integer_or(r["topk"], 2);
    m.moe.expert_ffn = integer_or(r["moe_ffn"], m.ffn);
    const int64_t shared = integer_or(r["shared_expert_ffn"], 0);
    m.moe.shared_experts = shared > 0 ? 1 : 0;
    m.moe.shared_expert_ffn = shared;
  }
  m.moe_layers = experts > 0 ? moe_pattern(r["moe_layer_freq"], m.num_layers)
                             : std::vector<bool>(m.num_layers, false);
  if (is_true(r["mla"])) {
    // The test's --q-lora-rank ... --v-head-dim, else Megatron's defaults (arguments.py): no q
    // compression, kv_lora_rank 32, qk 128 + rope 64, v 128.
    m.attention = AttentionKind::kMla;
    auto dim = [&](const char* name, int64_t fallback) {
      return integer_or(arg_or(args, name, ""), fallback);
    };
    m.mla = MlaConfig{dim("--q-lora-rank", 0), dim("--kv-lora-rank", 32), dim("--qk-head-dim", 128),
                      dim("--qk-pos-emb-head-dim", 64), dim("--v-head-dim", 128)};
    m.head_dim = m.mla.qk_nope_head_dim + m.mla.qk_rope_head_dim;
    m.num_kv_heads = m.num_heads;
  }
  m.mtp_layers = integer_or(r["mtp_layers"], 0);
  m.layer_attention.assign(m.num_layers, LayerAttention::kFull);
  return m;
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
  if (args.contains("--pipeline-model-parallel-layout"))
    return "--pipeline-model-parallel-layout is not modelled yet";
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

Scenario megatron_scenario(const CsvRow& r, const TestArgs& args) {
  Scenario s;
  s.model = megatron_model(r, args);
  if (s.model.vocab == 0)
    s.model.vocab = integer_or(r["vocab_size"], 50257);  // vocab.json is GPT-2's BPE
  Training& t = s.training;
  t.seq_len = integer_or(r["seq_len"], 0);
  t.micro_batch = integer_or(r["micro_batch"], 1);
  t.global_batch = integer_or(r["global_batch"], 0);
  t.dropout = number_or(r["hidden_dropout"], 0.1) > 0;  // Megatron's default dropout is 0.1
  t.flash_attention = r["attention_backend"] != "unfused" && r["transformer_impl"] != "local";
  const std::string& granularity = r["recompute_granularity"];
  t.recompute = granularity == "full"        ? Recompute::kFull
                : granularity == "selective" ? Recompute::kSelective
                                             : Recompute::kNone;
  if (t.recompute == Recompute::kFull && r["recompute_method"] == "block")
    t.recompute_layers = integer_or(r["recompute_num_layers"], 0);
  Parallelism& p = s.parallel;
  p.tp = integer_or(r["tp"], 1);
  p.pp = integer_or(r["pp"], 1);
  p.cp = integer_or(r["cp"], 1);
  p.ep = integer_or(r["ep"], 1);
  p.etp = s.model.is_moe() ? integer_or(r["etp"], p.tp) : 1;  // Megatron: expert TP defaults to TP
  p.dp = integer_or(r["gpus"], 8) / (p.tp * p.pp * p.cp);
  // Megatron requires sequence parallelism for MoE with TP; otherwise it is off unless asked.
  p.sequence_parallel = is_true(r["seq_parallel"]) || (s.model.is_moe() && p.tp > 1);
  p.distributed_optimizer = is_true(r["dist_opt"]);
  const int64_t per_rank = s.model.num_layers / std::max<int64_t>(p.pp, 1);
  p.vpp = integer_or(r["virtual_stages_per_rank"], 0);
  if (p.vpp == 0)
    p.vpp = r["layers_per_virtual_stage"].empty()
                ? 1
                : per_rank / integer_or(r["layers_per_virtual_stage"], 1);
  p.vpp = std::max<int64_t>(p.vpp, 1);
  p.schedule = p.vpp > 1 ? Schedule::kInterleaved : Schedule::k1F1B;
  // A layer count that only splits with the embedding and loss counted in (Megatron's
  // --account-for-embedding/loss-in-pipeline-split).
  const int64_t chunks = p.pp * p.vpp;
  if (s.model.num_layers % chunks != 0 && (s.model.num_layers + 2) % chunks == 0)
    p.embedding_as_stage = p.loss_as_stage = true;
  s.conventions.vocab_pad_multiple = integer_or(r["make_vocab_divisible_by"], 128);
  // Megatron's own (docs/frameworks.md): the local attention's persistent scores buffer
  // (Transformer Engine's unfused attention allocates its scores per layer instead), and the
  // optimizer's fp32 copy of gradients kept below fp32.
  s.conventions.attention_scores_buffer = r["transformer_impl"] == "local";
  s.conventions.fp32_grad_copy = true;
  // --fp16: fp16 weights and activations; the gradients accumulate in fp16 too unless
  // --accumulate-allreduce-grads-in-fp32 (arguments.py forces it only for bf16).
  if (is_true(r["fp16"])) {
    t.param_dtype = t.grad_dtype = t.activation_dtype = DType::kFp16;
    t.fp32_grad_accumulation =
        arg_or(args, "--accumulate-allreduce-grads-in-fp32", "false") == "true";
  }
  // Whole-layer CUDA graphs: their pools are reserved memory, which these tests do not log.
  s.overheads.per_layer_cuda_graphs = args.contains("--cuda-graph-impl");
  // --cross-entropy-loss-fusion: the jit-fused cross-entropy
  // (megatron/core/fusions/fused_cross_entropy.py) returns new fp32 tensors where the unfused
  // one exponentiates the fp32 logits in place, so one more fp32 logits tensor is alive.
  if (arg_or(args, "--cross-entropy-loss-fusion", "false") == "true")
    s.conventions.loss_bytes_per_logit = 2 + 4 + 4;
  // --fp8-format/--fp8-recipe (Megatron's default recipe is delayed scaling);
  // --fp8-param-gather: fp8 primary weights.
  if (!r["fp8_format"].empty()) {
    t.fp8 = Fp8Recipe::kDelayed;
    for (size_t i = 1; i < kFp8RecipeNames.size(); ++i)
      if (r["fp8_recipe"] == kFp8RecipeNames[i]) t.fp8 = static_cast<Fp8Recipe>(i);
    t.fp8_params = arg_or(args, "--fp8-param-gather", "false") == "true";
  }
  // Transformer Engine keeps a 32 MiB cuBLAS workspace of its own beside PyTorch's two, and with
  // --moe-grouped-gemm one more per stream for its GroupedLinear experts (the local
  // implementation's grouped GEMM does not use them).
  if (r["transformer_impl"] == "transformer_engine") {
    s.overheads.gemm_workspace_bytes = 96ll << 20;
    t.moe_grouped_gemm = arg_or(args, "--moe-grouped-gemm", "false") == "true";
  }
  return s;
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
    const Scenario scenario = reason.empty() ? megatron_scenario(r, args) : Scenario{};
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
