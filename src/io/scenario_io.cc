#include "vramplan/io/scenario_io.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <set>

#include "base/text.h"
#include "io/finetune_settings.h"
#include "io/setting_reader.h"
#include "training/model_states.h"
#include "training/pipeline.h"
#include "training/scenario_checks.h"
#include "vramplan/io/framework_vocabulary.h"
#include "vramplan/model/hf_config.h"
#include "vramplan/model/precision.h"
#include "vramplan/model/presets.h"
#include "vramplan/training/finetune.h"
#include "vramplan/training/frameworks.h"
#include "vramplan/training/pipeline_layout.h"

namespace vramplan {
namespace {

using nlohmann::json;
using K = OptionKind;

bool looks_like_path(const std::string& s) {
  return s.find(".json") != std::string::npos || s.rfind("/", 0) == 0 || s.rfind("./", 0) == 0 ||
         s.rfind("../", 0) == 0 || s.rfind("~", 0) == 0;
}

Result<ParsedModel> load_model(const SettingReader& r, const json& settings,
                               const FileReader& read_file, const ModelFetcher& fetch_model) {
  if (r.has("model_config")) {
    const json& cfg = settings["model_config"];
    if (!cfg.is_object())
      return Error{"model_config", setting_text(cfg), "a config.json object", ""};
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

std::optional<Error> apply_model_overrides(const SettingReader& r, bool custom,
                                           ParsedModel& parsed) {
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

std::optional<Error> require_custom_fields(const SettingReader& r) {
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
Error name_model_field(const SettingReader& r, Error e) {
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

Result<ParsedModel> read_model(const SettingReader& r, const json& settings,
                               const FileReader& read_file, const ModelFetcher& fetch_model) {
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

std::optional<Error> read_training(const SettingReader& r, Training& t) {
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
std::optional<Error> read_world(const SettingReader& r, Parallelism& p) {
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
void drop_framework_split(const SettingReader& r, Parallelism& p) {
  if (std::none_of(std::begin(kSplitSettingKeys), std::end(kSplitSettingKeys),
                   [&](const char* key) { return r.has(key); }))
    return;
  p.first_stage_layers = p.last_stage_layers = 0;
  p.chunk_layers.clear();
  p.embedding_as_stage = p.loss_as_stage = p.balanced_split = p.compute_balanced_split = false;
}

// Megatron's explicit layout: its stage count over pp is vpp (a vpp given beside it must agree).
std::optional<Error> read_pipeline_layout(const SettingReader& r, Parallelism& p) {
  std::string text;
  if (auto e = r.text("pipeline_layout", text)) return e;
  if (text.empty()) return std::nullopt;
  Result<PipelineLayout> layout = parse_pipeline_layout(text);
  if (!layout) return layout.error();
  const auto stages = static_cast<int64_t>(layout->chunk_layers.size());
  if (p.pp < 1 || stages % p.pp != 0)
    return Error{"pipeline_layout", text, fmt::format("a multiple of pp = {} stages", p.pp),
                 fmt::format("it has {} stages", stages)};
  if (r.has("vpp") && p.vpp != stages / p.pp)
    return Error{"vpp", std::to_string(p.vpp),
                 fmt::format("{} (the layout's {} stages over pp = {}), or leave vpp out",
                             stages / p.pp, stages, p.pp),
                 ""};
  p.vpp = stages / p.pp;
  p.chunk_layers = std::move(layout->chunk_layers);
  return std::nullopt;
}

std::optional<Error> read_parallel(const SettingReader& r, Parallelism& p) {
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
  if (auto e = read_pipeline_layout(r, p)) return e;
  if (auto e = r.boolean("sequence_parallel", p.sequence_parallel)) return e;
  if (auto e = r.boolean("loss_parallel", p.loss_parallel)) return e;
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

namespace {

std::optional<Error> read_conventions(const SettingReader& r, Conventions& c) {
  if (auto e = r.integer("vocab_pad_multiple", c.vocab_pad_multiple)) return e;
  if (auto e = r.integer("loss_bytes_per_logit", c.loss_bytes_per_logit)) return e;
  if (c.loss_bytes_per_logit < 1 || c.loss_bytes_per_logit > 64)
    return Error{"loss_bytes_per_logit", std::to_string(c.loss_bytes_per_logit), "1 to 64", ""};
  if (auto e = r.integer("loss_chunks", c.loss_chunks)) return e;
  if (c.loss_chunks < 0 || c.loss_chunks > 4096)
    return Error{"loss_chunks", std::to_string(c.loss_chunks), "0 (not chunked) to 4096", ""};
  if (auto e = r.integer("gated_mlp_tensors", c.gated_mlp_tensors)) return e;
  if (c.gated_mlp_tensors < 2 || c.gated_mlp_tensors > 8)
    return Error{"gated_mlp_tensors", std::to_string(c.gated_mlp_tensors), "2 to 8", ""};
  if (auto e = r.boolean("lazy_gradients", c.lazy_gradients)) return e;
  if (auto e = r.boolean("fsdp_mixed_precision", c.fsdp_mixed_precision)) return e;
  if (auto e = r.boolean("fsdp_root_unit", c.fsdp_root_unit)) return e;
  if (auto e = r.integer("zero3_live_params", c.zero3_live_params)) return e;
  if (c.zero3_live_params < 0 || c.zero3_live_params > (int64_t{1} << 50))
    return Error{"zero3_live_params", std::to_string(c.zero3_live_params), "0 to 2^50 parameters",
                 ""};
  if (auto e = r.integer("comm_bucket_elements", c.comm_bucket_elements)) return e;
  if (c.comm_bucket_elements < 0 || c.comm_bucket_elements > (int64_t{1} << 40))
    return Error{"comm_bucket_elements", std::to_string(c.comm_bucket_elements),
                 "0 to 2^40 elements", ""};
  if (auto e = r.boolean("optimizer_foreach_temporaries", c.optimizer_foreach_temporaries))
    return e;
  if (auto e = r.boolean("pipeline_keeps_stage_outputs", c.pipeline_keeps_stage_outputs)) return e;
  if (auto e = r.boolean("pipeline_keeps_last_outputs", c.pipeline_keeps_last_outputs)) return e;
  if (auto e = r.boolean("tp_embedding_grad_whole", c.tp_embedding_grad_whole)) return e;
  if (auto e = r.boolean("mha_keeps_packed_qkv", c.mha_keeps_packed_qkv)) return e;
  if (auto e = r.boolean("sp_saves_gathered_inputs", c.sp_saves_gathered_inputs)) return e;
  if (auto e = r.boolean("tp_comm_overlap", c.tp_comm_overlap)) return e;
  if (auto e = r.boolean("ep_comm_overlap", c.ep_comm_overlap)) return e;
  if (auto e = r.choice("moe_dispatcher", kMoeDispatcherNames, c.moe_dispatcher)) return e;
  if (auto e = r.boolean("tp_allgather_buffer", c.tp_allgather_buffer)) return e;
  if (auto e = r.boolean("attention_scores_buffer", c.attention_scores_buffer)) return e;
  if (auto e = r.boolean("fp32_grad_copy", c.fp32_grad_copy)) return e;
  return r.boolean("pipeline_fsdp_unsharded", c.pipeline_fsdp_unsharded);
}

std::optional<Error> read_overheads(const SettingReader& r, Overheads& o) {
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

std::optional<Error> read_offload(const SettingReader& r, Offload& o) {
  if (auto e = r.choice("offload_optimizer", kOffloadTierNames, o.optimizer)) return e;
  if (auto e = r.choice("offload_params", kOffloadTierNames, o.params)) return e;
  if (auto e = r.number("optimizer_offload_fraction", o.optimizer_fraction)) return e;
  return r.boolean("offload_activations", o.activations);
}

std::optional<Error> read_host(const SettingReader& r, ResolvedScenario& out) {
  if (r.has("host_memory_gib")) {
    double gib = 0;
    if (auto e = r.number("host_memory_gib", gib)) return e;
    if (!(gib > 0 && gib <= 1e7))
      return Error{"host_memory_gib", fmt::format("{}", gib),
                   "a capacity above 0 and at most 10,000,000 GiB", ""};
    out.host_memory_gib = gib;
  }
  return std::nullopt;
}

std::optional<Error> read_hardware(const SettingReader& r, ResolvedScenario& out) {
  if (auto e = read_host(r, out)) return e;
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

// Gradient accumulation steps make the global batch: micro_batch·grad_accum·dp (a global batch
// given beside them must agree).
std::optional<Error> batch_from_accumulation(const SettingReader& r, Training& tr,
                                             const Parallelism& par, bool sane) {
  if (!r.has("grad_accum")) return std::nullopt;
  int64_t accum = 1;
  if (auto e = r.integer("grad_accum", accum)) return e;
  if (accum < 1 || accum > (1 << 20))
    return Error{"grad_accum", std::to_string(accum), "an integer from 1 to 1,048,576", ""};
  if (!sane) return std::nullopt;  // validation names the micro-batch or layout
  const int64_t implied = tr.micro_batch * accum * par.dp;
  if (r.has("global_batch") && tr.global_batch != implied)
    return Error{"grad_accum", std::to_string(accum),
                 "global_batch / (micro_batch·dp), or leave one of them out",
                 fmt::format("global_batch = {} but micro_batch·grad_accum·dp = {}·{}·{} = {}",
                             tr.global_batch, tr.micro_batch, accum, par.dp, implied)};
  tr.global_batch = implied;
  return std::nullopt;
}

// Without a global batch, a step is one microbatch per rank, or enough microbatches to fill the
// pipeline twice; the user is told which.
std::optional<Error> default_batch(const SettingReader& r, ResolvedScenario& out) {
  Training& tr = out.scenario.training;
  const Parallelism& par = out.scenario.parallel;
  // Out-of-range inputs are left for validation to name; multiplying them could overflow.
  const bool sane = tr.micro_batch > 0 && tr.micro_batch <= (1 << 20) && par.dp > 0 &&
                    par.dp <= (1 << 24) && par.pp > 0 && par.pp <= (1 << 20);
  if (auto e = batch_from_accumulation(r, tr, par, sane)) return e;
  if (tr.global_batch > 0 || !sane) return std::nullopt;
  tr.global_batch = default_global_batch(out.scenario.parallel, tr.micro_batch);
  if (out.scenario.parallel.pp > 1)
    out.warnings.push_back(fmt::format(
        "global_batch not given: assumed {} sequences ({} microbatches per step) to fill the "
        "pipeline",
        tr.global_batch, tr.global_batch / (tr.micro_batch * out.scenario.parallel.dp)));
  return std::nullopt;
}

}  // namespace

namespace {

Result<ResolvedScenario> resolve_settings(const json& settings, const FileReader& read_file,
                                          const ModelFetcher& fetch_model) {
  const SettingReader r(settings);
  ResolvedScenario out;
  Framework framework = Framework::kMegatron;
  if (auto e = r.choice("framework", kFrameworkNames, framework)) return *e;
  if (r.has("framework")) apply_framework(framework, out.scenario);
  // The model code's conventions over the framework's; single convention keys win over both.
  ModelCode model_code = ModelCode::kDefault;
  if (auto e = r.choice("model_code", kModelCodeNames, model_code)) return *e;
  if (r.has("model_code")) apply_model_code(model_code, out.scenario);
  Result<ParsedModel> model = read_model(r, settings, read_file, fetch_model);
  if (!model) return model.error();
  out.scenario.model = std::move(model->model);
  out.warnings = model->warnings;
  if (auto e = read_training(r, out.scenario.training)) return *e;
  if (auto e = read_finetune_settings(settings, out.scenario)) return *e;
  if (auto e = read_parallel(r, out.scenario.parallel)) return *e;
  if (auto e = default_batch(r, out)) return *e;
  if (auto e = read_conventions(r, out.scenario.conventions)) return *e;
  if (auto e = read_overheads(r, out.scenario.overheads)) return *e;
  if (auto e = read_offload(r, out.scenario.offload)) return *e;
  if (auto e = read_images(settings, out.scenario.images)) return *e;
  if (auto e = read_hardware(r, out)) return *e;
  return out;
}

}  // namespace

Result<ResolvedScenario> resolve_scenario(const json& settings, const FileReader& read_file,
                                          const ModelFetcher& fetch_model) {
  if (!settings.is_object())
    return Error{"scenario", settings.dump().substr(0, 60), "a JSON object of settings", ""};
  if (auto e = unknown_setting(settings, scenario_options(), "scenario")) return *e;
  Result<SettingsWithImport> applied = apply_from(settings, ImportFor::kEstimate);
  if (!applied) return applied.error();
  SettingsWithImport request = std::move(applied).value();
  // The user's own words in the framework's vocabulary (a file's settings are vramplan's already).
  json given = settings;
  given.erase("from");
  given.erase("from_format");
  given.erase("from_files");
  std::vector<VocabularyNote> notes = read_framework_words(request.settings, given);
  Result<ResolvedScenario> resolved = resolve_settings(request.settings, read_file, fetch_model);
  if (!resolved)
    return request.imported ? name_as_imported(resolved.error(), *request.imported, settings)
                            : resolved.error();
  ResolvedScenario out = std::move(resolved).value();
  for (const VocabularyNote& n : notes) out.warnings.push_back(n.text());
  out.vocabulary = std::move(notes);
  if (!request.imported) return out;
  out.warnings.insert(out.warnings.begin(), request.imported->warnings.begin(),
                      request.imported->warnings.end());
  out.imported = std::move(request.imported);
  return out;
}

// --- Shared with the other scenario kinds -------------------------------------------------

Result<ParsedModel> resolve_model(const json& settings, const FileReader& read_file,
                                  const ModelFetcher& fetch_model) {
  if (!settings.is_object())
    return Error{"scenario", settings.dump().substr(0, 60), "a JSON object of settings", ""};
  return read_model(SettingReader(settings), settings, read_file, fetch_model);
}

std::optional<Error> read_integer_setting(const json& settings, const char* key, int64_t& out) {
  return SettingReader(settings).integer(key, out);
}
std::optional<Error> read_number_setting(const json& settings, const char* key, double& out) {
  return SettingReader(settings).number(key, out);
}
std::optional<Error> read_bool_setting(const json& settings, const char* key, bool& out) {
  return SettingReader(settings).boolean(key, out);
}
std::optional<Error> read_text_setting(const json& settings, const char* key, std::string& out) {
  return SettingReader(settings).text(key, out);
}

}  // namespace vramplan
