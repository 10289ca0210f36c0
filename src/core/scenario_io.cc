#include "vramplan/scenario_io.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <set>

#include "core/model_states.h"
#include "core/pipeline.h"
#include "core/text.h"
#include "core/validate.h"
#include "vramplan/finetune.h"
#include "vramplan/frameworks.h"
#include "vramplan/hf_config.h"
#include "vramplan/precision.h"
#include "vramplan/presets.h"

namespace vramplan {
namespace {

using nlohmann::json;
using K = OptionKind;

constexpr OptionSpec kOptions[] = {
    // Model
    {"model", K::kText, "model", "",
     "preset name (see `vramplan models`), Hub id such as meta-llama/Llama-3.1-8B, or a path to a "
     "config.json",
     ""},
    {"model_config", K::kObject, "model", "",
     "a config.json object given inline (API and scenario files)", ""},
    {"hidden_size", K::kInteger, "model", "from the model", "hidden size h", ""},
    {"num_layers", K::kInteger, "model", "from the model", "decoder layers L", ""},
    {"num_heads", K::kInteger, "model", "from the model", "attention heads a", ""},
    {"num_kv_heads", K::kInteger, "model", "num_heads", "key/value heads g (GQA)", ""},
    {"head_dim", K::kInteger, "model", "hidden_size/num_heads", "head dimension d", ""},
    {"ffn_size", K::kInteger, "model", "from the model", "dense MLP intermediate size f", ""},
    {"vocab_size", K::kInteger, "model", "from the model", "vocabulary size V", ""},
    {"tied_embeddings", K::kBool, "model", "from the model",
     "input embedding and LM head share weights", ""},
    {"num_experts", K::kInteger, "moe", "from the model", "routed experts E (0 = dense)", ""},
    {"top_k", K::kInteger, "moe", "from the model", "experts per token k", ""},
    {"expert_ffn_size", K::kInteger, "moe", "from the model", "intermediate size of one expert",
     ""},
    {"shared_experts", K::kInteger, "moe", "from the model", "always-active shared experts", ""},
    {"shared_expert_ffn_size", K::kInteger, "moe", "expert_ffn_size",
     "intermediate size of one shared expert", ""},
    // Training
    {"seq_len", K::kInteger, "training", "4096", "sequence length s in tokens", ""},
    {"micro_batch", K::kInteger, "training", "1", "sequences per microbatch b", ""},
    {"global_batch", K::kInteger, "training", "micro_batch·dp (·2·pp with pipelining)",
     "sequences per optimizer step; sets the microbatch count", ""},
    {"recompute", K::kChoice, "training", "none",
     "activation recomputation: selective recomputes attention (Megatron), selective-op keeps "
     "every other matmul output (torchtitan's op-level policy), full keeps layer inputs",
     "none, selective, full, selective-op"},
    {"recompute_layers", K::kInteger, "training", "0 (all)",
     "with full recompute: layers per pipeline stage (per chunk) recomputed, the rest stored", ""},
    {"flash_attention", K::kBool, "training", "true", "fused/flash attention (no s×s scores kept)",
     ""},
    {"dropout", K::kBool, "training", "false", "dropout on (masks kept for backward)", ""},
    {"moe_grouped_gemm", K::kBool, "training", "false",
     "MoE experts as grouped GEMMs (Megatron --moe-grouped-gemm, Transformer Engine): 4 more "
     "32 MiB cuBLAS workspaces on ranks holding an MoE layer",
     ""},
    // Fine-tuning (finetune.h)
    {"finetune", K::kChoice, "training", "none",
     "fine-tuning method: none (every unfrozen weight trains), lora, qlora (NF4 base, paged 8-bit "
     "AdamW)",
     "none, lora, qlora"},
    {"lora_rank", K::kInteger, "training", "16", "LoRA rank r", ""},
    {"lora_targets", K::kText, "training", "q,v",
     "projections with adapters: attention, mlp, all-linear, or a list of q,k,v,o,gate,up,down",
     ""},
    {"adapter_dtype", K::kChoice, "training", "bf16", "dtype of the LoRA adapters",
     "fp32, bf16, fp16, fp8, fp4"},
    {"freeze_embeddings", K::kBool, "training", "false",
     "input embedding frozen (LoRA/QLoRA freeze every base weight anyway)", ""},
    {"freeze_first_layers", K::kInteger, "training", "0",
     "first N decoder layers frozen (no gradients, no optimizer state)", ""},
    // Precision and optimizer
    {"param_dtype", K::kChoice, "precision", "bf16", "dtype of the weights used in compute",
     "fp32, bf16, fp16, fp8, fp4"},
    {"grad_dtype", K::kChoice, "precision", "bf16", "dtype gradients are produced in",
     "fp32, bf16, fp16, fp8, fp4"},
    {"fp32_grad_accum", K::kBool, "precision", "true",
     "accumulate gradients in an fp32 buffer (Megatron main_grad)", ""},
    {"reduce_dtype", K::kChoice, "precision", "fp32",
     "dtype of the data-parallel gradient reduction", "fp32, bf16, fp16, fp8, fp4"},
    {"master_weights", K::kBool, "precision", "true",
     "keep fp32 master weights when params are below fp32", ""},
    {"optimizer", K::kChoice, "precision", "adamw", "optimizer",
     "adamw, adam8bit, sgd, sgd-momentum, adafactor, lion, muon"},
    {"optimizer_dtype", K::kChoice, "precision", "fp32", "dtype of optimizer states",
     "fp32, bf16, fp16, fp8, fp4"},
    {"activation_dtype", K::kChoice, "precision", "bf16", "dtype of stored activations",
     "fp32, bf16, fp16, fp8, fp4"},
    {"fp8", K::kChoice, "precision", "none",
     "FP8 linear layers with a Transformer Engine recipe (Megatron --fp8-recipe): each decoder "
     "linear saves its input in fp8 and caches fp8 casts of its weight",
     "none, delayed, tensorwise, blockwise, mxfp8"},
    {"fp8_params", K::kBool, "precision", "false",
     "fp8 primary weights (Megatron --fp8-param-gather): decoder linear weights stored in fp8", ""},
    // Parallelism
    {"gpus", K::kInteger, "parallelism", "tp·pp·cp·dp",
     "world size; dp is derived from it when not given", ""},
    {"tp", K::kInteger, "parallelism", "1", "tensor-parallel degree", ""},
    {"sequence_parallel", K::kBool, "parallelism", "true",
     "sequence parallelism with TP (Korthikanti et al.)", ""},
    {"pp", K::kInteger, "parallelism", "1", "pipeline-parallel stages", ""},
    {"vpp", K::kInteger, "parallelism", "1", "virtual stages (model chunks) per pipeline rank", ""},
    {"schedule", K::kChoice, "parallelism", "1f1b (interleaved when vpp > 1)", "pipeline schedule",
     "1f1b, interleaved, gpipe"},
    {"dp", K::kInteger, "parallelism", "1 (or gpus/(tp·pp·cp))", "data-parallel degree", ""},
    {"cp", K::kInteger, "parallelism", "1", "context-parallel degree (splits the sequence)", ""},
    {"ep", K::kInteger, "parallelism", "1", "expert-parallel degree", ""},
    {"etp", K::kInteger, "parallelism", "1", "expert tensor-parallel degree", ""},
    {"zero", K::kInteger, "parallelism", "0", "DeepSpeed ZeRO stage 0-3", ""},
    {"fsdp", K::kChoice, "parallelism", "none", "PyTorch FSDP sharding strategy",
     "none, full_shard, shard_grad_op, hybrid_shard, no_shard"},
    {"fsdp_shard_group", K::kInteger, "parallelism", "dp·cp",
     "ranks per shard group with hybrid_shard", ""},
    {"fsdp_prefetch", K::kInteger, "parallelism", "1", "FSDP/ZeRO-3 units all-gathered ahead", ""},
    {"distributed_optimizer", K::kBool, "parallelism", "false",
     "Megatron distributed optimizer: optimizer state and master weights sharded over dp·cp", ""},
    {"first_stage_layers", K::kInteger, "parallelism", "even split",
     "decoder layers on the first pipeline stage", ""},
    {"last_stage_layers", K::kInteger, "parallelism", "even split",
     "decoder layers on the last pipeline stage", ""},
    {"embedding_stage", K::kBool, "parallelism", "false (true: torchtitan)",
     "count the embedding as one layer of the pipeline split", ""},
    {"loss_stage", K::kBool, "parallelism", "false (true: torchtitan)",
     "count the LM head and loss as one layer of the pipeline split", ""},
    // Hardware and overheads
    {"pipeline_split", K::kChoice, "parallelism", "even (balanced: torchtitan, compute: nanotron)",
     "how layers are split over pp·vpp: evenly (an error when they do not divide), balanced "
     "(the remainder spread over the first stages) or compute (nanotron's split by compute "
     "cost, the LM head counted as V·h); any split setting replaces a framework's split",
     "even, balanced, compute"},
    {"framework", K::kChoice, "framework", "none",
     "training framework whose conventions to apply (fp32 grad buffers, DDP bucket copies, loss "
     "copies of the logits, pipeline split, allocator pool; docs/frameworks.md); explicit "
     "settings still win in estimate, while plan searches only layouts the framework runs",
     "megatron, torchtitan, deepspeed, nanotron, hf-trainer"},
    // Single conventions (Conventions in scenario.h), over the framework's
    {"loss_bytes_per_logit", K::kInteger, "framework",
     "6 (10: nanotron, torchtitan, deepspeed, hf-trainer)",
     "bytes per logit alive at the loss: logits plus the loss's fp32 copies (Megatron's "
     "--cross-entropy-loss-fusion keeps 10)",
     ""},
    {"gated_mlp_tensors", K::kInteger, "framework",
     "3 (4: nanotron, torchtitan, deepspeed, hf-trainer)",
     "f-wide tensors a gated MLP keeps per token: 3 fused SwiGLU, 4 unfused", ""},
    {"lazy_gradients", K::kBool, "framework", "false (true: torchtitan, hf-trainer)",
     "gradients set to None after each step instead of a persistent buffer", ""},
    {"fsdp_mixed_precision", K::kBool, "framework", "false (true: torchtitan)",
     "FSDP all-gathers the compute dtype and reduce-scatters in the reduce dtype", ""},
    {"zero3_live_params", K::kInteger, "framework", "0 (1,000,000,000: deepspeed)",
     "ZeRO-3 parameters kept gathered (DeepSpeed stage3_max_live_parameters); 0 keeps only the "
     "unit in use and the prefetched ones",
     ""},
    {"pipeline_keeps_stage_outputs", K::kBool, "framework",
     "false (true: nanotron, torchtitan, deepspeed)",
     "the pipeline engine keeps what a stage sent until its backward", ""},
    {"mha_keeps_packed_qkv", K::kBool, "framework", "false",
     "with MHA, the packed Q|K|V buffer stays alive beside the K|V copy flash attention saves", ""},
    {"sp_saves_gathered_inputs", K::kBool, "framework", "false (true: torchtitan)",
     "with sequence parallelism, column-parallel linears save their all-gathered input "
     "(torchtitan's TP plan, nanotron tp_recompute_allgather: false) instead of the sequence "
     "shard",
     ""},
    {"tp_allgather_buffer", K::kBool, "framework", "false (true: nanotron)",
     "a persistent n·h buffer for the sequence-parallel all-gathers (nanotron MemoryBuffer)", ""},
    {"pipeline_fsdp_unsharded", K::kBool, "framework", "false (true: torchtitan)",
     "with pp > 1, FSDP keeps each stage's parameters gathered and accumulates unsharded "
     "gradients in the reduce dtype until the last microbatch's backward "
     "(torch.distributed.pipelining with FSDP2)",
     ""},
    {"attention_scores_buffer", K::kBool, "framework", "false",
     "without flash attention, one layer's s×s scores stay in a persistent global buffer "
     "(Megatron --transformer-impl local: GlobalMemoryBuffer \"mpu\")",
     ""},
    {"fp32_grad_copy", K::kBool, "framework", "false (true: megatron)",
     "gradients kept below fp32 are copied to fp32 for the optimizer step and kept until the "
     "next zero_grad (Megatron's main_grad.float(), --fp16)",
     ""},
    {"gpu", K::kText, "hardware", "h100-80gb",
     "GPU to fit on (see `vramplan gpus`); every catalog GPU is listed too", ""},
    {"gpu_memory_gib", K::kNumber, "hardware", "", "fit on a GPU of this many GiB instead", ""},
    {"cuda_context_gib", K::kNumber, "overheads", "0.586 (600 MiB)",
     "CUDA context and kernels per GPU", ""},
    {"nccl_gib_per_group", K::kNumber, "overheads", "0.5",
     "NCCL buffers per parallel group of size > 1", ""},
    {"gemm_workspace_mib", K::kNumber, "overheads", "64",
     "cuBLAS/cuBLASLt (and Transformer Engine) GEMM workspaces per GPU, in MiB", ""},
    {"allocator_overhead", K::kNumber, "overheads", "0.10",
     "caching-allocator pool above peak allocated (fraction)", ""},
    {"cuda_graphs", K::kBool, "overheads", "false",
     "per-layer CUDA graphs (Megatron --cuda-graph-impl): their pools keep the layers' forward "
     "temporaries, about 20% of the activations, reserved",
     ""},
};

std::string as_text(const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

// Typed readers: each accepts the JSON type or its text form, and names the key on failure.
class Reader {
 public:
  explicit Reader(const json& settings) : settings_(settings) {}
  bool has(const char* key) const { return settings_.contains(key) && !settings_[key].is_null(); }

  std::optional<Error> integer(const char* key, int64_t& out) const {
    if (!has(key)) return std::nullopt;
    const json& v = settings_[key];
    if (v.is_number_integer()) {
      out = v.get<int64_t>();
      return std::nullopt;
    }
    if (v.is_number_float()) {
      const double d = v.get<double>();
      if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9e18) {
        out = static_cast<int64_t>(d);
        return std::nullopt;
      }
    }
    if (v.is_string()) {
      const std::string s = v.get<std::string>();
      auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
      if (ec == std::errc() && ptr == s.data() + s.size() && !s.empty()) return std::nullopt;
      if (ec == std::errc::result_out_of_range)
        return Error{key, s, "an integer below 9,223,372,036,854,775,807", "too large"};
    }
    return Error{key, as_text(v), "an integer", ""};
  }

  std::optional<Error> number(const char* key, double& out) const {
    if (!has(key)) return std::nullopt;
    const json& v = settings_[key];
    if (v.is_number())
      out = v.get<double>();
    else if (v.is_string()) {
      const std::string s = v.get<std::string>();
      char* end = nullptr;
      out = std::strtod(s.c_str(), &end);
      if (s.empty() || end != s.c_str() + s.size()) return Error{key, s, "a number", ""};
    } else {
      return Error{key, as_text(v), "a number", ""};
    }
    if (!std::isfinite(out)) return Error{key, as_text(v), "a finite number", ""};
    return std::nullopt;
  }

  std::optional<Error> boolean(const char* key, bool& out) const {
    if (!has(key)) return std::nullopt;
    const json& v = settings_[key];
    if (v.is_boolean()) {
      out = v.get<bool>();
      return std::nullopt;
    }
    const std::string s = to_lower(as_text(v));
    if (s == "true" || s == "on" || s == "yes" || s == "1") {
      out = true;
      return std::nullopt;
    }
    if (s == "false" || s == "off" || s == "no" || s == "0") {
      out = false;
      return std::nullopt;
    }
    return Error{key, as_text(v), "true or false (also on/off, yes/no, 1/0)", ""};
  }

  std::optional<Error> text(const char* key, std::string& out) const {
    if (!has(key)) return std::nullopt;
    const json& v = settings_[key];
    if (!v.is_string()) return Error{key, v.dump(), "a string", ""};
    out = v.get<std::string>();
    return std::nullopt;
  }

  std::optional<Error> dtype(const char* key, DType& out) const {
    std::string s;
    if (auto e = text(key, s)) return e;
    if (!has(key)) return std::nullopt;
    auto t = parse_dtype(s);
    if (!t) return Error{key, s, std::string(kDTypeChoices), "unknown dtype"};
    out = *t;
    return std::nullopt;
  }

  // Picks one of `names` (lower-case) and stores its index, i.e. the enum value, in `out`.
  template <class Enum, size_t N>
  std::optional<Error> choice(const char* key, const std::array<const char*, N>& names,
                              Enum& out) const {
    std::string s;
    if (auto e = text(key, s)) return e;
    if (!has(key)) return std::nullopt;
    const std::string wanted = to_lower(s);
    std::string accepted;
    for (size_t i = 0; i < N; ++i) {
      if (wanted == names[i]) {
        out = static_cast<Enum>(i);
        return std::nullopt;
      }
      accepted += (i ? ", " : "") + std::string(names[i]);
    }
    return Error{key, s, accepted, ""};
  }

 private:
  const json& settings_;
};

std::optional<Error> check_known_keys(const json& settings) {
  std::set<std::string> known;
  for (const OptionSpec& o : kOptions) known.insert(o.key);
  for (auto it = settings.begin(); it != settings.end(); ++it) {
    if (known.count(it.key())) continue;
    std::string all;
    for (const OptionSpec& o : kOptions) all += (all.empty() ? "" : ", ") + std::string(o.key);
    return Error{it.key(), as_text(it.value()), "one of the scenario keys: " + all,
                 "unknown setting"};
  }
  return std::nullopt;
}

bool looks_like_path(const std::string& s) {
  return s.find(".json") != std::string::npos || s.rfind("/", 0) == 0 || s.rfind("./", 0) == 0 ||
         s.rfind("../", 0) == 0 || s.rfind("~", 0) == 0;
}

Result<ParsedModel> load_model(const Reader& r, const json& settings, const FileReader& read_file,
                               const ModelFetcher& fetch_model) {
  if (r.has("model_config")) {
    const json& cfg = settings["model_config"];
    if (!cfg.is_object()) return Error{"model_config", as_text(cfg), "a config.json object", ""};
    return parse_hf_config(cfg.dump(), "inline config");
  }
  std::string name;
  if (auto e = r.text("model", name)) return *e;
  if (const Preset* preset = find_preset(name))
    return parse_hf_config(preset->config, preset->name);
  if (looks_like_path(name)) {
    if (!read_file)
      return Error{"model", name, "a preset name or an inline model_config",
                   "files cannot be read here"};
    Result<std::string> text = read_file(name);
    if (!text) return text.error();
    return parse_hf_config(*text, name);
  }
  if (fetch_model && !name.empty()) {
    Result<std::string> text = fetch_model(name);
    if (!text) return text.error();
    return parse_hf_config(*text, name);
  }
  return Error{
      "model", name,
      "a preset (vramplan models), a Hub id of a preset such as meta-llama/Llama-3.1-8B, or "
      "a path to a config.json",
      "no preset or file of that name"};
}

// A model from flags alone: a Llama-style dense (or MoE) decoder.
ParsedModel custom_model() {
  ParsedModel p;
  p.model.name = "custom";
  p.model.model_type = "custom";
  return p;
}

void resize_layer_vectors(ModelConfig& m) {
  const size_t n = static_cast<size_t>(std::max<int64_t>(m.num_layers, 0));
  m.moe_layers.resize(n, m.is_moe());
  m.layer_attention.resize(n, LayerAttention::kFull);
}

std::optional<Error> apply_model_overrides(const Reader& r, bool custom, ParsedModel& parsed) {
  ModelConfig& m = parsed.model;
  const int64_t old_head_dim_default = m.num_heads > 0 ? m.hidden / m.num_heads : 0;
  const bool head_dim_was_default = custom || m.head_dim == old_head_dim_default;
  struct Field {
    const char* key;
    int64_t* target;
  };
  const Field fields[] = {{"hidden_size", &m.hidden},
                          {"num_layers", &m.num_layers},
                          {"num_heads", &m.num_heads},
                          {"num_kv_heads", &m.num_kv_heads},
                          {"head_dim", &m.head_dim},
                          {"ffn_size", &m.ffn},
                          {"vocab_size", &m.vocab},
                          {"num_experts", &m.moe.num_experts},
                          {"top_k", &m.moe.top_k},
                          {"expert_ffn_size", &m.moe.expert_ffn},
                          {"shared_experts", &m.moe.shared_experts},
                          {"shared_expert_ffn_size", &m.moe.shared_expert_ffn}};
  const bool was_moe = m.is_moe();
  for (const Field& f : fields) {
    if (!r.has(f.key)) continue;
    const int64_t before = *f.target;
    if (auto e = r.integer(f.key, *f.target)) return e;
    if (!custom && before != *f.target)
      parsed.warnings.push_back(
          fmt::format("{} set to {} (the model says {})", f.key, *f.target, before));
  }
  if (auto e = r.boolean("tied_embeddings", m.tied_embeddings)) return e;
  if (custom || !r.has("num_kv_heads")) {
    if (custom && !r.has("num_kv_heads")) m.num_kv_heads = m.num_heads;
  }
  if (!r.has("head_dim") && head_dim_was_default && m.num_heads > 0)
    m.head_dim = m.hidden / m.num_heads;
  if (m.is_moe() && m.moe.expert_ffn == 0) m.moe.expert_ffn = m.ffn;
  if (m.moe.shared_experts > 0 && m.moe.shared_expert_ffn == 0)
    m.moe.shared_expert_ffn = m.moe.expert_ffn;
  if (m.is_moe() && !was_moe) m.moe_layers.assign(m.moe_layers.size(), true);
  if (!m.is_moe()) m.moe_layers.assign(m.moe_layers.size(), false);
  resize_layer_vectors(m);
  return std::nullopt;
}

std::optional<Error> require_custom_fields(const Reader& r) {
  for (const char* key : {"hidden_size", "num_layers", "num_heads", "ffn_size", "vocab_size"}) {
    if (!r.has(key))
      return Error{"model", "",
                   "--model NAME, or a custom architecture with hidden_size, num_layers, "
                   "num_heads, ffn_size and vocab_size",
                   std::string("no model given and ") + key + " is missing"};
  }
  return std::nullopt;
}

// validate_model names ModelConfig fields; when the user set that field as an option, name the
// option they typed instead.
Error name_model_field(const Reader& r, Error e) {
  static const std::pair<const char*, const char*> kFieldToKey[] = {
      {"hidden", "hidden_size"},
      {"num_layers", "num_layers"},
      {"num_heads", "num_heads"},
      {"num_kv_heads", "num_kv_heads"},
      {"head_dim", "head_dim"},
      {"ffn", "ffn_size"},
      {"vocab", "vocab_size"},
      {"moe.num_experts", "num_experts"},
      {"moe.top_k", "top_k"},
      {"moe.expert_ffn", "expert_ffn_size"},
      {"moe.shared_experts", "shared_experts"},
      {"moe.shared_expert_ffn", "shared_expert_ffn_size"}};
  for (const auto& [field, key] : kFieldToKey)
    if (e.field == field && r.has(key)) e.field = key;
  return e;
}

Result<ParsedModel> read_model(const Reader& r, const json& settings, const FileReader& read_file,
                               const ModelFetcher& fetch_model) {
  const bool custom = !r.has("model") && !r.has("model_config");
  ParsedModel parsed;
  if (custom) {
    if (auto e = require_custom_fields(r)) return *e;
    parsed = custom_model();
  } else {
    Result<ParsedModel> loaded = load_model(r, settings, read_file, fetch_model);
    if (!loaded) return loaded.error();
    parsed = std::move(loaded).value();
  }
  if (auto e = apply_model_overrides(r, custom, parsed)) return *e;
  if (auto e = validate_model(parsed.model)) return name_model_field(r, *std::move(e));
  return parsed;
}

std::optional<Error> read_training(const Reader& r, Training& t) {
  if (auto e = r.integer("seq_len", t.seq_len)) return e;
  if (auto e = r.integer("micro_batch", t.micro_batch)) return e;
  if (auto e = r.integer("global_batch", t.global_batch)) return e;
  if (r.has("global_batch") && t.global_batch <= 0)
    return Error{"global_batch", std::to_string(t.global_batch),
                 "a positive multiple of micro_batch·dp", ""};
  if (auto e = r.choice("recompute", kRecomputeNames, t.recompute)) return e;
  if (auto e = r.integer("recompute_layers", t.recompute_layers)) return e;
  if (auto e = r.boolean("flash_attention", t.flash_attention)) return e;
  if (auto e = r.boolean("dropout", t.dropout)) return e;
  if (auto e = r.boolean("moe_grouped_gemm", t.moe_grouped_gemm)) return e;
  if (auto e = r.dtype("param_dtype", t.param_dtype)) return e;
  if (auto e = r.dtype("grad_dtype", t.grad_dtype)) return e;
  if (auto e = r.boolean("fp32_grad_accum", t.fp32_grad_accumulation)) return e;
  if (auto e = r.dtype("reduce_dtype", t.reduce_dtype)) return e;
  if (auto e = r.boolean("master_weights", t.master_weights)) return e;
  if (auto e = r.dtype("optimizer_dtype", t.optimizer_state_dtype)) return e;
  if (auto e = r.dtype("activation_dtype", t.activation_dtype)) return e;
  if (auto e = r.choice("optimizer", kOptimizerNames, t.optimizer)) return e;
  if (auto e = r.choice("fp8", kFp8RecipeNames, t.fp8)) return e;
  if (auto e = r.boolean("fp8_params", t.fp8_params)) return e;
  return std::nullopt;
}

// dp from --dp, or derived from --gpus; both given must agree.
std::optional<Error> read_world(const Reader& r, Parallelism& p) {
  int64_t gpus = 0;
  if (auto e = r.integer("dp", p.dp)) return e;
  if (auto e = r.integer("gpus", gpus)) return e;
  if (!r.has("gpus")) return std::nullopt;
  for (int64_t degree : {p.tp, p.pp, p.cp})
    if (degree <= 0 || degree > (int64_t{1} << 24)) return std::nullopt;  // validation names it
  const __int128 wide_model_parallel = static_cast<__int128>(p.tp) * p.pp * p.cp;
  if (wide_model_parallel > (int64_t{1} << 40)) return std::nullopt;  // validation names it
  const int64_t model_parallel = static_cast<int64_t>(wide_model_parallel);
  if (gpus <= 0 || gpus % model_parallel != 0)
    return Error{"gpus", std::to_string(gpus),
                 fmt::format("a multiple of tp·pp·cp = {}", model_parallel),
                 "the world size must factor as tp·pp·cp·dp"};
  const int64_t derived = gpus / model_parallel;
  if (r.has("dp") && p.dp != derived)
    return Error{"dp", std::to_string(p.dp),
                 fmt::format("{} (gpus / (tp·pp·cp)) or leave dp out", derived),
                 fmt::format("gpus = {} but dp = {}", gpus, p.dp)};
  p.dp = derived;
  return std::nullopt;
}

// A framework's split (nanotron's compute-cost one, torchtitan's balanced one with the embedding
// and loss as layers) is a default: any split setting replaces it as a whole, so it never mixes
// with the user's split.
void drop_framework_split(const Reader& r, Parallelism& p) {
  if (std::none_of(std::begin(kSplitSettingKeys), std::end(kSplitSettingKeys),
                   [&](const char* key) { return r.has(key); }))
    return;
  p.first_stage_layers = p.last_stage_layers = 0;
  p.embedding_as_stage = p.loss_as_stage = p.balanced_split = p.compute_balanced_split = false;
}

std::optional<Error> read_parallel(const Reader& r, Parallelism& p) {
  drop_framework_split(r, p);
  const std::pair<const char*, int64_t*> ints[] = {{"tp", &p.tp},
                                                   {"pp", &p.pp},
                                                   {"vpp", &p.vpp},
                                                   {"cp", &p.cp},
                                                   {"ep", &p.ep},
                                                   {"etp", &p.etp},
                                                   {"zero", &p.zero},
                                                   {"fsdp_shard_group", &p.fsdp_shard_group},
                                                   {"fsdp_prefetch", &p.fsdp_prefetch},
                                                   {"first_stage_layers", &p.first_stage_layers},
                                                   {"last_stage_layers", &p.last_stage_layers}};
  for (const auto& [key, target] : ints)
    if (auto e = r.integer(key, *target)) return e;
  if (auto e = r.boolean("sequence_parallel", p.sequence_parallel)) return e;
  if (auto e = r.boolean("distributed_optimizer", p.distributed_optimizer)) return e;
  if (auto e = r.boolean("embedding_stage", p.embedding_as_stage)) return e;
  if (auto e = r.boolean("loss_stage", p.loss_as_stage)) return e;
  p.schedule = p.vpp > 1 ? Schedule::kInterleaved : Schedule::k1F1B;  // implied by virtual stages
  if (auto e = r.choice("schedule", kScheduleNames, p.schedule)) return e;
  if (auto e = r.choice("fsdp", kFsdpNames, p.fsdp)) return e;
  static constexpr std::array<const char*, 3> kSplitNames = {"even", "balanced", "compute"};
  int split = 0;
  if (auto e = r.choice("pipeline_split", kSplitNames, split)) return e;
  if (r.has("pipeline_split")) {
    p.balanced_split = split == 1;
    p.compute_balanced_split = split == 2;
  }
  return read_world(r, p);
}

}  // namespace

std::span<const OptionSpec> scenario_options() { return kOptions; }

std::string flag_name(const std::string& key) {
  std::string flag = "--" + key;
  std::replace(flag.begin(), flag.end(), '_', '-');
  return flag;
}

namespace {

std::optional<Error> read_conventions(const Reader& r, Conventions& c) {
  if (auto e = r.integer("loss_bytes_per_logit", c.loss_bytes_per_logit)) return e;
  if (c.loss_bytes_per_logit < 1 || c.loss_bytes_per_logit > 64)
    return Error{"loss_bytes_per_logit", std::to_string(c.loss_bytes_per_logit), "1 to 64", ""};
  if (auto e = r.integer("gated_mlp_tensors", c.gated_mlp_tensors)) return e;
  if (c.gated_mlp_tensors < 2 || c.gated_mlp_tensors > 8)
    return Error{"gated_mlp_tensors", std::to_string(c.gated_mlp_tensors), "2 to 8", ""};
  if (auto e = r.boolean("lazy_gradients", c.lazy_gradients)) return e;
  if (auto e = r.boolean("fsdp_mixed_precision", c.fsdp_mixed_precision)) return e;
  if (auto e = r.integer("zero3_live_params", c.zero3_live_params)) return e;
  if (c.zero3_live_params < 0 || c.zero3_live_params > (int64_t{1} << 50))
    return Error{"zero3_live_params", std::to_string(c.zero3_live_params), "0 to 2^50 parameters",
                 ""};
  if (auto e = r.boolean("pipeline_keeps_stage_outputs", c.pipeline_keeps_stage_outputs)) return e;
  if (auto e = r.boolean("mha_keeps_packed_qkv", c.mha_keeps_packed_qkv)) return e;
  if (auto e = r.boolean("sp_saves_gathered_inputs", c.sp_saves_gathered_inputs)) return e;
  if (auto e = r.boolean("tp_allgather_buffer", c.tp_allgather_buffer)) return e;
  if (auto e = r.boolean("attention_scores_buffer", c.attention_scores_buffer)) return e;
  if (auto e = r.boolean("fp32_grad_copy", c.fp32_grad_copy)) return e;
  return r.boolean("pipeline_fsdp_unsharded", c.pipeline_fsdp_unsharded);
}

std::optional<Error> read_overheads(const Reader& r, Overheads& o) {
  constexpr double kGiB = 1024.0 * 1024 * 1024;
  const std::pair<const char*, int64_t*> sizes[] = {
      {"cuda_context_gib", &o.cuda_context_bytes}, {"nccl_gib_per_group", &o.nccl_bytes_per_group}};
  for (const auto& [key, target] : sizes) {
    double gib = static_cast<double>(*target) / kGiB;
    if (auto e = r.number(key, gib)) return e;
    if (gib < 0 || gib > 64) return Error{key, fmt::format("{}", gib), "0 to 64 (GiB)", ""};
    *target = static_cast<int64_t>(gib * kGiB);
  }
  double workspace_mib = static_cast<double>(o.gemm_workspace_bytes) / (1 << 20);
  if (auto e = r.number("gemm_workspace_mib", workspace_mib)) return e;
  if (workspace_mib < 0 || workspace_mib > 65536)
    return Error{"gemm_workspace_mib", fmt::format("{}", workspace_mib), "0 to 65536 (MiB)", ""};
  o.gemm_workspace_bytes = static_cast<int64_t>(workspace_mib * (1 << 20));
  if (auto e = r.boolean("cuda_graphs", o.per_layer_cuda_graphs)) return e;
  return r.number("allocator_overhead", o.allocator_fraction);
}

std::optional<Error> read_hardware(const Reader& r, ResolvedScenario& out) {
  if (auto e = r.text("gpu", out.gpu)) return e;
  if (!r.has("gpu_memory_gib")) return std::nullopt;
  double gib = 0;
  if (auto e = r.number("gpu_memory_gib", gib)) return e;
  if (gib <= 0 || gib > 1e6)
    return Error{"gpu_memory_gib", fmt::format("{}", gib),
                 "a capacity above 0 and at most 1,000,000 GiB", ""};
  out.gpu_memory_gib = gib;
  return std::nullopt;
}

// Without a global batch, a step is one microbatch per rank, or enough microbatches to fill the
// pipeline twice; the user is told which.
void default_batch(ResolvedScenario& out) {
  Training& tr = out.scenario.training;
  const Parallelism& par = out.scenario.parallel;
  // Out-of-range inputs are left for validation to name; multiplying them could overflow.
  const bool sane = tr.micro_batch > 0 && tr.micro_batch <= (1 << 20) && par.dp > 0 &&
                    par.dp <= (1 << 24) && par.pp > 0 && par.pp <= (1 << 20);
  if (tr.global_batch > 0 || !sane) return;
  tr.global_batch = default_global_batch(out.scenario.parallel, tr.micro_batch);
  if (out.scenario.parallel.pp > 1)
    out.warnings.push_back(fmt::format(
        "global_batch not given: assumed {} sequences ({} microbatches per step) to fill the "
        "pipeline",
        tr.global_batch, tr.global_batch / (tr.micro_batch * out.scenario.parallel.dp)));
}

}  // namespace

Result<ResolvedScenario> resolve_scenario(const json& settings, const FileReader& read_file,
                                          const ModelFetcher& fetch_model) {
  if (!settings.is_object())
    return Error{"scenario", settings.dump().substr(0, 60), "a JSON object of settings", ""};
  if (auto e = check_known_keys(settings)) return *e;
  const Reader r(settings);
  ResolvedScenario out;
  Framework framework = Framework::kMegatron;
  if (auto e = r.choice("framework", kFrameworkNames, framework)) return *e;
  if (r.has("framework")) apply_framework(framework, out.scenario);
  Result<ParsedModel> model = read_model(r, settings, read_file, fetch_model);
  if (!model) return model.error();
  out.scenario.model = std::move(model->model);
  out.warnings = model->warnings;
  if (auto e = read_training(r, out.scenario.training)) return *e;
  if (auto e = read_finetune_settings(settings, out.scenario)) return *e;
  if (auto e = read_parallel(r, out.scenario.parallel)) return *e;
  default_batch(out);
  if (auto e = read_conventions(r, out.scenario.conventions)) return *e;
  if (auto e = read_overheads(r, out.scenario.overheads)) return *e;
  if (auto e = read_hardware(r, out)) return *e;
  return out;
}

// --- Shared with the other scenario kinds -------------------------------------------------

Result<ParsedModel> resolve_model(const json& settings, const FileReader& read_file,
                                  const ModelFetcher& fetch_model) {
  if (!settings.is_object())
    return Error{"scenario", settings.dump().substr(0, 60), "a JSON object of settings", ""};
  return read_model(Reader(settings), settings, read_file, fetch_model);
}

std::optional<Error> read_integer_setting(const json& settings, const char* key, int64_t& out) {
  return Reader(settings).integer(key, out);
}
std::optional<Error> read_number_setting(const json& settings, const char* key, double& out) {
  return Reader(settings).number(key, out);
}
std::optional<Error> read_bool_setting(const json& settings, const char* key, bool& out) {
  return Reader(settings).boolean(key, out);
}
std::optional<Error> read_text_setting(const json& settings, const char* key, std::string& out) {
  return Reader(settings).text(key, out);
}

}  // namespace vramplan
