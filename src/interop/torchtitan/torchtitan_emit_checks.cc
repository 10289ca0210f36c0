#include "interop/torchtitan/torchtitan_emit_checks.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "interop/emitters.h"
#include "vramplan/model/hf_config.h"
#include "vramplan/training/frameworks.h"

namespace vramplan::interop {
namespace {

// The parts of a model that decide its memory (its name and context length do not).
bool same_model(const ModelConfig& a, const ModelConfig& b) {
  auto shared = [](const ModelConfig& m) { return m.moe.shared_experts * m.moe.shared_expert_ffn; };
  // A dense layer's width matters only where the model has dense layers.
  const bool dense_layers = !a.is_moe() || std::find(a.moe_layers.begin(), a.moe_layers.end(),
                                                     false) != a.moe_layers.end();
  return a.hidden == b.hidden && a.num_layers == b.num_layers && a.num_heads == b.num_heads &&
         a.num_kv_heads == b.num_kv_heads && a.head_dim == b.head_dim && a.vocab == b.vocab &&
         a.tied_embeddings == b.tied_embeddings && a.mlp == b.mlp && a.norm == b.norm &&
         a.norms_per_layer == b.norms_per_layer && a.final_norm == b.final_norm &&
         a.learned_position_embeddings == b.learned_position_embeddings &&
         a.qkv_bias == b.qkv_bias && a.attn_out_bias == b.attn_out_bias &&
         a.mlp_bias == b.mlp_bias && a.qk_norm == b.qk_norm &&
         a.qk_norm_full_width == b.qk_norm_full_width && a.attention_sinks == b.attention_sinks &&
         a.attention == b.attention && a.mla.q_lora_rank == b.mla.q_lora_rank &&
         a.mla.kv_lora_rank == b.mla.kv_lora_rank &&
         a.mla.qk_nope_head_dim == b.mla.qk_nope_head_dim &&
         a.mla.qk_rope_head_dim == b.mla.qk_rope_head_dim && a.mla.v_head_dim == b.mla.v_head_dim &&
         a.moe.num_experts == b.moe.num_experts && a.moe.top_k == b.moe.top_k &&
         a.moe.expert_ffn == b.moe.expert_ffn && shared(a) == shared(b) &&
         a.moe.router_bias == b.moe.router_bias && a.moe.expert_bias == b.moe.expert_bias &&
         a.moe.router_correction_bias == b.moe.router_correction_bias &&
         a.moe_layers == b.moe_layers && a.layer_attention == b.layer_attention &&
         a.mtp_layers == b.mtp_layers && (!dense_layers || a.ffn == b.ffn);
}

// Conventions and overheads vramplan's torchtitan preset sets, by name: a scenario that changed
// one would read back without the change.
std::vector<std::string> changed_conventions(const Scenario& s) {
  Scenario ref;
  apply_framework(Framework::kTorchtitan, ref);
  const Conventions& a = s.conventions;
  const Conventions& b = ref.conventions;
  std::vector<std::string> out;
  auto check = [&](const char* name, auto mine, auto theirs) {
    if (mine != theirs) out.push_back(fmt::format("{} {} (torchtitan's: {})", name, mine, theirs));
  };
  check("vocab_pad_multiple", a.vocab_pad_multiple, b.vocab_pad_multiple);
  check("gated_mlp_tensors", a.gated_mlp_tensors, b.gated_mlp_tensors);
  check("loss_bytes_per_logit", a.loss_bytes_per_logit, b.loss_bytes_per_logit);
  check("loss_chunks", a.loss_chunks, b.loss_chunks);
  check("sp_saves_gathered_inputs", a.sp_saves_gathered_inputs, b.sp_saves_gathered_inputs);
  check("ddp_bucket_copy", a.ddp_bucket_copy, b.ddp_bucket_copy);
  check("autocast_weight_cache", a.autocast_weight_cache, b.autocast_weight_cache);
  check("comm_bucket_elements", a.comm_bucket_elements, b.comm_bucket_elements);
  check("zero3_live_params", a.zero3_live_params, b.zero3_live_params);
  check("optimizer_foreach_temporaries", a.optimizer_foreach_temporaries,
        b.optimizer_foreach_temporaries);
  check("lazy_gradients", a.lazy_gradients, b.lazy_gradients);
  check("fsdp_mixed_precision", a.fsdp_mixed_precision, b.fsdp_mixed_precision);
  check("pipeline_keeps_stage_outputs", a.pipeline_keeps_stage_outputs,
        b.pipeline_keeps_stage_outputs);
  check("tp_embedding_grad_whole", a.tp_embedding_grad_whole, b.tp_embedding_grad_whole);
  check("mha_keeps_packed_qkv", a.mha_keeps_packed_qkv, b.mha_keeps_packed_qkv);
  check("tp_allgather_buffer", a.tp_allgather_buffer, b.tp_allgather_buffer);
  check("pipeline_fsdp_unsharded", a.pipeline_fsdp_unsharded, b.pipeline_fsdp_unsharded);
  check("attention_scores_buffer", a.attention_scores_buffer, b.attention_scores_buffer);
  check("fp32_grad_copy", a.fp32_grad_copy, b.fp32_grad_copy);
  const Overheads& o = s.overheads;
  const Overheads& r = ref.overheads;
  check("cuda_context_bytes", o.cuda_context_bytes, r.cuda_context_bytes);
  check("nccl_bytes_per_group", o.nccl_bytes_per_group, r.nccl_bytes_per_group);
  check("allocator_overhead", o.allocator_fraction, r.allocator_fraction);
  check("gemm_workspace_bytes", o.gemm_workspace_bytes, r.gemm_workspace_bytes);
  check("cuda_graphs", o.per_layer_cuda_graphs, r.per_layer_cuda_graphs);
  return out;
}

std::optional<Error> refuse_training(const Training& t) {
  auto no = [](const std::string& what, const std::string& instead) {
    return cannot_emit(kTitanFormat, what, instead);
  };
  if (t.fp8 != Fp8Recipe::kNone || t.fp8_params)
    return no(
        "torchtitan's float8 (torchao Float8Linear) keeps bf16 inputs and no fp8 weight "
        "copies; vramplan's fp8 setting is Transformer Engine's",
        "fp8 none (a torchtitan TOML with the float8 converter reads as bf16)");
  if (t.dropout) return no("torchtitan's models have no dropout", "dropout false");
  if (!t.flash_attention)
    return no("torchtitan runs fused attention (SDPA, flex or varlen)", "flash_attention true");
  if (t.moe_grouped_gemm)
    return no(
        "torchtitan's grouped GEMMs (torch._grouped_mm) keep no Transformer Engine "
        "workspaces",
        "moe_grouped_gemm false");
  if (t.optimizer != Optimizer::kAdamW)
    return no(std::string("torchtitan's optimizers are AdamW and Adam, not ") +
                  optimizer_name(t.optimizer),
              "optimizer adamw");
  if (t.recompute == Recompute::kSelective)
    return no(
        "torchtitan has no recomputation of the attention core alone (Megatron's "
        "selective): its selective is op-level (selective-op) or every N-th layer",
        "recompute none, full or selective-op");
  return std::nullopt;
}

}  // namespace

const TitanFlavor* titan_flavor_of_model(const ModelConfig& model) {
  for (const TitanFlavor& f : titan_flavors()) {
    if (f.n_layers != model.num_layers || f.dim != model.hidden) continue;
    Result<ParsedModel> built = parse_hf_config(titan_model_config(f, 4096).dump(), f.flavor);
    if (built && same_model(built->model, model)) return &f;
  }
  return nullptr;
}

std::optional<Error> refuse_for_torchtitan(const Scenario& s) {
  if (s.framework_id != static_cast<int>(Framework::kTorchtitan))
    return cannot_emit(
        kTitanFormat,
        std::string("the scenario follows ") +
            (s.framework_id < 0
                 ? std::string("no framework's conventions")
                 : std::string(framework_name(static_cast<Framework>(s.framework_id))) +
                       "'s conventions"),
        "--framework torchtitan");
  if (const std::vector<std::string> changed = changed_conventions(s); !changed.empty())
    return cannot_emit(
        kTitanFormat,
        fmt::format("torchtitan's conventions are fixed by its code: {}", fmt::join(changed, "; ")),
        "torchtitan's own conventions (leave the convention settings out)");
  if (s.finetune.method != FinetuneMethod::kNone || s.finetune.freeze_embeddings ||
      s.finetune.freeze_first_layers > 0)
    return cannot_emit(kTitanFormat, "torchtitan pretrains every weight (no LoRA or frozen layers)",
                       "finetune none");
  return refuse_training(s.training);
}

}  // namespace vramplan::interop
