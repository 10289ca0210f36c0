#include "vramplan/validation.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <regex>

#include "core/csv.h"
#include "core/embedded_data.h"
#include "core/ultrascale.h"
#include "vramplan/estimate.h"
#include "vramplan/frameworks.h"
#include "vramplan/hardware.h"
#include "vramplan/scenario_io.h"

namespace vramplan {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

std::string_view embedded(std::string_view path) {
  for (const EmbeddedFile& f : embedded_files())
    if (path == f.path) return f.text();
  return {};
}

int64_t integer_or(const std::string& text, int64_t fallback) {
  if (text.empty()) return fallback;
  int64_t value = fallback;
  std::from_chars(text.data(), text.data() + text.size(), value);
  return value;
}

double number_or(const std::string& text, double fallback) {
  return text.empty() ? fallback : std::strtod(text.c_str(), nullptr);
}

bool is_true(const std::string& text) { return text == "True" || text == "true"; }

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

// Arguments a test's model_config.yaml sets that the measurement table has no column for
// (data/measurements/megatron_test_args.csv), by argument name.
using TestArgs = std::map<std::string, std::string>;

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

ValidationRow skipped_row(const std::string& dataset, const std::string& id,
                          const std::string& group, const std::string& quantity, double measured,
                          std::string reason) {
  ValidationRow row{dataset, id, group, quantity, measured, 0, "", true, std::move(reason)};
  return row;
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

// The Ultra-Scale Playbook's four models (data/measurements/README.md): Llama-style, MHA.
ModelConfig ultrascale_model(const std::string& size) {
  struct Shape {
    const char* name;
    int64_t layers, hidden, heads, ffn;
    bool tied;
  };
  static const Shape kShapes[] = {{"1B", 16, 2048, 32, 8192, true},
                                  {"3B", 28, 3072, 32, 8192, true},
                                  {"8B", 32, 4096, 32, 14336, false},
                                  {"80B", 80, 8192, 64, 28672, false}};
  ModelConfig m;
  for (const Shape& shape : kShapes) {
    if (size != shape.name) continue;
    m.name = std::string("ultrascale-") + shape.name;
    m.model_type = "llama";
    m.num_layers = shape.layers;
    m.hidden = shape.hidden;
    m.num_heads = m.num_kv_heads = shape.heads;
    m.head_dim = shape.hidden / shape.heads;
    m.ffn = shape.ffn;
    m.vocab = 131072;
    m.tied_embeddings = shape.tied;
    m.max_position_embeddings = 4096;
    m.moe_layers.assign(shape.layers, false);
    m.layer_attention.assign(shape.layers, LayerAttention::kFull);
  }
  return m;
}

}  // namespace

// nanotron's recipe in the sweep: bf16 with fp32 gradient accumulation, fused AdamW, TP with
// sequence parallelism, 1F1B, ZeRO 0 or 1, flash attention, no recompute.
Scenario ultrascale_scenario(const CsvRow& r) {
  Scenario s;
  apply_framework(Framework::kNanotron, s);
  s.model = ultrascale_model(r["model"]);
  s.training.seq_len = 4096;
  s.training.micro_batch = integer_or(r["micro_batch"], 1);
  s.parallel.dp = integer_or(r["dp"], 1);
  s.parallel.tp = integer_or(r["tp"], 1);
  s.parallel.pp = integer_or(r["pp"], 1);
  s.parallel.zero = integer_or(r["zero_stage"], 0);
  // nanotron's conventions (docs/frameworks.md): compute-cost pipeline split, unfused GLU,
  // the loss's fp32 copies of the logits, fp32 gradient accumulation, allocator pool.
  s.training.global_batch = s.training.micro_batch * integer_or(r["grad_accum"], 1) * s.parallel.dp;
  return s;
}

namespace {

// The sweep's "GPU memory as reported" is the peak reserved pool of global rank 0: nanotron's
// log_memory (logging.py) prints "Memory usage … Peak reserved" from rank 0 only, which is the
// first pipeline stage, and the Playbook's bench_cluster (report.py) parses that line.
double rank0_reserved_gib(const Estimate& est) { return est.stages.front().reserved_bytes / kGiB; }

// torchtitan logs max_reserved as the maximum over ranks.
double max_reserved_gib(const Estimate& est) {
  int64_t most = 0;
  for (const StageEstimate& st : est.stages) most = std::max(most, st.reserved_bytes);
  return most / kGiB;
}

void add_ultrascale_rows(const std::vector<CsvRow>& ran, const std::vector<CsvRow>& crashed,
                         ValidationReport& report) {
  const Gpu* h100 = builtin_gpus().find("h100-80gb");
  auto layout_id = [](const CsvRow& r) {
    return r["model"] + " dp" + r["dp"] + " tp" + r["tp"] + " pp" + r["pp"] + " zero" +
           r["zero_stage"] + " mb" + r["micro_batch"] + " ga" + r["grad_accum"];
  };
  for (const CsvRow& r : ran) {
    Result<Estimate> est = estimate(ultrascale_scenario(r), {.explain = false});
    const double measured = number_or(r["gpu_memory_GB_as_reported"], 0);
    if (!est.ok()) {
      report.rows.push_back(skipped_row("ultrascale", layout_id(r), r["model"], "reported",
                                        measured,
                                        "not a valid layout here: " + est.error().message()));
      continue;
    }
    const Verdict verdict = fit_on(*h100, est->peak.device_bytes).verdict;
    report.rows.push_back({"ultrascale", layout_id(r), r["model"], "reported", measured,
                           rank0_reserved_gib(*est), std::string(verdict_name(verdict)), false,
                           ""});
    FitConfusion& f = report.fit;
    (verdict == Verdict::kFits    ? f.ran_fits
     : verdict == Verdict::kTight ? f.ran_tight
                                  : f.ran_oom)++;
  }
  for (const CsvRow& r : crashed) {
    Result<Estimate> est = estimate(ultrascale_scenario(r), {.explain = false});
    if (!est.ok()) {
      report.rows.push_back(skipped_row("ultrascale-crashed", layout_id(r), r["model"], "fit", 0,
                                        "not a valid layout here: " + est.error().message()));
      continue;
    }
    const Verdict verdict = fit_on(*h100, est->peak.device_bytes).verdict;
    report.rows.push_back({"ultrascale-crashed", layout_id(r), r["model"], "fit", 0,
                           est->peak.device_bytes / kGiB, std::string(verdict_name(verdict)), false,
                           ""});
    FitConfusion& f = report.fit;
    (verdict == Verdict::kFits    ? f.crashed_fits
     : verdict == Verdict::kTight ? f.crashed_tight
                                  : f.crashed_oom)++;
  }
}

// What torchtitan's published runs use that vramplan does not model, or "" when the row can be
// predicted. torch.compile and Float8 are predicted as eager bf16 only under full activation
// checkpointing, where they touch only the layer being recomputed (data/measurements/README.md).
std::string torchtitan_unmodelled(const CsvRow& r) {
  if (r["compile"] == "true" && r["recompute"] != "full")
    return "torch.compile with " + r["recompute"] +
           " checkpointing fuses element-wise ops and changes what each layer saves; not modelled";
  return "";
}

// torchtitan's published runs (data/measurements/README.md): the page's settings through the
// same reader as the CLI, with torchtitan's conventions; the figure is peak reserved, max over
// ranks.
void add_torchtitan_rows(const std::vector<CsvRow>& runs, ValidationReport& report) {
  for (const CsvRow& r : runs) {
    const double measured = number_or(r["reserved_gib"], 0);
    if (const std::string why = torchtitan_unmodelled(r); !why.empty()) {
      report.rows.push_back(
          skipped_row("torchtitan", r["run"], r["model"], "peak reserved", measured, why));
      continue;
    }
    // local_batch is per data-parallel rank; the microbatches split it (pipeline schedules).
    // torchtitan's interleaved schedule puts two stages on each rank. Its split, the framework's
    // default, counts the embedding and the norm + output as one layer each and gives the
    // remainder to the first stages (generate_llm_fqn_per_model_part, input and output weight 1;
    // for the 405B the generate_split_points of the page's time gives the same 15, 16 × 6, 15 and
    // 7, 8 × 14, 7).
    const int64_t microbatches = integer_or(r["microbatches"], 1);
    const int64_t micro_batch = integer_or(r["local_batch"], 1) / microbatches;
    const int64_t dp = integer_or(r["gpus"], 1) /
                       (integer_or(r["tp"], 1) * integer_or(r["pp"], 1) * integer_or(r["cp"], 1));
    const nlohmann::json settings = {{"model", r["model"]},
                                     {"framework", "torchtitan"},
                                     {"gpus", integer_or(r["gpus"], 1)},
                                     {"tp", integer_or(r["tp"], 1)},
                                     {"cp", integer_or(r["cp"], 1)},
                                     {"pp", integer_or(r["pp"], 1)},
                                     {"vpp", r["schedule"] == "interleaved" ? 2 : 1},
                                     {"micro_batch", micro_batch},
                                     {"global_batch", micro_batch * microbatches * dp},
                                     {"seq_len", integer_or(r["seq_len"], 0)},
                                     {"recompute", r["recompute"]}};
    Result<ResolvedScenario> scenario =
        resolve_scenario(settings, [](const std::string& path) -> Result<std::string> {
          return Error{"model", path, "a preset", "validation reads no files"};
        });
    Result<Estimate> est = scenario ? estimate(scenario->scenario, {.explain = false})
                                    : Result<Estimate>(scenario.error());
    if (!est) {
      report.rows.push_back(skipped_row("torchtitan", r["run"], r["model"], "peak reserved",
                                        measured,
                                        "not a valid scenario: " + est.error().message()));
      continue;
    }
    report.rows.push_back({"torchtitan", r["run"], r["model"], "peak reserved", measured,
                           max_reserved_gib(*est), "", false, ""});
  }
}

// Nearest-rank percentile of sorted values.
double percentile(const std::vector<double>& sorted, double fraction) {
  if (sorted.empty()) return 0;
  const size_t rank = static_cast<size_t>(std::ceil(fraction * sorted.size()));
  return sorted[std::clamp<size_t>(rank, 1, sorted.size()) - 1];
}

DatasetSummary summarise(const ValidationReport& report, const std::string& dataset,
                         const std::string& quantity, bool llm_only) {
  DatasetSummary s{dataset, quantity, 0, 0, 0, 0, 0};
  std::vector<double> abs_errors, errors;
  for (const ValidationRow& row : report.rows) {
    if (row.dataset != dataset || row.quantity != quantity) continue;
    if (llm_only && row.group != "gpt" && row.group != "moe") continue;
    if (row.skipped) {
      ++s.skipped;
      continue;
    }
    errors.push_back(row.error_pct());
    abs_errors.push_back(std::fabs(row.error_pct()));
  }
  std::sort(abs_errors.begin(), abs_errors.end());
  std::sort(errors.begin(), errors.end());
  s.rows = static_cast<int>(errors.size());
  s.median_abs_pct = percentile(abs_errors, 0.5);
  s.p90_abs_pct = percentile(abs_errors, 0.9);
  s.bias_pct = percentile(errors, 0.5);
  return s;
}

NoiseFloor ultrascale_noise_floor(const std::vector<CsvRow>& ran) {
  std::map<std::string, std::vector<double>> groups;
  for (const CsvRow& r : ran) {
    if (r["zero_stage"] != "0") continue;
    if (integer_or(r["grad_accum"], 1) < integer_or(r["pp"], 1)) continue;
    groups[r["model"] + " tp" + r["tp"] + " pp" + r["pp"] + " mb" + r["micro_batch"]].push_back(
        number_or(r["gpu_memory_GB_as_reported"], 0));
  }
  NoiseFloor floor;
  std::vector<double> abs_errors;
  for (auto& [layout, measured] : groups) {
    if (measured.size() < 2) continue;
    ++floor.groups;
    std::sort(measured.begin(), measured.end());
    const size_t n = measured.size();
    const double median = n % 2 ? measured[n / 2] : (measured[n / 2 - 1] + measured[n / 2]) / 2;
    for (double m : measured)
      if (m > 0) abs_errors.push_back(std::fabs(median - m) / m * 100.0);
  }
  std::sort(abs_errors.begin(), abs_errors.end());
  floor.rows = static_cast<int>(abs_errors.size());
  floor.median_abs_pct = percentile(abs_errors, 0.5);
  floor.p90_abs_pct = percentile(abs_errors, 0.9);
  return floor;
}

void add_summaries_and_targets(ValidationReport& report) {
  const DatasetSummary static_mem = summarise(report, "megatron", "static allocated", true);
  const DatasetSummary peak = summarise(report, "megatron", "peak allocated", true);
  const DatasetSummary reported = summarise(report, "ultrascale", "reported", false);
  report.summaries = {static_mem, peak, reported,
                      summarise(report, "torchtitan", "peak reserved", false)};
  const FitConfusion& f = report.fit;
  const int ran = f.ran_fits + f.ran_tight + f.ran_oom;
  const int crashed = f.crashed_fits + f.crashed_tight + f.crashed_oom;
  const double ran_fit_pct = ran ? 100.0 * (f.ran_fits + f.ran_tight) / ran : 0;
  const double crashed_flagged_pct =
      crashed ? 100.0 * (f.crashed_tight + f.crashed_oom) / crashed : 0;
  report.targets = {
      {"Megatron static memory, median |error| %", static_mem.median_abs_pct, 3, true},
      {"Megatron peak allocated, median |error| %", peak.median_abs_pct, 5, true},
      {"Megatron peak allocated, p90 |error| %", peak.p90_abs_pct, 10, true},
      {"Ultra-Scale reported memory, median |error| %", reported.median_abs_pct, 5, true},
      {"Ultra-Scale reported memory, p90 |error| %", reported.p90_abs_pct, 10, true},
      {"Ultra-Scale runs that ran predicted to fit, %", ran_fit_pct, 97, false},
      {"Ultra-Scale crashed runs flagged tight or oom, %", crashed_flagged_pct, 80, false},
  };
}

}  // namespace

namespace {

bool llm_row(const ValidationRow& r) { return r.group == "gpt" || r.group == "moe"; }

ErrorSpread spread(std::vector<double> errors, std::string basis) {
  std::sort(errors.begin(), errors.end());
  return ErrorSpread{percentile(errors, 0.1), percentile(errors, 0.9),
                     static_cast<int>(errors.size()), std::move(basis)};
}

// Megatron rows measure static memory (model states after a step) and peak allocated on the
// same rank: their difference is what the activations add.
std::vector<double> activation_errors(const ValidationReport& report) {
  std::map<std::string, std::pair<const ValidationRow*, const ValidationRow*>> by_id;
  for (const ValidationRow& r : report.rows) {
    if (r.dataset != "megatron" || r.skipped || !llm_row(r)) continue;
    (r.quantity == "static allocated" ? by_id[r.id].first : by_id[r.id].second) = &r;
  }
  std::vector<double> errors;
  for (const auto& [id, pair] : by_id) {
    const auto [stat, peak] = pair;
    if (!stat || !peak) continue;
    const double measured = peak->measured_gib - stat->measured_gib;
    const double predicted = peak->predicted_gib - stat->predicted_gib;
    if (measured < 0.5) continue;  // too small to say anything relative
    errors.push_back((predicted - measured) / measured * 100.0);
  }
  return errors;
}

}  // namespace

UncertaintyBands derive_bands(const ValidationReport& report) {
  std::vector<double> states, reported;
  for (const ValidationRow& r : report.rows) {
    if (r.skipped) continue;
    if (r.dataset == "megatron" && r.quantity == "static allocated" && llm_row(r))
      states.push_back(r.error_pct());
    if (r.dataset == "ultrascale" && r.quantity == "reported") reported.push_back(r.error_pct());
  }
  UncertaintyBands b;
  b.model_states = spread(states, "Megatron-LM static memory, gpt/moe rows");
  b.activations = spread(activation_errors(report),
                         "Megatron-LM peak minus static memory, gpt/moe rows (>= 0.5 GiB)");
  b.reserved = spread(reported, "Ultra-Scale Playbook reported memory (nanotron)");
  // FORMULAS.md §5: the CUDA context takes 0.3–1.3 GiB against the 0.6 GiB default, i.e. the
  // estimate is off by −54%..+100%; NCCL buffers vary at least as much.
  b.device = ErrorSpread{0.6 / 1.3 * 100 - 100, 0.6 / 0.3 * 100 - 100, 0,
                         "FORMULAS.md §5: CUDA context 0.3–1.3 GiB against the 0.6 GiB default"};
  return b;
}

Result<ValidationReport> validate_measurements() {
  Result<std::vector<CsvRow>> megatron =
      parse_csv(embedded("measurements/megatron_functional_tests_h100_memory.csv"), "megatron");
  Result<std::vector<CsvRow>> ran =
      parse_csv(embedded("measurements/ultrascale_playbook_benchmarks.csv"), "ultrascale");
  Result<std::vector<CsvRow>> crashed =
      parse_csv(embedded("measurements/ultrascale_playbook_crashed.csv"), "ultrascale-crashed");
  if (!megatron) return megatron.error();
  Result<std::vector<CsvRow>> test_args =
      parse_csv(embedded("measurements/megatron_test_args.csv"), "megatron-test-args");
  if (!test_args) return test_args.error();
  Result<std::map<std::string, TestArgs>> args_of = args_by_test(*test_args);
  if (!args_of) return args_of.error();
  if (!ran) return ran.error();
  if (!crashed) return crashed.error();
  Result<std::vector<CsvRow>> torchtitan =
      parse_csv(embedded("measurements/torchtitan_published.csv"), "torchtitan");
  if (!torchtitan) return torchtitan.error();
  ValidationReport report;
  add_megatron_rows(*megatron, *args_of, report);
  add_ultrascale_rows(*ran, *crashed, report);
  add_torchtitan_rows(*torchtitan, report);
  add_summaries_and_targets(report);
  report.ultrascale_noise = ultrascale_noise_floor(*ran);
  return report;
}

}  // namespace vramplan
