// Serving memory per GPU, following what vLLM (and SGLang) allocate: weights as loaded, the KV
// cache, the activation peak of the engine's profile run, CUDA graphs, memory outside PyTorch;
// and the KV budget left at a memory fraction.
#include "vramplan/serving/inference.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "base/term.h"
#include "serving/inference_checks.h"
#include "serving/inference_weights.h"
#include "serving/serving_images.h"
#include "serving/serving_offload.h"
#include "vramplan/model/hf_config.h"

namespace vramplan {
namespace {

using std::to_string;

constexpr const char* kSourceRecurrentState =
    "vLLM v1/kv_cache_interface.py MambaSpec and model_executor/layers/mamba/mamba_utils.py "
    "MambaStateShapeCalculator (mamba2_state_shape, gated_delta_net_state_shape): constant size "
    "per sequence, in the same pool as the KV pages (hybrid KV cache manager)";
constexpr const char* kSourceKv =
    "Kwon et al. 2023, PagedAttention (arXiv 2309.06180); vLLM v1/kv_cache_interface.py "
    "(page = block_size · 2 · kv_heads · head_dim · dtype bytes; MLA: one latent + rope key; "
    "sliding-window layers keep their window)";
constexpr const char* kSourceRotary =
    "vLLM model_executor/layers/rotary_embedding: cos_sin_cache of max_position × rotary_dim in "
    "the model dtype";
constexpr const char* kSourceActivation =
    "vLLM v1/worker/gpu_model_runner.py profile_run: a dummy forward of max_num_batched_tokens, "
    "then the sampler on max_num_seqs requests (fp32 logits, top-k/top-p sort values and int64 "
    "indices, softmax, cumulative sum, probabilities: ≈ 38 B per logit)";
constexpr const char* kSourceGraphs =
    "vLLM CUDA graph capture (decode batch sizes up to 512; logs 'Graph capturing finished ... "
    "took 0.1–1 GiB')";
constexpr const char* kSourceNonTorch =
    "vLLM utils/mem_utils.py memory_profiling: non-torch memory growth during the profile run "
    "(lazily loaded kernels, cuBLAS handles)";
constexpr const char* kSourceCrossAttentionKv =
    "vLLM models/mllama.py (cross-attention layers cache the image tokens' K/V per request, "
    "AttentionType.ENCODER_DECODER); transformers MllamaTextCrossAttention";
constexpr const char* kSourceVisionProfile =
    "vLLM v1/worker/gpu_model_runner.py profile_run (dummy images through the encoder, their "
    "embeddings kept in the encoder cache during the dummy prefill) and multimodal/budget.py";
constexpr const char* kSourceContext = "CUDA context and kernels (FORMULAS.md §5: 0.3–1.3 GiB)";
constexpr const char* kSourceNccl =
    "NCCL communicator buffers (FORMULAS.md §5; vLLM adds custom all-reduce IPC buffers)";
constexpr const char* kSourceVllmBudget =
    "vLLM v1/worker/gpu_worker.py determine_available_memory: requested = total × "
    "gpu_memory_utilization; KV = requested − weights − activation peak − non-torch";
constexpr const char* kSourceSglangBudget =
    "SGLang model_executor/model_runner.py profile_max_num_token: KV pool = free memory at start "
    "× mem_fraction_static − weights";

constexpr std::array<const char*, 5> kClassRowNames = {"attention weights", "MLP weights",
                                                       "expert weights", "embedding", "LM head"};

// ---------------------------------------------------------------------------------------------

Wide act_bytes(const InferenceScenario& s) { return bits_of(s.weights.base) / 8; }

// Widest per-token intermediate of one layer stage, in activation elements, on one GPU.
Wide attention_width(const InferenceScenario& s) {
  const ModelConfig& m = s.model;
  const Wide heads = m.num_heads / s.tp;
  if (m.attention == AttentionKind::kMla) {
    const MlaConfig& mla = m.mla;
    return heads * (mla.qk_nope_head_dim + mla.qk_rope_head_dim) +  // q
           (mla.kv_lora_rank + mla.qk_rope_head_dim) +              // latent
           heads * (mla.qk_nope_head_dim + mla.v_head_dim) +        // kv_b expansion (prefill)
           heads * mla.v_head_dim;                                  // output
  }
  const Wide kv = kv_heads_per_gpu(m, s.tp);
  return (heads + 2 * kv) * m.head_dim + heads * m.head_dim;
}

Wide mlp_width(const ModelConfig& m, Wide ffn, Wide tp) {
  return (m.mlp == MlpKind::kGated ? 3 : 2) * ceil_div(ffn, tp);
}

struct ForwardPeak {
  Wide bytes = 0;
  std::string formula;
};

ForwardPeak forward_peak(const InferenceScenario& s, const ServingRank& rank, bool explain) {
  const ModelConfig& m = s.model;
  const Wide tokens = s.max_num_batched_tokens;
  bool any_dense = false, any_moe = false;
  for (int64_t id : rank.layers) {
    if (!m.has_mlp(static_cast<size_t>(id))) continue;
    (m.is_moe() && m.moe_layers[id] ? any_moe : any_dense) = true;
  }
  Wide widest = attention_width(s);
  std::string widest_name = "attention";
  // Mamba-2 / DeltaNet layers: their in_proj output per token, split over tp.
  for (int64_t id : rank.layers) {
    const LayerMixer mixer = m.mixer(static_cast<size_t>(id));
    Wide width = 0;
    if (mixer == LayerMixer::kMamba2 || (m.parallel_mamba && mixer == LayerMixer::kAttention))
      width = ceil_div(m.mamba.dt_rank > 0  // Jamba's Mamba-1 in_proj: x and z only
                           ? 2 * m.mamba.d_inner()
                           : 2 * m.mamba.d_inner() + 2 * m.mamba.n_groups * m.mamba.state_size +
                                 m.mamba.num_heads,
                       s.tp);
    if (mixer == LayerMixer::kGatedDeltaNet)
      width = ceil_div(
          2 * m.deltanet.key_dim() + 2 * m.deltanet.value_dim() + 2 * m.deltanet.num_v_heads, s.tp);
    if (width > widest) {
      widest = width;
      widest_name = mixer == LayerMixer::kGatedDeltaNet ? "DeltaNet in_proj"
                    : m.mamba.dt_rank > 0               ? "Mamba-1 in_proj"
                                                        : "Mamba-2 in_proj";
    }
  }
  if (any_dense && mlp_width(m, m.ffn, s.tp) > widest) {
    widest = mlp_width(m, m.ffn, s.tp);
    widest_name = "MLP";
  }
  Wide router = 0;
  if (any_moe) {
    // Fused MoE caches for every routed copy of a token (gate|up, activation, down output),
    // assuming balanced routing; the shared experts run beside them; fp32 router logits.
    const Wide expert_split = std::max(s.tp, s.ep);
    const Wide copies_num = m.moe.top_k * (s.ep > 1 ? s.dp : 1);
    const Wide copies_den = s.ep > 1 ? s.ep : 1;
    const Wide expert_tp = expert_split / copies_den;
    const Wide per_copy = mlp_width(m, m.moe.expert_ffn, expert_tp) + m.hidden;
    const Wide moe = ceil_div(copies_num * per_copy, copies_den) +
                     mlp_width(m, Wide{m.moe.shared_experts} * m.moe.shared_expert_ffn, s.tp);
    router = Wide{m.moe.num_experts} * 4;
    if (moe > widest) {
      widest = moe;
      widest_name = "MoE";
    }
  }
  ForwardPeak f;
  f.bytes = tokens * ((2 * m.hidden + widest) * act_bytes(s) + router);
  if (explain)
    f.formula = fmt::format(
        "{} tokens × ((2·{} residual + {} {}) × {} B{})", group_digits(tokens), m.hidden,
        group_digits(widest), widest_name, static_cast<int64_t>(act_bytes(s)),
        router > 0 ? fmt::format(" + {} B fp32 router logits", static_cast<int64_t>(router)) : "");
  return f;
}

Term activation_peak(const InferenceScenario& s, const ServingRank& rank, bool explain) {
  const ForwardPeak forward = forward_peak(s, rank, explain);
  Term t{forward.bytes, explain ? "prefill chunk: " + forward.formula : ""};
  if (!rank.last) return t;
  const Wide logits = Wide{s.max_num_seqs} * s.model.vocab;
  const Wide hidden = Wide{s.max_num_batched_tokens} * s.model.hidden * act_bytes(s);
  const Wide sampler =
      static_cast<Wide>(std::floor(static_cast<double>(logits) * s.sampler_bytes_per_logit)) +
      hidden;
  if (explain)
    t.formula = fmt::format(
        "max(prefill chunk: {} = {}; sampler: {} seqs × {} vocab × {} B/logit + hidden {} × {} × "
        "{} B = {})",
        forward.formula, short_bytes(forward.bytes), s.max_num_seqs, group_digits(s.model.vocab),
        s.sampler_bytes_per_logit, group_digits(s.max_num_batched_tokens), s.model.hidden,
        static_cast<int64_t>(act_bytes(s)), short_bytes(sampler));
  t.bytes = std::max(forward.bytes, sampler);
  return t;
}

int64_t nccl_groups(const InferenceScenario& s, std::string* names) {
  const std::pair<const char*, bool> dims[] = {
      {"tp", s.tp > 1}, {"pp", s.pp > 1}, {"ep", s.ep > 1 && s.ep > s.tp}};
  int64_t count = 0;
  for (const auto& [name, used] : dims) {
    if (!used) continue;
    ++count;
    if (names) *names += (names->empty() ? "" : ", ") + std::string(name);
  }
  return count;
}

// Rows of one pipeline rank, summed up as they are added.
class RankRows {
 public:
  explicit RankRows(bool explain) : explain_(explain) {}
  void add(std::string component, Wide bytes, CountsToward toward, std::string formula,
           const std::string& source) {
    if (bytes > kMaxBytes || total_ + bytes > kMaxBytes) overflow_ = true;
    if (overflow_ || bytes <= 0) return;
    total_ += bytes;
    rows_.push_back(Row{std::move(component), static_cast<int64_t>(bytes), toward,
                        explain_ ? std::move(formula) : "", explain_ ? source : ""});
  }
  std::vector<Row>& rows() { return rows_; }
  bool overflow() const { return overflow_; }
  bool explain() const { return explain_; }

