// Fine-tuning: frozen weights, LoRA adapters and QLoRA's NF4 base, as rows of a training
// estimate.
#include "vramplan/training/finetune.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "base/text.h"
#include "training/activations.h"
#include "training/finetune/finetune_rows.h"
#include "training/finetune/peft_experts.h"
#include "vramplan/model/quantization.h"

namespace vramplan {
namespace {

constexpr const char* kSourceLora =
    "Hu et al. 2021, LoRA (arXiv 2106.09685): W + B·A with A r×in, B out×r; PEFT LoraConfig "
    "(target_modules); frozen weights keep no gradient or optimizer state";
constexpr const char* kSourceQlora =
    "Dettmers et al. 2023, QLoRA (arXiv 2305.14314): NF4 base with double quantisation, 16-bit "
    "adapters, paged 8-bit AdamW (bitsandbytes)";
constexpr const char* kSourceFrozen =
    "frozen parameters (requires_grad = False): weights only, no gradient, master copy or "
    "optimizer state";
constexpr const char* kSourceDequant =
    "bitsandbytes Linear4bit: the NF4 weight is dequantised to the compute dtype for each matmul";
constexpr const char* kSourceTorchaoDequant =
    "torchao NF4Tensor.get_original_weight (quantization/quantize_/workflows/nf4/nf4_tensor.py), "
    "run by torchtune's linear_nf4 in forward and backward: eager ops whose locals live until it "
    "returns";
constexpr const char* kSourceStackedExperts =
    "PEFT 0.21 utils/transformers_weight_conversion.py _convert_peft_config_moe (w1/w3 or "
    "gate_proj/up_proj -> experts.gate_up_proj with rank 2r, w2/down_proj -> experts.down_proj, "
    "all-linear adds the router gate) and tuners/lora/layer.py ParamWrapper (lora_A in × r·E, "
    "lora_B r·E × out; _activate_lora folds B·A into the stacked weight with one baddbmm, which "
    "the experts' matmuls keep for backward)";
constexpr const char* kSourceAdapterActivations =
    "LoRA keeps x·A (r values per token) for the gradient of B, per targeted projection; PEFT "
    "tuners/lora/layer.py Linear.forward: _cast_input_dtype(x, lora_A.weight.dtype) gives each "
    "adapter its own copy of the input in the adapter dtype, which lora_A keeps "
    "(docs/frameworks.md)";

constexpr std::array<std::pair<const char*, uint32_t>, 11> kTargetNames = {{{"q", kLoraQ},
                                                                            {"k", kLoraK},
                                                                            {"v", kLoraV},
                                                                            {"o", kLoraO},
                                                                            {"gate", kLoraGate},
                                                                            {"up", kLoraUp},
                                                                            {"down", kLoraDown},
                                                                            {"q_a", kLoraQA},
                                                                            {"q_b", kLoraQB},
                                                                            {"kv_a", kLoraKVA},
                                                                            {"kv_b", kLoraKVB}}};
constexpr uint32_t kAttention = kLoraAttention;
constexpr uint32_t kMlp = kLoraGate | kLoraUp | kLoraDown;

enum class Split { kColumn, kRow, kReplicated };

// One linear layer an adapter can sit beside: in → out features, how TP splits it.
struct Projection {
  uint32_t target;  // the LoraTarget bits that select it
  Wide in, out;
  Split split;
  bool expert = false;   // one per routed expert
  bool stacked = false;  // a ParamWrapper over all experts' stacked weight (peft_experts.h)
  Wide rank_factor = 1;  // PEFT doubles the rank of the fused gate_up_proj
  bool router = false;   // the MoE router, which only all-linear selects
};

bool selected(const Projection& p, uint32_t targets) {
  return p.router ? targets_all_linear(targets) : (p.target & targets) != 0;
}

// Checkpoints that store Q|K|V as one matrix (Phi-3's qkv_proj, GPT-2's c_attn) and Phi-3's
// gate|up as one (gate_up_proj): PEFT attaches one adapter to each fused module, so one lora_A
// over the input, one lora_B over the fused output, and one cast of the input
// (transformers modeling_phi3.py / modeling_gpt2.py; peft tuners/lora/layer.py).
bool fused_qkv(const ModelConfig& m) { return m.model_type == "phi3" || m.model_type == "gpt2"; }
bool fused_gate_up(const ModelConfig& m) { return m.model_type == "phi3"; }

void add_mlp(const ModelConfig& m, Wide ffn, bool expert, std::vector<Projection>& out) {
  const Wide h = m.hidden;
  if (m.mlp == MlpKind::kGated && fused_gate_up(m)) {
    out.push_back({kLoraGate | kLoraUp, h, 2 * ffn, Split::kColumn, expert});
    out.push_back({kLoraDown, ffn, h, Split::kRow, expert});
    return;
  }
  if (m.mlp == MlpKind::kGated) out.push_back({kLoraGate, h, ffn, Split::kColumn, expert});
  out.push_back({kLoraUp, h, ffn, Split::kColumn, expert});
  out.push_back({kLoraDown, ffn, h, Split::kRow, expert});
}

// transformers 5 + PEFT: the router and the two stacked expert weights (peft_experts.h).
void add_stacked_experts(const ModelConfig& m, std::vector<Projection>& out) {
  const Wide h = m.hidden, f = m.moe.expert_ffn;
  // The router's wrapper also folds B·A into its (E × h) weight: nothing kept per token.
  out.push_back(
      {kLoraGate | kLoraUp, h, m.moe.num_experts, Split::kReplicated, false, true, 1, true});
  out.push_back({kLoraGate | kLoraUp, h, 2 * f, Split::kColumn, true, true, 2});
  out.push_back({kLoraDown, f, h, Split::kRow, true, true, 1});
}

std::vector<Projection> projections(const ModelConfig& m, bool moe_layer, ExpertAdapters experts) {
  std::vector<Projection> p;
  const Wide h = m.hidden, a = m.num_heads;
  if (m.attention == AttentionKind::kMla) {
    const MlaConfig& mla = m.mla;
    const Wide qk = mla.qk_nope_head_dim + mla.qk_rope_head_dim;
    // PEFT matches modules by name (lora_targets_for_model): q selects q_proj, k and v nothing.
    if (mla.q_lora_rank > 0) {
      p.push_back({kLoraQA, h, mla.q_lora_rank, Split::kReplicated});   // q_a_proj
      p.push_back({kLoraQB, mla.q_lora_rank, a * qk, Split::kColumn});  // q_b_proj
    } else {
      p.push_back({kLoraQ, h, a * qk, Split::kColumn});  // q_proj
    }
    const Wide latent = mla.kv_lora_rank + mla.qk_rope_head_dim;
    p.push_back({kLoraKVA, h, latent, Split::kReplicated});  // kv_a_proj_with_mqa
    p.push_back({kLoraKVB, mla.kv_lora_rank, a * (mla.qk_nope_head_dim + mla.v_head_dim),
                 Split::kColumn});                              // kv_b_proj
    p.push_back({kLoraO, a * mla.v_head_dim, h, Split::kRow});  // o_proj
  } else if (fused_qkv(m)) {
    const Wide d = m.head_dim, g = m.num_kv_heads;
    p.push_back({kLoraQ | kLoraK | kLoraV, h, (a + 2 * g) * d, Split::kColumn});
    p.push_back({kLoraO, a * d, h, Split::kRow});
  } else {
    const Wide d = m.head_dim, g = m.num_kv_heads;
    p.push_back({kLoraQ, h, a * d, Split::kColumn});
    p.push_back({kLoraK, h, g * d, Split::kColumn});
    p.push_back({kLoraV, h, g * d, Split::kColumn});
    p.push_back({kLoraO, a * d, h, Split::kRow});
  }
  if (!moe_layer) {
    add_mlp(m, m.ffn, false, p);
    return p;
  }
  if (m.moe.shared_experts > 0)
    add_mlp(m, Wide{m.moe.shared_experts} * m.moe.shared_expert_ffn, false, p);
  if (experts == ExpertAdapters::kPerExpert) add_mlp(m, m.moe.expert_ffn, true, p);
  if (experts == ExpertAdapters::kStacked) add_stacked_experts(m, p);
  return p;
}

bool is_moe_layer(const ModelConfig& m, int64_t id) {
  return m.is_moe() && id < static_cast<int64_t>(m.moe_layers.size()) && m.moe_layers[id];
}

// Adapter parameters of one layer on one GPU: column-parallel layers split B (out × r), row-
// parallel ones A (r × in); routed experts are spread over `expert_split` ranks.
Wide layer_adapter_params(const ModelConfig& m, bool moe, const Finetune& f, ExpertAdapters experts,
                          Wide tp, Wide expert_split) {
  Wide total = 0;
  for (const Projection& p : projections(m, moe, experts)) {
    if (!selected(p, f.lora_targets)) continue;
    const Wide r = Wide{f.lora_rank} * p.rank_factor;
    Wide one = 0;
    switch (p.split) {
      case Split::kColumn:
        one = r * p.in + ceil_div(r * p.out, tp);
        break;
      case Split::kRow:
        one = ceil_div(r * p.in, tp) + r * p.out;
        break;
      case Split::kReplicated:
        one = r * (p.in + p.out);
        break;
    }
    total += p.expert ? ceil_div(one * m.moe.num_experts, expert_split) : one;
  }
  return total;
}

// Targeted projections a token passes through in one layer (a token visits top_k experts). A
// stacked ParamWrapper keeps no per-token intermediate: its adapters enter through the weight.
Wide targeted_per_token(const ModelConfig& m, bool moe, ExpertAdapters experts, uint32_t targets) {
  Wide count = 0;
  for (const Projection& p : projections(m, moe, experts))
    if (selected(p, targets) && !p.stacked) count += p.expert ? m.moe.top_k : 1;
  return count;
}

ExpertAdapters expert_adapters_of(const Scenario& s) {
  return expert_adapters(s.model, s.conventions.model_code);
}

bool uses_lora(const Finetune& f) { return f.method != FinetuneMethod::kNone; }

int64_t first_trained_layer(const Scenario& s) { return s.finetune.freeze_first_layers; }

// Parameters of the rank's frozen parts for method none: the first layers and the embedding.
GpuParams frozen_params(const Scenario& s, const ParamCounts& counts, const RankLayout& rank) {
  RankLayout frozen;
  for (int64_t id : rank.layers)
    if (id < first_trained_layer(s)) frozen.layers.push_back(id);
  frozen.has_embedding = rank.has_embedding && s.finetune.freeze_embeddings;
  return gpu_params(s, counts, frozen);
}

struct Shares {
  Wide params = 0;
  std::string text;
};

// `params` split over `group` ranks when `sharded`.
Shares shard(Wide params, const Sharding& sh, bool sharded, bool explain) {
  Shares out;
  const Wide group = sharded ? sh.dense_group : 1;
  out.params = ceil_div(params, group);
  if (explain)
    out.text = group > 1 ? fmt::format("{} / {}", group_digits(params), static_cast<int64_t>(group))
                         : group_digits(params);
  return out;
}

Term per_param(const Shares& p, Wide bits, const std::string& what, bool explain) {
  Term t{ceil_div(p.params * bits, 8), ""};
  if (explain)
    t.formula =
        fmt::format("{} B/param ({}) × {} params", static_cast<double>(bits) / 8, what, p.text);
  return t;
}

std::string grad_what(const Training& tr) {
  return tr.fp32_grad_accumulation ? "fp32 accumulation buffer"
                                   : std::string(dtype_name(tr.grad_dtype));
}

// Gradients, master copies and optimizer state of `trainable` parameters stored in `dtype`.
void add_training_states(const Scenario& s, Wide trainable, Wide non_matrix, Wide vectors_all,
                         DType dtype, const std::string& prefix, const Sharding& sh, bool explain,
                         const char* source, std::vector<FinetuneRow>& rows) {
  const Training& tr = s.training;
  rows.push_back({prefix + "gradients",
                  per_param(shard(trainable, sh, sh.grads, explain), bits_of(gradient_dtype(tr)),
                            grad_what(tr), explain),
                  CountsToward::kAllocated, source});
  const Shares opt = shard(trainable, sh, sh.optimizer, explain);
  if (tr.master_weights && dtype != DType::kFp32)
    rows.push_back({prefix + "master weights", per_param(opt, 32, "fp32 copy", explain),
                    CountsToward::kAllocated, source});
  const Wide group = sh.optimizer ? sh.dense_group : 1;
  Term state = optimizer_state_bytes(tr, opt.params, ceil_div(non_matrix, group),
                                     ceil_div(vectors_all, group), s.model.hidden, explain);
  if (explain) state.formula += ", P = " + opt.text;
  rows.push_back({prefix + "optimizer states", std::move(state), CountsToward::kAllocated, source});
}

void full_finetune_rows(const Scenario& s, const ParamCounts& counts, const RankLayout& rank,
                        const Sharding& sh, bool explain, std::vector<FinetuneRow>& rows) {
  const Training& tr = s.training;
  const GpuParams all = gpu_params(s, counts, rank);
  const GpuParams frozen = frozen_params(s, counts, rank);
  const Wide frozen_total = frozen.dense + frozen.expert;
  const Wide trainable = all.dense + all.expert - frozen_total;
  const std::string dtype(dtype_name(tr.param_dtype));
  rows.push_back({"weights",
                  per_param(shard(trainable, sh, sh.params, explain), bits_of(tr.param_dtype),
                            dtype + ", trainable", explain),
                  CountsToward::kAllocated, kSourceFrozen});
  rows.push_back({"frozen weights",
                  per_param(shard(frozen_total, sh, sh.params, explain), bits_of(tr.param_dtype),
                            dtype, explain),
                  CountsToward::kAllocated, kSourceFrozen});
  add_training_states(s, trainable, all.non_matrix - frozen.non_matrix,
                      all.vectors - frozen.vectors, tr.param_dtype, "", sh, explain, kSourceFrozen,
                      rows);
}

// The largest linear weight one GPU multiplies by: QLoRA dequantises one at a time.
Wide largest_linear(const Scenario& s) {
  const ModelConfig& m = s.model;
  const Wide tp = s.parallel.tp;
  Wide largest = ceil_div(Wide{m.hidden} * m.num_heads * m.head_dim, tp);
  largest = std::max(largest, ceil_div(Wide{m.hidden} * m.ffn, tp));
  if (m.is_moe())
    largest = std::max(largest, ceil_div(Wide{m.hidden} * m.moe.expert_ffn, s.parallel.etp));
  return largest;
}

void frozen_base_rows(const Scenario& s, const GpuParams& base, const Sharding& sh, bool explain,
                      std::vector<FinetuneRow>& rows) {
  const Training& tr = s.training;
  const std::string dtype(dtype_name(tr.param_dtype));
  if (s.finetune.method == FinetuneMethod::kLora) {
    rows.push_back({fmt::format("frozen base weights ({})", dtype),
                    per_param(shard(base.dense + base.expert, sh, sh.params, explain),
                              bits_of(tr.param_dtype), dtype, explain),
                    CountsToward::kAllocated, kSourceLora});
    return;
  }
  // QLoRA: linear layers in NF4 (double-quantised absmax); embeddings, head, norms in 16 bits.
  const Wide linears = base.dense + base.expert - base.non_matrix;
  const Shares nf4_share = shard(linears, sh, sh.params, explain);
  const QuantBytes nf4 = quantized_bytes(WeightQuant{WeightFormat::kNf4},
                                         {static_cast<int64_t>(nf4_share.params), 0, 0}, explain);
  rows.push_back({"frozen base weights (nf4)", Term{nf4.bytes, nf4.formula},
                  CountsToward::kAllocated, kSourceQlora});
  rows.push_back({fmt::format("embeddings, norms ({})", dtype),
                  per_param(shard(base.non_matrix, sh, sh.params, explain), bits_of(tr.param_dtype),
                            dtype, explain),
                  CountsToward::kAllocated, kSourceQlora});
  const Wide largest = largest_linear(s);
  const Wide out_bytes = bytes_of(1, tr.param_dtype);
  // torchao's NF4 (torchtune) dequantises in eager ops: both nibbles' int64 indices (4 + 4 B per
  // weight), the looked-up and the scaled values (2 + 2) and their torch.stack (2) are alive at
  // once; bitsandbytes' kernel writes the output only.
  const bool torchao = s.conventions.model_code == ModelCode::kTorchtune;
  Term dequant{largest * (torchao ? 8 + 3 * out_bytes : out_bytes), ""};
  if (explain)
    dequant.formula =
        torchao ? fmt::format(
                      "largest linear {} × (8 B int64 nibble indices + 3 × {} B looked-up, "
                      "scaled and stacked values), one at a time",
                      group_digits(largest), out_bytes)
                : fmt::format("largest linear {} × {} B, one at a time", group_digits(largest),
                              out_bytes);
  rows.push_back({kDequantizedWeightRow, std::move(dequant), CountsToward::kAllocated,
                  torchao ? kSourceTorchaoDequant : kSourceDequant});
}

Wide rank_adapter_params(const Scenario& s, const RankLayout& rank) {
  const Parallelism& par = s.parallel;
  const ExpertAdapters experts = expert_adapters_of(s);  // once, not per layer
  Wide total = 0;
  for (int64_t id : rank.layers)
    if (id >= first_trained_layer(s))
      total += layer_adapter_params(s.model, is_moe_layer(s.model, id), s.finetune, experts, par.tp,
                                    Wide{par.ep} * par.etp);
  return total;
}

void lora_rows(const Scenario& s, const ParamCounts& counts, const RankLayout& rank,
               const Sharding& sh, bool explain, std::vector<FinetuneRow>& rows) {
  const Finetune& f = s.finetune;
  frozen_base_rows(s, gpu_params(s, counts, rank), sh, explain, rows);
  const Wide adapters = rank_adapter_params(s, rank);
  const char* source = f.method == FinetuneMethod::kQlora ? kSourceQlora : kSourceLora;
  Term weights = per_param(shard(adapters, sh, sh.params, explain), bits_of(f.adapter_dtype),
                           std::string(dtype_name(f.adapter_dtype)), explain);
  if (explain)
    weights.formula +=
        fmt::format(" (r = {} on {})", f.lora_rank, lora_targets_text(f.lora_targets));
  rows.push_back({"adapter weights", std::move(weights), CountsToward::kAllocated, source});
  add_training_states(s, adapters, 0, 0, f.adapter_dtype, "adapter ", sh, explain, source, rows);
}

}  // namespace

Result<uint32_t> parse_lora_targets(std::string_view text) {
  const std::string all = to_lower(text);
  if (all == "attention") return kAttention;
  if (all == "mlp") return kMlp;
  if (all == "all-linear" || all == "all_linear" || all == "all") return kAttention | kMlp;
  uint32_t targets = 0;
  size_t start = 0;
  while (start <= all.size()) {
    size_t comma = all.find(',', start);
    if (comma == std::string::npos) comma = all.size();
    std::string name = all.substr(start, comma - start);
    name.erase(0, name.find_first_not_of(' '));
    name.erase(name.find_last_not_of(' ') + 1);
    if (name == "kv_a_proj_with_mqa") name = "kv_a";  // DeepSeek's MLA module name
    if (name.size() > 5 && name.compare(name.size() - 5, 5, "_proj") == 0)
      name.resize(name.size() - 5);
    // torchtune's module names (torchtune/modules/attention.py, feed_forward.py)
    if (name == "output") name = "o";
    if (name == "w1") name = "gate";
    if (name == "w2") name = "down";
    if (name == "w3") name = "up";
    bool known = false;
    for (const auto& [n, bit] : kTargetNames)
      if (name == n) {
        targets |= bit;
        known = true;
      }
    if (!known)
      return Error{"lora_targets", std::string(text),
                   "attention, mlp, all-linear, or a comma-separated list of q, k, v, o, gate, "
                   "up, down (MLA: q_a, q_b, kv_a, kv_b; the _proj module names and torchtune's "
                   "output_proj, w1, w2, w3 too)",
                   name.empty() ? "an empty name" : "unknown projection \"" + name + "\""};
    start = comma + 1;
  }
  return targets;
}

std::string lora_targets_text(uint32_t targets) {
  // Every projection, MLA's included: what all-linear selects, said as such.
  if ((targets & kLoraAllLinear) == kLoraAllLinear) return "all-linear";
  std::string out;
  for (const auto& [name, bit] : kTargetNames)
    if (targets & bit) out += (out.empty() ? "" : ",") + std::string(name);
  return out;
}

int64_t lora_parameters(const ModelConfig& model, const Finetune& finetune, ModelCode code) {
  const ExpertAdapters experts = expert_adapters(model, code);
  Wide total = 0;
  for (int64_t id = finetune.freeze_first_layers; id < model.num_layers; ++id)
    total += layer_adapter_params(model, is_moe_layer(model, id), finetune, experts, 1, 1);
  return static_cast<int64_t>(total);
}

bool finetune_active(const Finetune& f) {
  return uses_lora(f) || f.freeze_embeddings || f.freeze_first_layers > 0;
}

uint32_t attention_targets_of(const ModelConfig& m) {
  if (m.attention != AttentionKind::kMla) return kLoraQ | kLoraK | kLoraV | kLoraO;
  return (m.mla.q_lora_rank > 0 ? kLoraQA | kLoraQB : kLoraQ) | kLoraKVA | kLoraKVB | kLoraO;
}

std::string unmatched_lora_targets_note(const Scenario& s) {
  const Finetune& f = s.finetune;
  if (!uses_lora(f) || targets_all_linear(f.lora_targets)) return "";
  const uint32_t unmatched = f.lora_targets & kAttention & ~attention_targets_of(s.model);
  if (unmatched == 0) return "";
  return fmt::format(
      "lora_targets {}: {} has no such projection ({} attention: {}); PEFT matches target "
      "modules by name and adds no adapter there",
      lora_targets_text(unmatched), s.model.name,
      s.model.attention == AttentionKind::kMla ? "MLA" : "its",
      lora_targets_text(attention_targets_of(s.model)));
}

std::optional<Error> validate_finetune(const Scenario& s) {
  const Finetune& f = s.finetune;
  if (f.freeze_first_layers < 0 || f.freeze_first_layers > s.model.num_layers)
    return Error{"freeze_first_layers", std::to_string(f.freeze_first_layers),
                 "0 to the model's " + std::to_string(s.model.num_layers) + " layers", ""};
  if (!uses_lora(f)) return std::nullopt;
  if (f.lora_rank < 1 || f.lora_rank > 65536)
    return Error{"lora_rank", std::to_string(f.lora_rank), "an integer from 1 to 65536", ""};
  if (f.lora_targets == 0)
    return Error{"lora_targets", "", "at least one of q, k, v, o, gate, up, down", ""};
  if (!targets_all_linear(f.lora_targets) &&
      (f.lora_targets & (attention_targets_of(s.model) | kMlp)) == 0)
    return Error{
        "lora_targets", lora_targets_text(f.lora_targets),
        "projections the model has: " + lora_targets_text(attention_targets_of(s.model) | kMlp),
        s.model.name + " has none of them (PEFT finds no target module)"};
  if ((f.lora_targets & kLoraGate) && s.model.mlp != MlpKind::kGated &&
      f.lora_targets != (kAttention | kMlp))
    return Error{"lora_targets", lora_targets_text(f.lora_targets),
                 "projections the model has: q, k, v, o, up, down",
                 s.model.name + " has a plain MLP without a gate projection"};
  const uint32_t gate_up = f.lora_targets & (kLoraGate | kLoraUp);
  if (s.model.is_moe() && expert_adapters_of(s) == ExpertAdapters::kStacked && gate_up != 0 &&
      gate_up != (kLoraGate | kLoraUp))
    return Error{"lora_targets", lora_targets_text(f.lora_targets),
                 "gate and up together (or neither)",
                 "PEFT refuses one half of the experts' fused gate_up_proj on " + s.model.name +
                     " under transformers' model code (transformers_weight_conversion.py)"};
  return std::nullopt;
}

std::vector<FinetuneRow> finetune_model_states(const Scenario& s, const ParamCounts& counts,
                                               const RankLayout& rank, const Sharding& sharding,
                                               bool explain) {
  std::vector<FinetuneRow> rows;
  if (uses_lora(s.finetune))
    lora_rows(s, counts, rank, sharding, explain, rows);
  else
    full_finetune_rows(s, counts, rank, sharding, explain, rows);
  return rows;
}

namespace {

FinetuneRow adapter_activations(const Scenario& s, const RankLayout& rank, bool explain) {
  const Finetune& f = s.finetune;
  const ExpertAdapters experts = expert_adapters_of(s);
  Wide per_token = 0;    // adapter intermediates per token over the rank's trained layers
  Wide cast_inputs = 0;  // values per token of the adapters' own input copies
  // With adapters in another dtype than the activations, PEFT casts each adapter's input
  // (_cast_input_dtype) and lora_A keeps the cast; lora_B keeps x·A in the adapter dtype.
  const bool cast = lora_frozen_base(s) && f.adapter_dtype != s.training.activation_dtype;
  const Wide tp = s.parallel.tp;
  for (int64_t id : rank.layers) {
    if (id < first_trained_layer(s)) continue;
    const bool moe = is_moe_layer(s.model, id);
    per_token += targeted_per_token(s.model, moe, experts, f.lora_targets);
    if (!cast) continue;
    for (const Projection& p : projections(s.model, moe, experts))
      if (selected(p, f.lora_targets) && !p.stacked)
        cast_inputs += (p.expert ? s.model.moe.top_k : 1) *
                       (p.split == Split::kRow ? ceil_div(p.in, tp) : p.in);
  }
  const Wide tokens = tokens_per_rank(s);
  const Wide act = cast ? bytes_of(1, f.adapter_dtype) : bytes_of(1, s.training.activation_dtype);
  const Wide chunks = rank.in_flight_chunks, vpp = s.parallel.vpp;
  Term t{tokens * (f.lora_rank * per_token + cast_inputs) * act * chunks / vpp, ""};
  if (explain)
    t.formula = fmt::format(
        "{} in-flight microbatches × {} tokens × (r {} × {} targeted projections{}) × {} B{}",
        static_cast<int64_t>(chunks), group_digits(tokens), f.lora_rank, group_digits(per_token),
        cast
            ? fmt::format(" + {} input values cast to the adapter dtype", group_digits(cast_inputs))
            : "",
        static_cast<int64_t>(act),
        vpp > 1 ? fmt::format(" / vpp {}", static_cast<int64_t>(vpp)) : "");
  return {"adapter activations", std::move(t), CountsToward::kAllocated, kSourceAdapterActivations};
}

// PEFT's ParamWrapper over stacked experts: each forward folds B·A into the experts' weight
// (W + s·B·A, one baddbmm in the weight's dtype), and the experts' matmuls keep that merged
// copy for backward, one per trained MoE layer and in-flight microbatch. Under full
// recomputation only the layer being recomputed holds one.
std::optional<FinetuneRow> merged_expert_weights(const Scenario& s, const RankLayout& rank,
                                                 bool explain) {
  const ModelConfig& m = s.model;
  const uint32_t targets = s.finetune.lora_targets;
  if (!m.is_moe() || expert_adapters_of(s) != ExpertAdapters::kStacked) return std::nullopt;
  const Wide h = m.hidden, f = m.moe.expert_ffn;
  const Wide per_expert =
      ((targets & (kLoraGate | kLoraUp)) ? 2 * f * h : 0) + ((targets & kLoraDown) ? f * h : 0);
  Wide layers = 0;
  for (int64_t id : rank.layers)
    if (id >= first_trained_layer(s) && is_moe_layer(m, id)) ++layers;
  if (per_expert == 0 || layers == 0) return std::nullopt;
  const Parallelism& par = s.parallel;
  const Wide local = ceil_div(Wide{m.moe.num_experts}, par.ep);
  const Wide bytes = bytes_of(1, s.training.param_dtype);
  const bool full = s.training.recompute == Recompute::kFull;
  const Wide copies = full ? 1 : Wide{rank.in_flight_chunks} * layers;
  const Wide vpp = full ? 1 : par.vpp;
  Term t{copies * local * ceil_div(per_expert, par.etp) * bytes / vpp, ""};
  if (explain)
    t.formula =
        fmt::format("{} × {} experts × {}{} × {} B{}",
                    full ? std::string("1 recomputed layer")
                         : fmt::format("{} in-flight microbatches × {} MoE layers",
                                       static_cast<int64_t>(rank.in_flight_chunks),
                                       static_cast<int64_t>(layers)),
                    static_cast<int64_t>(local),
                    (targets & (kLoraGate | kLoraUp)) && (targets & kLoraDown) ? "3·h·f_e"
                    : (targets & kLoraDown)                                    ? "h·f_e"
                                                                               : "2·h·f_e",
                    par.etp > 1 ? fmt::format(" / etp {}", static_cast<int64_t>(par.etp)) : "",
                    static_cast<int64_t>(bytes),
                    vpp > 1 ? fmt::format(" / vpp {}", static_cast<int64_t>(vpp)) : "");
  return FinetuneRow{"merged expert weights", std::move(t), CountsToward::kAllocated,
                     kSourceStackedExperts};
}

}  // namespace

std::vector<FinetuneRow> finetune_activations(const Scenario& s, const RankLayout& rank,
                                              bool explain) {
  if (!uses_lora(s.finetune)) return {};
  std::vector<FinetuneRow> rows;
  if (s.training.recompute != Recompute::kFull)
    rows.push_back(adapter_activations(s, rank, explain));
  if (auto merged = merged_expert_weights(s, rank, explain)) rows.push_back(std::move(*merged));
  return rows;
}

int64_t layers_without_backward(const Scenario& s) {
  const Finetune& f = s.finetune;
  return uses_lora(f) || f.freeze_embeddings ? f.freeze_first_layers : 0;
}

}  // namespace vramplan
