#include "report/scenario_json.h"

#include "vramplan/training/finetune.h"
#include "vramplan/training/frameworks.h"

namespace vramplan::report_json {
namespace {

using nlohmann::json;

std::string_view mlp_name(MlpKind m) { return m == MlpKind::kGated ? "gated" : "plain"; }

std::string_view norm_name(NormKind n) { return n == NormKind::kRmsNorm ? "rmsnorm" : "layernorm"; }

std::string_view attention_name(AttentionKind a) {
  return a == AttentionKind::kStandard ? "standard" : "mla";
}

// Layer indices where pred holds: the MoE or sliding-window layers, compactly.

template <class T, class Pred>

json indices_where(const std::vector<T>& layers, Pred pred) {
  json ids = json::array();
  for (std::size_t i = 0; i < layers.size(); ++i) {
    if (pred(layers[i])) ids.push_back(i);
  }
  return ids;
}

json model_json(const ModelConfig& m) {
  const MlaConfig& mla = m.mla;
  const MoeConfig& moe = m.moe;
  return {
      {"name", m.name},
      {"model_type", m.model_type},
      {"hidden", m.hidden},
      {"num_layers", m.num_layers},
      {"num_heads", m.num_heads},
      {"num_kv_heads", m.num_kv_heads},
      {"head_dim", m.head_dim},
      {"ffn", m.ffn},
      {"vocab", m.vocab},
      {"max_position_embeddings", m.max_position_embeddings},
      {"tied_embeddings", m.tied_embeddings},
      {"mlp", mlp_name(m.mlp)},
      {"norm", norm_name(m.norm)},
      {"norms_per_layer", m.norms_per_layer},
      {"final_norm", m.final_norm},
      {"learned_position_embeddings", m.learned_position_embeddings},
      {"qkv_bias", m.qkv_bias},
      {"attn_out_bias", m.attn_out_bias},
      {"mlp_bias", m.mlp_bias},
      {"qk_norm", m.qk_norm},
      {"qk_norm_full_width", m.qk_norm_full_width},
      {"attention_sinks", m.attention_sinks},
      {"attention", attention_name(m.attention)},
      {"mla",
       {{"q_lora_rank", mla.q_lora_rank},
        {"kv_lora_rank", mla.kv_lora_rank},
        {"qk_nope_head_dim", mla.qk_nope_head_dim},
        {"qk_rope_head_dim", mla.qk_rope_head_dim},
        {"v_head_dim", mla.v_head_dim}}},
      {"moe",
       {{"num_experts", moe.num_experts},
        {"top_k", moe.top_k},
        {"expert_ffn", moe.expert_ffn},
        {"shared_experts", moe.shared_experts},
        {"shared_expert_ffn", moe.shared_expert_ffn},
        {"router_bias", moe.router_bias},
        {"expert_bias", moe.expert_bias},
        {"router_correction_bias", moe.router_correction_bias}}},
      {"moe_layers", indices_where(m.moe_layers, [](bool moe_layer) { return moe_layer; })},
      {"sliding_layers",
       indices_where(m.layer_attention,
                     [](LayerAttention a) { return a == LayerAttention::kSliding; })},
      {"sliding_window", m.sliding_window},
      {"mtp_layers", m.mtp_layers},
  };
}

json training_json(const Training& t) {
  return {
      {"seq_len", t.seq_len},
      {"micro_batch", t.micro_batch},
      {"global_batch", t.global_batch},
      {"param_dtype", dtype_name(t.param_dtype)},
      {"grad_dtype", dtype_name(t.grad_dtype)},
      {"fp32_grad_accumulation", t.fp32_grad_accumulation},
      {"reduce_dtype", dtype_name(t.reduce_dtype)},
      {"master_weights", t.master_weights},
      {"optimizer_state_dtype", dtype_name(t.optimizer_state_dtype)},
      {"activation_dtype", dtype_name(t.activation_dtype)},
      {"optimizer", optimizer_name(t.optimizer)},
      {"recompute", recompute_name(t.recompute)},
      {"recompute_layers", t.recompute_layers},
      {"flash_attention", t.flash_attention},
      {"dropout", t.dropout},
      {"moe_grouped_gemm", t.moe_grouped_gemm},
      {"fp8", fp8_recipe_name(t.fp8)},
      {"fp8_params", t.fp8_params},
  };
}

json parallel_json(const Parallelism& p) {
  return {
      {"tp", p.tp},
      {"sequence_parallel", p.sequence_parallel},
      {"loss_parallel", p.loss_parallel},
      {"pp", p.pp},
      {"vpp", p.vpp},
      {"schedule", schedule_name(p.schedule)},
      {"dp", p.dp},
      {"cp", p.cp},
      {"ep", p.ep},
      {"etp", p.etp},
      {"zero", p.zero},
      {"fsdp", fsdp_name(p.fsdp)},
      {"fsdp_shard_group", p.fsdp_shard_group},
      {"distributed_optimizer", p.distributed_optimizer},
      {"fsdp_prefetch", p.fsdp_prefetch},
      {"first_stage_layers", p.first_stage_layers},
      {"last_stage_layers", p.last_stage_layers},
      {"embedding_as_stage", p.embedding_as_stage},
      {"loss_as_stage", p.loss_as_stage},
      {"chunk_layers", p.chunk_layers},
      {"pipeline_split", p.compute_balanced_split ? "compute"
                         : p.balanced_split       ? "balanced"
                                                  : "even"},
      {"world_size", p.world_size()},
  };
}

json conventions_json(const Scenario& s) {
  const Conventions& c = s.conventions;
  return {{"framework", s.framework_id < 0 ? "none" : framework_name(Framework(s.framework_id))},
          {"model_code", model_code_name(c.model_code)},
          {"vocab_pad_multiple", c.vocab_pad_multiple},
          {"gated_mlp_tensors", c.gated_mlp_tensors},
          {"loss_bytes_per_logit", c.loss_bytes_per_logit},
          {"loss_chunks", c.loss_chunks},
          {"sp_saves_gathered_inputs", c.sp_saves_gathered_inputs},
          {"tp_comm_overlap", c.tp_comm_overlap},
          {"ep_comm_overlap", c.ep_comm_overlap},
          {"moe_dispatcher", moe_dispatcher_name(c.moe_dispatcher)},
          {"ddp_bucket_copy", c.ddp_bucket_copy},
          {"zero3_live_params", c.zero3_live_params},
          {"autocast_weight_cache", c.autocast_weight_cache},
          {"comm_bucket_elements", c.comm_bucket_elements},
          {"optimizer_foreach_temporaries", c.optimizer_foreach_temporaries},
          {"lazy_gradients", c.lazy_gradients},
          {"fsdp_mixed_precision", c.fsdp_mixed_precision},
          {"fsdp_root_unit", c.fsdp_root_unit},
          {"pipeline_keeps_stage_outputs", c.pipeline_keeps_stage_outputs},
          {"pipeline_keeps_last_outputs", c.pipeline_keeps_last_outputs},
          {"tp_embedding_grad_whole", c.tp_embedding_grad_whole},
          {"mha_keeps_packed_qkv", c.mha_keeps_packed_qkv},
          {"tp_allgather_buffer", c.tp_allgather_buffer},
          {"pipeline_fsdp_unsharded", c.pipeline_fsdp_unsharded},
          {"attention_scores_buffer", c.attention_scores_buffer},
          {"fp32_grad_copy", c.fp32_grad_copy},
          {"compute_balanced_split", s.parallel.compute_balanced_split}};
}

// Parameters that train: the adapters under LoRA / QLoRA, else every weight but the frozen
// embedding and first layers (MTP modules included, as they train).
int64_t trainable_parameters(const Scenario& s, const ParamCounts& p) {
  const Finetune& f = s.finetune;
  if (f.method != FinetuneMethod::kNone)
    return lora_parameters(s.model, f, s.conventions.model_code);
  int64_t frozen = f.freeze_embeddings ? p.embedding + p.position_embedding : 0;
  for (int64_t i = 0; i < f.freeze_first_layers && i < static_cast<int64_t>(p.layers.size()); ++i)
    frozen += p.layers[static_cast<size_t>(i)].total();
  return p.total + p.mtp_total - frozen;
}

// What trains and how (finetune.h), so that a user can check what an imported recipe set.
json finetune_json(const Scenario& s, const ParamCounts* params) {
  const Finetune& f = s.finetune;
  const bool lora = f.method != FinetuneMethod::kNone;
  json out = {
      {"method", finetune_name(f.method)},
      {"lora_rank", lora ? json(f.lora_rank) : json(nullptr)},
      {"lora_targets", lora ? json(lora_targets_text(f.lora_targets)) : json(nullptr)},
      {"adapter_dtype", lora ? json(dtype_name(f.adapter_dtype)) : json(nullptr)},
      // QLoRA stores the frozen linear layers in NF4 with double quantisation.
      {"base_weights",
       f.method == FinetuneMethod::kQlora ? "nf4" : dtype_name(s.training.param_dtype)},
      {"freeze_embeddings", f.freeze_embeddings},
      {"freeze_first_layers", f.freeze_first_layers},
  };
  if (params != nullptr) out["trainable_parameters"] = trainable_parameters(s, *params);
  return out;
}

}  // namespace

json parameters_json(const ParamCounts& p) {
  json breakdown = json::array();
  for (const ParamComponent& c : p.breakdown) {
    breakdown.push_back({{"name", c.name}, {"count", c.count}});
  }
  return {{"total", p.total},     {"active", p.active}, {"embedding", p.embedding},
          {"lm_head", p.lm_head}, {"mtp", p.mtp_total}, {"breakdown", std::move(breakdown)}};
}

json scenario_json(const Scenario& s, const ParamCounts* params) {
  const Overheads& o = s.overheads;
  json out = {{"model", model_json(s.model)},
              {"conventions", conventions_json(s)},
              {"training", training_json(s.training)},
              {"finetune", finetune_json(s, params)},
              {"parallel", parallel_json(s.parallel)},
              {"offload",
               {{"optimizer", offload_tier_name(s.offload.optimizer)},
                {"params", offload_tier_name(s.offload.params)},
                {"optimizer_fraction", s.offload.optimizer_fraction},
                {"activations", s.offload.activations}}},
              {"overheads",
               {{"cuda_context_bytes", o.cuda_context_bytes},
                {"nccl_bytes_per_group", o.nccl_bytes_per_group},
                {"gemm_workspace_bytes", o.gemm_workspace_bytes},
                {"allocator_fraction", o.allocator_fraction},
                {"per_layer_cuda_graphs", o.per_layer_cuda_graphs}}}};
  if (s.images.count > 0)
    out["images"] = {
        {"count", s.images.count}, {"width", s.images.width}, {"height", s.images.height}};
  return out;
}

}  // namespace vramplan::report_json