 private:
  bool explain_;
  std::vector<Row> rows_;
  Wide total_ = 0;
  bool overflow_ = false;
};

std::string class_label(const ModuleFormats& f, ModuleClass c) {
  return fmt::format("{} ({})", kClassRowNames[static_cast<size_t>(c)],
                     weight_format_name(f[c].format));
}

// layer_rows: the rows of the decoder layers' weights (what --cpu-offload-gb may move).
Wide add_weight_rows(const InferenceScenario& s, const GpuWeights& g, RankRows& out,
                     std::vector<size_t>& layer_rows) {
  Wide total = 0;
  const bool explain = out.explain();
  for (size_t i = 0; i < g.by_class.size(); ++i) {
    const LinearShape& shape = g.by_class[i];
    if (shape.params == 0) continue;
    const ModuleClass c = static_cast<ModuleClass>(i);
    const QuantBytes q = quantized_bytes(s.weights[c], shape, explain);
    if (c == ModuleClass::kAttention || c == ModuleClass::kMlp || c == ModuleClass::kExperts)
      layer_rows.push_back(out.rows().size());
    out.add(class_label(s.weights, c), q.bytes, CountsToward::kAllocated, q.formula, q.source);
    total += q.bytes;
  }
  const Wide base = bits_of(s.weights.base) / 8;
  const std::string base_name(dtype_name(s.weights.base));
  if (g.other > 0) layer_rows.push_back(out.rows().size());
  out.add("norms, biases, routers", g.other * base, CountsToward::kAllocated,
          explain ? fmt::format("{} × {} B ({}), never quantised", group_digits(g.other), base,
                                base_name)
                  : "",
          "kept in the model dtype by every quantisation method (modules_to_not_convert)");
  out.add("vision tower + projector", g.vision * base, CountsToward::kAllocated,
          explain
              ? fmt::format("{} params / tp × {} B ({})", group_digits(g.vision), base, base_name)
              : "",
          "vLLM loads the vision encoder beside the language model, in the model dtype");
  out.add("rotary cos/sin cache", g.rotary * base, CountsToward::kAllocated,
          explain && g.rotary > 0
              ? fmt::format("{} positions × {} rotary dims × {} B",
                            group_digits(s.model.max_position_embeddings),
                            static_cast<int64_t>(g.rotary / s.model.max_position_embeddings), base)
              : "",
          kSourceRotary);
  return total + (g.other + g.rotary + g.vision) * base;
}

struct RankResult {
  InferenceRank summary;
  std::vector<Row> rows;
  std::optional<Capacity> capacity;
  std::vector<KvTier> tiers;
  Wide kv_cache = 0;
  Wide offloadable = 0;  // the decoder layers' weights (the bound of --cpu-offload-gb)
  bool overflow = false;
};

void add_overhead_rows(const InferenceScenario& s, RankRows& out) {
  const InferenceOverheads& o = s.overheads;
  if (s.cuda_graphs)
    out.add("CUDA graphs", o.cuda_graph_bytes, CountsToward::kReserved,
            "configurable (--cuda-graph-gib; --no-cuda-graphs = enforce eager)", kSourceGraphs);
  out.add("non-torch allocations", o.non_torch_bytes, CountsToward::kDevice,
          "configurable (--non-torch-gib)", kSourceNonTorch);
  out.add("CUDA context", o.cuda_context_bytes, CountsToward::kDevice,
          "configurable (--cuda-context-gib)", kSourceContext);
  std::string names;
  const int64_t groups = nccl_groups(s, &names);
  out.add("NCCL buffers", Wide{groups} * o.nccl_bytes_per_group, CountsToward::kDevice,
          out.explain() && groups > 0 ? fmt::format("{} groups ({}) × {}", groups, names,
                                                    short_bytes(o.nccl_bytes_per_group))
                                      : "",
          kSourceNccl);
}

// Blocks, tokens and sequences the KV pool holds. A rank of only Mamba / DeltaNet layers has no
// KV pages: its sequences are bounded by their recurrent state alone.
void fill_pool(Capacity& c, const InferenceScenario& s, const InferenceRank& r) {
  const Wide page = Wide{s.block_size} * r.kv_bytes_per_token;
  c.num_blocks = page > 0 ? static_cast<int64_t>(c.kv_budget_bytes / page) : 0;
  c.max_kv_tokens = c.num_blocks * s.block_size;
  const Wide pool = page > 0 ? Wide{c.num_blocks} * page : Wide{c.kv_budget_bytes};
  c.max_sequences =
      r.kv_bytes_per_sequence > 0 ? static_cast<int64_t>(pool / r.kv_bytes_per_sequence) : 0;
}

Capacity vllm_capacity(const InferenceScenario& s, const InferenceRank& r, bool explain) {
  Capacity c;
  c.engine = ServingEngine::kVllm;
  c.fraction = *s.gpu_memory_utilization;
  c.total_bytes = s.gpu_total_bytes;
  c.requested_bytes =
      static_cast<int64_t>(std::floor(c.fraction * static_cast<double>(c.total_bytes)));
  const InferenceOverheads& o = s.overheads;
  const Wide nccl = Wide{nccl_groups(s, nullptr)} * o.nccl_bytes_per_group;
  const Wide graphs = s.cuda_graphs && s.cuda_graph_in_budget ? o.cuda_graph_bytes : 0;
  const Wide fixed = Wide{r.weights_bytes} + r.activation_bytes + o.non_torch_bytes + nccl + graphs;
  const Wide budget = Wide{c.requested_bytes} - fixed;
  c.kv_budget_bytes = static_cast<int64_t>(std::max<Wide>(budget, 0));
  c.shortfall_bytes = static_cast<int64_t>(std::max<Wide>(-budget, 0));
  fill_pool(c, s, r);
  if (explain) {
    c.formula = fmt::format(
        "{:.2f} × {} = {} requested − weights {} − activation peak {} − non-torch {}{}{} = {} "
        "→ {} blocks of {} tokens × {} B",
        c.fraction, short_bytes(c.total_bytes), short_bytes(c.requested_bytes),
        short_bytes(r.weights_bytes), short_bytes(r.activation_bytes),
        short_bytes(o.non_torch_bytes), nccl > 0 ? " − NCCL " + short_bytes(nccl) : "",
        graphs > 0 ? " − CUDA graphs " + short_bytes(graphs) : "",
        budget < 0 ? "−" + short_bytes(-budget) : short_bytes(budget), group_digits(c.num_blocks),
        s.block_size, group_digits(r.kv_bytes_per_token));
    c.source = kSourceVllmBudget;
  }
  return c;
}

Capacity sglang_capacity(const InferenceScenario& s, const InferenceRank& r, bool explain) {
  Capacity c;
  c.engine = ServingEngine::kSglang;
  c.fraction = *s.mem_fraction_static;
  c.total_bytes = s.gpu_total_bytes;
  const InferenceOverheads& o = s.overheads;
  const Wide nccl = Wide{nccl_groups(s, nullptr)} * o.nccl_bytes_per_group;
  const Wide free_at_start = std::max<Wide>(0, Wide{c.total_bytes} - o.cuda_context_bytes - nccl);
  c.requested_bytes =
      static_cast<int64_t>(std::floor(c.fraction * static_cast<double>(free_at_start)));
  const Wide budget = Wide{c.requested_bytes} - r.weights_bytes;
  c.kv_budget_bytes = static_cast<int64_t>(std::max<Wide>(budget, 0));
  c.shortfall_bytes = static_cast<int64_t>(std::max<Wide>(-budget, 0));
  fill_pool(c, s, r);
  if (explain) {
    c.formula = fmt::format(
        "{:.2f} × free at start {} (total {} − CUDA context {}{}) = {} − weights {} = {} → {} "
        "tokens × {} B",
        c.fraction, short_bytes(free_at_start), short_bytes(c.total_bytes),
        short_bytes(o.cuda_context_bytes), nccl > 0 ? " − NCCL " + short_bytes(nccl) : "",
        short_bytes(c.requested_bytes), short_bytes(r.weights_bytes),
        budget < 0 ? "−" + short_bytes(-budget) : short_bytes(budget),
        group_digits(c.max_kv_tokens), group_digits(r.kv_bytes_per_token));
    c.source = kSourceSglangBudget;
  }
  return c;
}

RankResult estimate_rank(const InferenceScenario& s, const ParamCounts& counts,
                         const ServingRank& rank, int64_t index, int64_t context, bool explain) {
  RankResult result;
  RankRows out(explain);
  const GpuWeights g = gpu_weights(s, counts, rank);
  std::vector<size_t> layer_rows;
  const Wide all_weights = add_weight_rows(s, g, out, layer_rows);
  const WeightOffload w = offload_layer_weights(s, out.rows(), layer_rows,
                                                static_cast<int64_t>(rank.layers.size()), explain);
  const Wide weights = all_weights - w.offloaded;
  result.offloadable = w.offloadable;
  for (Row& row : weight_offload_rows(s, w, explain))
    out.add(std::move(row.component), row.bytes, row.counts_toward, std::move(row.formula),
            row.source);
  const KvLayout kv = kv_layout(s, rank, context, explain);
  // mllama: each sequence also caches its images' cross-attention keys and values.
  const Term cross = cross_attention_kv_per_sequence(s, rank, explain);
  result.kv_cache = (kv.per_sequence + kv.state_per_sequence + cross.bytes) * s.batch;
  out.add("KV cache", result.kv_cache, CountsToward::kAllocated,
          explain ? fmt::format("{} seq × {} = {} × {}; per token: {} = {} B", s.batch,
                                kv.sequence_formula, s.batch, short_bytes(kv.per_sequence),
                                kv.token_formula, group_digits(kv.per_token))
                  : "",
          kSourceKv);
  out.add("SSM / linear-attention state", kv.state_per_sequence * s.batch, CountsToward::kAllocated,
          explain ? fmt::format("{} seq × ({}) = {} × {}", s.batch, kv.state_formula, s.batch,
                                short_bytes(kv.state_per_sequence))
                  : "",
          kSourceRecurrentState);
  out.add("cross-attention KV (image tokens)", cross.bytes * s.batch, CountsToward::kAllocated,
          explain ? fmt::format("{} seq × ({})", s.batch, cross.formula) : "",
          kSourceCrossAttentionKv);
  Term act = activation_peak(s, rank, explain);
  out.add("activation peak", act.bytes, CountsToward::kAllocated, std::move(act.formula),
          kSourceActivation);
  Term vision = vision_profile(s, rank, act.bytes, explain);
  out.add("vision encoder (profile run)", vision.bytes, CountsToward::kAllocated,
          std::move(vision.formula), kSourceVisionProfile);
  act.bytes += vision.bytes;
  add_overhead_rows(s, out);
  result.overflow = out.overflow() || kv.per_sequence > kMaxBytes;
  if (result.overflow) return result;
  InferenceRank& r = result.summary;
  r.rank = index;
  r.layers = static_cast<int64_t>(rank.layers.size());
  r.weights_bytes = static_cast<int64_t>(weights);
  r.kv_bytes_per_token = static_cast<int64_t>(kv.per_token);
  // The recurrent state shares the KV pool (vLLM's hybrid KV cache manager), so a sequence's
  // share of the pool includes it.
  r.kv_bytes_per_sequence =
      static_cast<int64_t>(kv.per_sequence + kv.state_per_sequence + cross.bytes);
  r.activation_bytes = static_cast<int64_t>(act.bytes);
  for (const Row& row : out.rows())
    (on_gpu(row.counts_toward) ? r.device_bytes : r.host_bytes) += row.bytes;
  result.rows = std::move(out.rows());
  if (s.gpu_memory_utilization)
    result.capacity = vllm_capacity(s, r, explain);
  else if (s.mem_fraction_static)
    result.capacity = sglang_capacity(s, r, explain);
  if (result.capacity) r.max_kv_tokens = result.capacity->max_kv_tokens;
  const size_t before = result.rows.size();
  add_kv_tiers(s, r, result.capacity, result.kv_cache, context, explain, result.rows, result.tiers);
  for (size_t i = before; i < result.rows.size(); ++i) r.host_bytes += result.rows[i].bytes;
  return result;
}

void total_up(InferenceEstimate& e) {
  for (const Row& r : e.rows) {
    if (!on_gpu(r.counts_toward)) {
      e.host_bytes += r.bytes;
      continue;
    }
    if (r.counts_toward == CountsToward::kAllocated) e.allocated_bytes += r.bytes;
    if (r.counts_toward != CountsToward::kDevice) e.reserved_bytes += r.bytes;
    e.device_bytes += r.bytes;
  }
}

void add_warnings(const InferenceScenario& s, InferenceEstimate& e) {
  const ModelConfig& m = s.model;
  if (e.context > m.max_position_embeddings && m.max_position_embeddings > 0)
    e.warnings.push_back(fmt::format(
        "context {} exceeds the model's max_position_embeddings {}: vLLM refuses it unless "
        "VLLM_ALLOW_LONG_MAX_MODEL_LEN is set",
        e.context, m.max_position_embeddings));
  if (s.engine == ServingEngine::kVllm && s.batch > s.max_num_seqs)
    e.warnings.push_back(fmt::format(
        "batch {} exceeds max_num_seqs {}: vLLM runs at most max_num_seqs sequences at once",
        s.batch, s.max_num_seqs));
  if (m.mtp_layers > 0)
    e.warnings.push_back(
        "multi-token-prediction modules are not loaded (vLLM loads them only for speculative "
        "decoding)");
  if (!e.capacity) return;
  const Capacity& c = *e.capacity;
  if (c.shortfall_bytes > 0)
    e.warnings.push_back(fmt::format(
        "no memory left for the KV cache: the fixed costs exceed the requested {} by {} "
        "(vLLM: 'No available memory for the cache blocks')",
        short_bytes(c.requested_bytes), short_bytes(c.shortfall_bytes)));
  else if (c.max_sequences < s.batch)
    e.warnings.push_back(
        fmt::format("the KV pool holds {} sequences of {} tokens, fewer than batch {}",
                    c.max_sequences, e.context, s.batch));
  if (c.engine == ServingEngine::kSglang) {
    const Wide reserve = Wide{c.total_bytes} - s.overheads.cuda_context_bytes - c.requested_bytes;
    const Wide needed =
        Wide{e.activation_bytes} + (s.cuda_graphs ? s.overheads.cuda_graph_bytes : 0);
    if (needed > reserve)
      e.warnings.push_back(fmt::format(
          "SGLang leaves {} outside its static pool for activations and CUDA graphs, but the "
          "predicted peak needs {}: lower mem_fraction_static",
          short_bytes(reserve), short_bytes(needed)));
  }
}

}  // namespace

Result<InferenceEstimate> estimate_inference(const InferenceScenario& s,
                                             const EstimateOptions& options) {
  if (auto error = validate_inference(s)) return *error;
  InferenceEstimate e;
  e.parameters = count_parameters(s.model);
  e.context = resolved_context(s);
  const std::vector<ServingRank> ranks = serving_ranks(s.model.num_layers, s.pp);
  std::vector<RankResult> results;
  Wide largest_offloadable = 0;
  for (size_t i = 0; i < ranks.size(); ++i) {
    RankResult r = estimate_rank(s, e.parameters, ranks[i], static_cast<int64_t>(i), e.context,
                                 options.explain);
    if (r.overflow)
      return Error{"context", to_string(e.context), "sizes whose per-GPU memory stays below 4 EiB",
                   "the memory of this scenario overflows 64-bit byte counts (check context, "
                   "batch and the model sizes)"};
    largest_offloadable = std::max(largest_offloadable, r.offloadable);
    results.push_back(std::move(r));
  }
  if (auto error = check_offload_fits(s, largest_offloadable)) return *error;
  // The binding rank: fewest KV tokens when a fraction is given, else the most device memory.
  size_t bind = 0;
  for (size_t i = 1; i < results.size(); ++i) {
    const InferenceRank& a = results[i].summary;
    const InferenceRank& b = results[bind].summary;
    const bool worse =
        results[i].capacity ? a.max_kv_tokens < b.max_kv_tokens : a.device_bytes > b.device_bytes;
    if (worse) bind = i;
  }
  for (const RankResult& r : results) e.ranks.push_back(r.summary);
  RankResult& chosen = results[bind];
  e.binding_rank = static_cast<int64_t>(bind);
  e.rows = std::move(chosen.rows);
  e.weights_bytes = chosen.summary.weights_bytes;
  e.kv_bytes_per_token = chosen.summary.kv_bytes_per_token;
  e.kv_bytes_per_sequence = chosen.summary.kv_bytes_per_sequence;
  e.kv_cache_bytes = static_cast<int64_t>(chosen.kv_cache);
  e.activation_bytes = chosen.summary.activation_bytes;
  e.capacity = std::move(chosen.capacity);
  e.kv_tiers = std::move(chosen.tiers);
  total_up(e);
  add_warnings(s, e);
  add_offload_warnings(s, e);
  if (const std::string images = serving_images_note(s); !images.empty())
    e.warnings.push_back(images);
  return e;
}

}  // namespace vramplan
