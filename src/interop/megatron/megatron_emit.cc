// The scenario as a Megatron-LM launch script in the shape of its examples (arrays of arguments,
// torchrun over nodes): Megatron's own names for the model's shape, the layout, recomputation,
// precision and the conventions vramplan applied, so that `--from` reads it back to the same
// estimate. What Megatron-LM's GPT model or launcher cannot express is an error naming it.
#include "interop/megatron/megatron_emit.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "interop/emitters.h"
#include "training/chunk_split.h"
#include "vramplan/training/pipeline_layout.h"

namespace vramplan::interop {
namespace {

constexpr const char* kFormat = "megatron";

struct Arg {
  std::string name, value;  // value "" for a flag
};

class Args {
 public:
  void add(std::string name, std::string value = "") {
    list_.push_back({std::move(name), std::move(value)});
  }
  void add(std::string name, int64_t value) { add(std::move(name), std::to_string(value)); }
  std::string bash_array(const std::string& array) const {
    std::string out = array + "=(\n";
    for (const Arg& a : list_)
      out += "    " + a.name + (a.value.empty() ? "" : " " + a.value) + "\n";
    return out + ")\n";
  }
  bool empty() const { return list_.empty(); }

 private:
  std::vector<Arg> list_;
};

std::optional<Error> refuse_model(const ModelConfig& m) {
  auto no = [&](const std::string& what) {
    return cannot_emit(kFormat, what + " (" + m.name + ")",
                       "a model Megatron-LM's GPT arguments describe: pre-norm decoder layers with "
                       "full attention");
  };
  if (std::any_of(m.layer_attention.begin(), m.layer_attention.end(),
                  [](LayerAttention a) { return a == LayerAttention::kSliding; }))
    return no("Megatron-LM's GPT arguments have no sliding-window layers");
  if (m.norms_per_layer != 2)
    return no("Megatron-LM's GPT layers have two norms, not " + std::to_string(m.norms_per_layer));
  if (m.attention_sinks) return no("Megatron-LM's GPT arguments have no attention sinks");
  if (m.qk_norm_full_width) return no("Megatron-LM's qk layernorm is per head");
  if (m.mlp_bias != m.attn_out_bias) return no("Megatron-LM biases every linear or none");
  if (m.moe.router_bias || m.moe.expert_bias)
    return no("Megatron-LM's GPT arguments have no router or expert biases");
  return std::nullopt;
}

void model_args(const Scenario& s, const nlohmann::json& settings, Args& a) {
  const ModelConfig& m = s.model;
  a.add("--num-layers", m.num_layers);
  a.add("--hidden-size", m.hidden);
  a.add("--ffn-hidden-size", m.ffn);
  a.add("--num-attention-heads", m.num_heads);
  if (m.attention == AttentionKind::kStandard && m.num_kv_heads != m.num_heads) {
    a.add("--group-query-attention");
    a.add("--num-query-groups", m.num_kv_heads);
  }
  if (m.attention == AttentionKind::kStandard) a.add("--kv-channels", m.head_dim);
  if (m.mlp == MlpKind::kGated) a.add("--swiglu");
  a.add("--normalization", m.norm == NormKind::kRmsNorm ? "RMSNorm" : "LayerNorm");
  if (!m.attn_out_bias) a.add("--disable-bias-linear");
  if (m.qkv_bias && !m.attn_out_bias) a.add("--add-qkv-bias");
  a.add("--position-embedding-type", m.learned_position_embeddings ? "learned_absolute" : "rope");
  if (!m.tied_embeddings) a.add("--untie-embeddings-and-output-weights");
  if (m.qk_norm) a.add("--qk-layernorm");
  if (m.attention == AttentionKind::kMla) {
    a.add("--multi-latent-attention");
    if (m.mla.q_lora_rank > 0) a.add("--q-lora-rank", m.mla.q_lora_rank);
    a.add("--kv-lora-rank", m.mla.kv_lora_rank);
    a.add("--qk-head-dim", m.mla.qk_nope_head_dim);
    a.add("--qk-pos-emb-head-dim", m.mla.qk_rope_head_dim);
    a.add("--v-head-dim", m.mla.v_head_dim);
  }
  if (m.is_moe()) {
    a.add("--num-experts", m.moe.num_experts);
    a.add("--moe-router-topk", m.moe.top_k);
    a.add("--moe-ffn-hidden-size", m.moe.expert_ffn);
    // Megatron's one shared expert of the summed width holds the same weights and activations
    // as n shared experts side by side (DeepSeek's n_shared_experts × moe_intermediate_size).
    if (m.moe.shared_experts > 0)
      a.add("--moe-shared-expert-intermediate-size",
            m.moe.shared_experts * m.moe.shared_expert_ffn);
    if (m.moe.router_correction_bias) a.add("--moe-router-enable-expert-bias");
    if (m.moe.router_groups > 1) {
      a.add("--moe-router-num-groups", m.moe.router_groups);
      a.add("--moe-router-group-topk", m.moe.router_group_top_k);
    }
    std::string pattern = "[";
    for (size_t i = 0; i < m.moe_layers.size(); ++i)
      pattern += (i ? "," : "") + std::string(m.moe_layers[i] ? "1" : "0");
    a.add("--moe-layer-freq", "'" + pattern + "]'");
  }
  if (m.mtp_layers > 0) a.add("--mtp-num-layers", m.mtp_layers);
  a.add("--max-position-embeddings", std::max(m.max_position_embeddings, s.training.seq_len));
  // The tokenizer gives the vocabulary: the preset's own, else the null tokenizer (which adds
  // its end-of-document token to --vocab-size).
  const std::string hub_id = preset_hub_id(settings);
  if (!hub_id.empty()) {
    a.add("--tokenizer-type", "HuggingFaceTokenizer");
    a.add("--tokenizer-model", hub_id);
  } else {
    a.add("--tokenizer-type", "NullTokenizer");
    a.add("--vocab-size", m.vocab - 1);
  }
}

std::optional<Error> training_args(const Scenario& s, Args& a) {
  const Training& t = s.training;
  a.add("--seq-length", t.seq_len);
  a.add("--micro-batch-size", t.micro_batch);
  if (t.global_batch > 0) a.add("--global-batch-size", t.global_batch);
  if (!t.dropout) {
    a.add("--hidden-dropout", "0.0");
    a.add("--attention-dropout", "0.0");
  }
  if (!t.flash_attention) a.add("--attention-backend", "unfused");
  switch (t.recompute) {
    case Recompute::kNone:
      break;
    case Recompute::kSelective:
      a.add("--recompute-granularity", "selective");
      break;
    case Recompute::kFull:
      a.add("--recompute-granularity", "full");
      if (t.recompute_layers > 0) {
        a.add("--recompute-method", "block");
        a.add("--recompute-num-layers", t.recompute_layers);
      } else {
        a.add("--recompute-method", "uniform");
        a.add("--recompute-num-layers", 1);
      }
      break;
    case Recompute::kSelectiveOp:
      return cannot_emit(kFormat, "Megatron-LM has no op-level selective checkpointing",
                         "recompute none, selective or full");
  }
  if (t.param_dtype == DType::kBf16) {
    a.add("--bf16");
  } else if (t.param_dtype == DType::kFp16) {
    a.add("--fp16");
    if (t.fp32_grad_accumulation) a.add("--accumulate-allreduce-grads-in-fp32");
  } else if (t.param_dtype != DType::kFp32) {
    return cannot_emit(kFormat, "Megatron-LM trains in bf16, fp16 or fp32",
                       "param_dtype bf16, fp16 or fp32");
  }
  if (t.fp8 != Fp8Recipe::kNone) {
    a.add("--fp8-format", "hybrid");
    a.add("--fp8-recipe", fp8_recipe_name(t.fp8));
    if (t.fp8_params) a.add("--fp8-param-gather");
  }
  switch (t.optimizer) {
    case Optimizer::kAdamW:
      break;
    case Optimizer::kSgdMomentum:
      a.add("--optimizer", "sgd");
      break;
    case Optimizer::kMuon:
      a.add("--optimizer", "muon");
      break;
    default:
      return cannot_emit(
          kFormat, std::string("Megatron-LM has no ") + optimizer_name(t.optimizer) + " optimizer",
          "optimizer adamw, sgd-momentum or muon");
  }
  if (t.optimizer_state_dtype != DType::kFp32) {
    a.add("--use-precision-aware-optimizer");
    a.add("--exp-avg-dtype", std::string(dtype_name(t.optimizer_state_dtype)));
    a.add("--exp-avg-sq-dtype", std::string(dtype_name(t.optimizer_state_dtype)));
  }
  if (s.finetune.method != FinetuneMethod::kNone)
    return cannot_emit(kFormat, "Megatron-LM's pretrain_gpt.py has no LoRA",
                       "finetune none (Megatron-Bridge or NeMo run LoRA)");
  return std::nullopt;
}

// ZeRO-1/2 and FSDP full_shard as Megatron-FSDP's sharding strategies, with the flags its
// documentation requires beside them (megatron/core/distributed/fsdp/README.md).
std::optional<Error> sharding_args(const Parallelism& p, Args& a) {
  const char* strategy = nullptr;
  if (p.fsdp == FsdpMode::kFullShard && p.zero == 0)
    strategy = "optim_grads_params";
  else if (p.fsdp == FsdpMode::kNone && (p.zero == 1 || p.zero == 2))
    strategy = p.zero == 1 ? "optim" : "optim_grads";
  else if (p.zero > 0 || p.fsdp != FsdpMode::kNone)
    return cannot_emit(kFormat,
                       "Megatron-FSDP shards as ZeRO-1, ZeRO-2 or FSDP full_shard (not " +
                           std::string(p.zero > 0 ? "ZeRO-" + std::to_string(p.zero)
                                                  : "FSDP " + std::string(fsdp_name(p.fsdp))) +
                           ")",
                       "zero 1, zero 2, fsdp full_shard, or distributed_optimizer");
  if (strategy == nullptr) return std::nullopt;
  a.add("--use-megatron-fsdp");
  a.add("--data-parallel-sharding-strategy", strategy);
  a.add("--use-distributed-optimizer");
  a.add("--no-gradient-accumulation-fusion");
  a.add("--ckpt-format", "fsdp_dtensor");
  return std::nullopt;
}

// Megatron's own default is allgather, so the dispatcher is always written.
void dispatcher_args(MoeDispatcher d, Args& a) {
  if (d == MoeDispatcher::kDeepEp || d == MoeDispatcher::kHybridEp) {
    a.add("--moe-token-dispatcher-type", std::string("flex"));
    a.add("--moe-flex-dispatcher-backend", std::string(moe_dispatcher_name(d)));
  } else {
    a.add("--moe-token-dispatcher-type", std::string(moe_dispatcher_name(d)));
  }
}

std::optional<Error> parallel_args(const Scenario& s, Args& a) {
  const Parallelism& p = s.parallel;
  a.add("--tensor-model-parallel-size", p.tp);
  a.add("--pipeline-model-parallel-size", p.pp);
  // Splits Megatron has no flag for (balanced, by compute cost) are written as its explicit
  // layout, as is a layout read from one.
  const bool explicit_layout =
      p.pp > 1 && (!p.chunk_layers.empty() || p.balanced_split || p.compute_balanced_split);
  if (explicit_layout) {
    const ChunkSplit split(s.model, p);
    std::vector<int64_t> sizes;
    for (int64_t c = 0; c < split.chunks(); ++c) sizes.push_back(split.size(c));
    a.add("--pipeline-model-parallel-layout",
          "\"" + pipeline_layout_text(sizes, s.model.mtp_layers) + "\"");
  } else if (p.vpp > 1) {
    a.add("--num-virtual-stages-per-pipeline-rank", p.vpp);
  }
  if (p.cp > 1) a.add("--context-parallel-size", p.cp);
  if (s.model.is_moe()) {
    a.add("--expert-model-parallel-size", p.ep);
    a.add("--expert-tensor-parallel-size", p.etp);
  }
  if (p.tp > 1 && p.sequence_parallel) a.add("--sequence-parallel");
  if (p.tp > 1 && s.conventions.tp_comm_overlap) a.add("--tp-comm-overlap");
  if (p.ep > 1 && s.conventions.ep_comm_overlap) a.add("--overlap-moe-expert-parallel-comm");
  if (s.model.is_moe()) dispatcher_args(s.conventions.moe_dispatcher, a);
  if (p.tp > 1 && !p.loss_parallel)
    return cannot_emit(kFormat, "Megatron's cross entropy always runs on vocabulary shards",
                       "loss_parallel true");
  if (p.distributed_optimizer) a.add("--use-distributed-optimizer");
  if (auto e = sharding_args(p, a)) return e;
  // Megatron offloads the optimizer (HybridDeviceOptimizer) of its distributed optimizer only.
  const Offload& o = s.offload;
  if (o.params != OffloadTier::kNone || o.optimizer == OffloadTier::kNvme ||
      (o.optimizer != OffloadTier::kNone && !p.distributed_optimizer))
    return cannot_emit(kFormat,
                       "Megatron-LM offloads the distributed optimizer's states to the CPU only",
                       "offload_params none, offload_optimizer cpu with distributed_optimizer");
  if (o.activations)
    return cannot_emit(kFormat, "vramplan writes no fine-grained activation offloading flags",
                       "offload_activations false");
  if (o.optimizer == OffloadTier::kCpu) {
    a.add("--optimizer-cpu-offload");
    a.add("--optimizer-offload-fraction", fmt::format("{}", o.optimizer_fraction));
  }
  if (explicit_layout) {
    // The layout places every layer.
  } else if (p.first_stage_layers > 0)
    a.add("--decoder-first-pipeline-num-layers", p.first_stage_layers);
  if (!explicit_layout) {
    if (p.last_stage_layers > 0) a.add("--decoder-last-pipeline-num-layers", p.last_stage_layers);
    if (p.embedding_as_stage) a.add("--account-for-embedding-in-pipeline-split");
    if (p.loss_as_stage) a.add("--account-for-loss-in-pipeline-split");
  }
  if (p.schedule == Schedule::kGPipe)
    return cannot_emit(kFormat, "Megatron-LM has no all-forward-all-backward schedule",
                       "schedule 1f1b or interleaved");
  return std::nullopt;
}

void convention_args(const Scenario& s, Args& a) {
  const Conventions& c = s.conventions;
  if (c.vocab_pad_multiple != 128) a.add("--make-vocab-size-divisible-by", c.vocab_pad_multiple);
  if (c.attention_scores_buffer) {
    a.add("--transformer-impl", "local");
  } else {
    a.add("--transformer-impl", "transformer_engine");
    if (s.training.moe_grouped_gemm) a.add("--moe-grouped-gemm");
  }
  if (c.loss_bytes_per_logit >= 10) a.add("--cross-entropy-loss-fusion");
  if (s.overheads.per_layer_cuda_graphs) a.add("--cuda-graph-impl", "local");
}

}  // namespace

Result<std::string> emit_megatron(const Scenario& s, const nlohmann::json& settings) {
  if (auto e = refuse_model(s.model)) return *e;
  Args model, training, parallel, conventions;
  model_args(s, settings, model);
  if (auto e = training_args(s, training)) return *e;
  if (auto e = parallel_args(s, parallel)) return *e;
  convention_args(s, conventions);
  const int64_t world = s.parallel.world_size();
  // Nodes of 8 GPUs where the world divides into them, else one process per node.
  const int64_t per_node = world <= 8 ? world : (world % 8 == 0 ? 8 : 1);
  const int64_t nodes = world / per_node;
  std::string out = fmt::format(
      "#!/bin/bash\n# {} on {} GPUs, written by vramplan (--emit megatron): Megatron-LM's\n"
      "# pretrain_gpt.py with this run's model, layout and training. Data and checkpoint\n"
      "# arguments are yours to add; --mock-data trains on synthetic tokens.\n\n"
      "export CUDA_DEVICE_MAX_CONNECTIONS=1\n\nGPUS_PER_NODE={}\nNUM_NODES={}\n\n",
      s.model.name.empty() ? "A model" : s.model.name, world, per_node, nodes);
  out += "DISTRIBUTED_ARGS=(\n    --nproc_per_node $GPUS_PER_NODE\n    --nnodes $NUM_NODES\n)\n\n";
  out += model.bash_array("MODEL_ARGS") + "\n" + training.bash_array("TRAINING_ARGS") + "\n" +
         parallel.bash_array("MODEL_PARALLEL_ARGS") + "\n" +
         conventions.bash_array("IMPLEMENTATION_ARGS") + "\n";
  out += "DATA_ARGS=(\n    --mock-data\n)\n\n";
  out +=
      "torchrun ${DISTRIBUTED_ARGS[@]} pretrain_gpt.py \\\n    ${MODEL_ARGS[@]} \\\n"
      "    ${TRAINING_ARGS[@]} \\\n    ${MODEL_PARALLEL_ARGS[@]} \\\n"
      "    ${IMPLEMENTATION_ARGS[@]} \\\n    ${DATA_ARGS[@]}\n";
  return out;
}

}  // namespace vramplan::interop
