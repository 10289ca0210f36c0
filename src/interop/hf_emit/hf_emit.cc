#include "interop/hf_emit/hf_emit.h"

#include <fmt/format.h>

#include "interop/emitters.h"
#include "vramplan/model/hf_config.h"
#include "vramplan/model/presets.h"
#include "vramplan/training/finetune.h"
#include "vramplan/training/frameworks.h"

namespace vramplan::interop::hf_emit {
namespace {

bool same_shape(const ModelConfig& a, const ModelConfig& b) {
  return a.hidden == b.hidden && a.num_layers == b.num_layers && a.num_heads == b.num_heads &&
         a.num_kv_heads == b.num_kv_heads && a.head_dim == b.head_dim && a.ffn == b.ffn &&
         a.vocab == b.vocab && a.tied_embeddings == b.tied_embeddings &&
         a.moe.num_experts == b.moe.num_experts && a.moe.top_k == b.moe.top_k &&
         a.moe.expert_ffn == b.moe.expert_ffn && a.moe.shared_experts == b.moe.shared_experts;
}

struct Field {
  const char* setting;
  std::function<std::string(const Scenario&)> value;
};

std::string text(bool b) { return b ? "true" : "false"; }
std::string text(int64_t n) { return std::to_string(n); }
std::string text(double d) { return fmt::format("{}", d); }

// The conventions and overheads as settings (options.cc), each with its value.
const std::vector<Field>& fields() {
  static const std::vector<Field> kFields = {
      {"framework",
       [](const Scenario& s) {
         return s.framework_id < 0 ? std::string("none")
                                   : std::string(framework_name(Framework(s.framework_id)));
       }},
      {"model_code",
       [](const Scenario& s) { return std::string(model_code_name(s.conventions.model_code)); }},
      {"vocab_pad_multiple",
       [](const Scenario& s) { return text(s.conventions.vocab_pad_multiple); }},
      {"gated_mlp_tensors",
       [](const Scenario& s) { return text(s.conventions.gated_mlp_tensors); }},
      {"loss_bytes_per_logit",
       [](const Scenario& s) { return text(s.conventions.loss_bytes_per_logit); }},
      {"loss_chunks", [](const Scenario& s) { return text(s.conventions.loss_chunks); }},
      {"sp_saves_gathered_inputs",
       [](const Scenario& s) { return text(s.conventions.sp_saves_gathered_inputs); }},
      {"ddp_bucket_copy (a framework convention)",
       [](const Scenario& s) { return text(s.conventions.ddp_bucket_copy); }},
      {"autocast_weight_cache (a framework convention)",
       [](const Scenario& s) { return text(s.conventions.autocast_weight_cache); }},
      {"comm_bucket_elements",
       [](const Scenario& s) { return text(s.conventions.comm_bucket_elements); }},
      {"zero3_live_params",
       [](const Scenario& s) { return text(s.conventions.zero3_live_params); }},
      {"optimizer_foreach_temporaries",
       [](const Scenario& s) { return text(s.conventions.optimizer_foreach_temporaries); }},
      {"lazy_gradients", [](const Scenario& s) { return text(s.conventions.lazy_gradients); }},
      {"fsdp_mixed_precision",
       [](const Scenario& s) { return text(s.conventions.fsdp_mixed_precision); }},
      {"pipeline_keeps_stage_outputs",
       [](const Scenario& s) { return text(s.conventions.pipeline_keeps_stage_outputs); }},
      {"tp_embedding_grad_whole",
       [](const Scenario& s) { return text(s.conventions.tp_embedding_grad_whole); }},
      {"mha_keeps_packed_qkv",
       [](const Scenario& s) { return text(s.conventions.mha_keeps_packed_qkv); }},
      {"tp_allgather_buffer",
       [](const Scenario& s) { return text(s.conventions.tp_allgather_buffer); }},
      {"pipeline_fsdp_unsharded",
       [](const Scenario& s) { return text(s.conventions.pipeline_fsdp_unsharded); }},
      {"attention_scores_buffer",
       [](const Scenario& s) { return text(s.conventions.attention_scores_buffer); }},
      {"fp32_grad_copy", [](const Scenario& s) { return text(s.conventions.fp32_grad_copy); }},
      {"offload_optimizer",
       [](const Scenario& s) { return std::string(offload_tier_name(s.offload.optimizer)); }},
      {"offload_params",
       [](const Scenario& s) { return std::string(offload_tier_name(s.offload.params)); }},
      {"optimizer_offload_fraction",
       [](const Scenario& s) { return text(s.offload.optimizer_fraction); }},
      {"offload_activations", [](const Scenario& s) { return text(s.offload.activations); }},
      {"cuda_context_gib", [](const Scenario& s) { return text(s.overheads.cuda_context_bytes); }},
      {"nccl_gib_per_group",
       [](const Scenario& s) { return text(s.overheads.nccl_bytes_per_group); }},
      {"gemm_workspace_mib",
       [](const Scenario& s) { return text(s.overheads.gemm_workspace_bytes); }},
      {"allocator_overhead",
       [](const Scenario& s) { return text(s.overheads.allocator_fraction); }},
      {"cuda_graphs", [](const Scenario& s) { return text(s.overheads.per_layer_cuda_graphs); }},
      {"reduce_dtype",
       [](const Scenario& s) { return std::string(dtype_name(s.training.reduce_dtype)); }},
      {"pipeline_split", [](const Scenario& s) {
         return text(s.parallel.balanced_split) + text(s.parallel.compute_balanced_split) +
                text(s.parallel.embedding_as_stage) + text(s.parallel.loss_as_stage);
       }}};
  return kFields;
}

}  // namespace

Result<std::string> model_name(const std::string& format, const Scenario& s) {
  const std::string& name = s.model.name;
  if (const Preset* preset = find_preset(name)) {
    Result<ParsedModel> parsed = parse_hf_config(preset->config, preset->name);
    if (parsed && !same_shape(parsed->model, s.model))
      return cannot_emit(format,
                         "the " + format + " run loads " + preset->name +
                             " by name, whose shape the settings changed",
                         "a model as its config.json says (no hidden_size, num_layers ... beside)");
    return preset->hub_id.empty() ? preset->name : preset->hub_id;
  }
  if (name.empty() || name == "custom" || name == "inline config")
    return cannot_emit(format, "the " + format + " run loads a model by its Hub id or directory",
                       "--model with a preset, a Hub id or a path to a config.json");
  if (name.ends_with("/config.json")) return name.substr(0, name.size() - 12);
  return name;
}

std::optional<Error> check_data_parallel(const std::string& format, const Scenario& s) {
  const Parallelism& p = s.parallel;
  const std::pair<const char*, int64_t> degrees[] = {
      {"tp", p.tp}, {"pp", p.pp}, {"vpp", p.vpp}, {"cp", p.cp}, {"ep", p.ep}};
  for (const auto& [name, degree] : degrees)
    if (degree != 1)
      return cannot_emit(format,
                         fmt::format("vramplan writes the {} run data-parallel only ({} = {})",
                                     format, name, degree),
                         std::string(name) + " 1 (--emit megatron writes model parallelism)");
  const Training& t = s.training;
  if (t.recompute == Recompute::kSelective || t.recompute == Recompute::kSelectiveOp ||
      t.recompute_layers > 0)
    return cannot_emit(format, "the HF stack recomputes whole layers (gradient checkpointing)",
                       "recompute none or full, without recompute_layers");
  if (t.fp8 != Fp8Recipe::kNone || t.fp8_params)
    return cannot_emit(format, "fp8 linear layers are Transformer Engine's (Megatron)", "fp8 none");
  if (t.dropout)
    return cannot_emit(format, "the model's dropout comes from its config.json", "dropout false");
  if (t.moe_grouped_gemm)
    return cannot_emit(format, "grouped GEMMs are Megatron's", "moe_grouped_gemm false");
  if (s.finetune.freeze_embeddings || s.finetune.freeze_first_layers > 0)
    return cannot_emit(format, "the HF stack's arguments freeze no layers",
                       "freeze_embeddings false, freeze_first_layers 0 (or LoRA)");
  return std::nullopt;
}

Result<hf::Precision> precision_of(const std::string& format, const Scenario& s,
                                   hf::Weights weights) {
  const Training& t = s.training;
  for (hf::Precision p : {hf::Precision::kBf16, hf::Precision::kFp16, hf::Precision::kFp32}) {
    const hf::PrecisionPlan plan = hf::precision_plan(p, weights);
    const bool adapters = s.finetune.method != FinetuneMethod::kNone;
    // LoRA's optimizer states follow the adapters; 8-bit states have no dtype.
    const bool states = adapters || t.optimizer == Optimizer::kAdam8bit ||
                        t.optimizer_state_dtype == plan.optimizer;
    if (t.param_dtype == plan.param && t.grad_dtype == plan.grad &&
        t.activation_dtype == plan.activation && t.master_weights == plan.master_weights && states)
      return p;
  }
  return cannot_emit(
      format,
      fmt::format("param_dtype {}, grad_dtype {}, activation_dtype {}, master_weights {} are no "
                  "precision the {} run trains in",
                  dtype_name(t.param_dtype), dtype_name(t.grad_dtype),
                  dtype_name(t.activation_dtype), t.master_weights, format),
      weights == hf::Weights::kMaster ? "bf16, fp16 or fp32 weights with fp32 master weights"
      : weights == hf::Weights::kPure ? "weights, gradients and optimizer states in one dtype"
                                      : "fp32 weights under bf16 / fp16 autocast, or fp32");
}

Result<int64_t> accumulation_steps(const std::string& format, const Scenario& s) {
  const int64_t per_step = s.training.micro_batch * s.parallel.dp;
  if (per_step <= 0 || s.training.global_batch % per_step != 0)
    return cannot_emit(format, "gradient accumulation steps are whole",
                       "global_batch a multiple of micro_batch·dp");
  return s.training.global_batch / per_step;
}

std::optional<Error> check_conventions(const std::string& format, const Scenario& s,
                                       const Scenario& reference) {
  for (const Field& f : fields()) {
    if (f.value(s) == f.value(reference)) continue;
    return cannot_emit(format,
                       fmt::format("{} = {}, where the {} file reads back {}", f.setting,
                                   f.value(s), format, f.value(reference)),
                       fmt::format("{} {} (the {} run's)", f.setting, f.value(reference), format));
  }
  return std::nullopt;
}

std::string FlagLines::text(const std::string& command) const {
  std::string out = command;
  for (const std::string& l : lines_) out += " \\\n    " + l;
  return out + "\n";
}

Result<FlagLines> trainer_flags(const std::string& format, const Scenario& s,
                                hf::Precision precision, bool recompute_flag) {
  Result<std::string> model = model_name(format, s);
  if (!model) return model.error();
  Result<int64_t> accum = accumulation_steps(format, s);
  if (!accum) return accum.error();
  FlagLines f;
  f.add("--model_name_or_path", *model);
  f.add("--per_device_train_batch_size", s.training.micro_batch);
  f.add("--gradient_accumulation_steps", *accum);
  f.add("--max_length", s.training.seq_len);  // TRL SFTConfig (formerly max_seq_length)
  if (precision != hf::Precision::kFp32) f.add(std::string("--") + hf::precision_name(precision));
  if (recompute_flag && s.training.recompute == Recompute::kFull) f.add("--gradient_checkpointing");
  if (!s.training.flash_attention) f.add("--attn_implementation", "eager");
  const Finetune& ft = s.finetune;
  if (ft.method != FinetuneMethod::kNone) {
    f.add("--use_peft");
    f.add("--lora_r", ft.lora_rank);
    std::string modules;
    for (const std::string& m : hf::peft_module_names(ft.lora_targets))
      modules += (modules.empty() ? "" : " ") + m;
    f.add("--lora_target_modules", modules);
    f.add("--lora_dropout", "0");
    if (ft.method == FinetuneMethod::kQlora) {
      f.add("--load_in_4bit");
      f.add("--use_bnb_nested_quant");  // QLoRA's double quantisation, as vramplan counts it
    }
  }
  return f;
}

std::pair<int64_t, int64_t> nodes_of(int64_t world) {
  const int64_t per_node = world <= 8 ? world : (world % 8 == 0 ? 8 : 1);
  return {per_node, world / per_node};
}

}  // namespace vramplan::interop::hf_emit
