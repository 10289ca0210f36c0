#include "training/scenario_checks.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "training/model_states.h"
#include "training/multimodal/vision_activations.h"
#include "training/pipeline.h"
#include "vramplan/model/hf_config.h"
#include "vramplan/training/finetune.h"

namespace vramplan {
namespace {

using std::to_string;

// Sizes beyond these are not physical and would push byte counts toward 64-bit overflow.
constexpr int64_t kMaxSeqLen = int64_t{1} << 26;  // 67M tokens
constexpr int64_t kMaxMicroBatch = int64_t{1} << 20;
constexpr int64_t kMaxGlobalBatch = int64_t{1} << 40;
constexpr int64_t kMaxDegree = int64_t{1} << 20;  // any single parallel degree
constexpr int64_t kMaxWorld = int64_t{1} << 24;   // 16M GPUs

std::optional<Error> check_range(const char* field, int64_t value, int64_t lo, int64_t hi) {
  if (value >= lo && value <= hi) return std::nullopt;
  return Error{field, to_string(value), "an integer from " + to_string(lo) + " to " + to_string(hi),
               ""};
}

std::string divisors_of(int64_t n) {
  std::string out;
  int listed = 0;
  for (int64_t d = 1; d <= n && listed < 12; ++d) {
    if (n % d != 0) continue;
    out += (out.empty() ? "" : ", ") + to_string(d);
    ++listed;
  }
  return out;
}

Error not_divisor(const char* field, int64_t value, int64_t of, const std::string& what) {
  return Error{field, to_string(value),
               "a divisor of " + to_string(of) + " (" + divisors_of(of) + ")",
               what + " " + to_string(of) + " is not divisible by " + to_string(value)};
}

std::optional<Error> check_sizes(const Scenario& s) {
  const Training& tr = s.training;
  const Parallelism& p = s.parallel;
  const std::pair<const char*, int64_t> degrees[] = {{"tp", p.tp},  {"pp", p.pp}, {"vpp", p.vpp},
                                                     {"dp", p.dp},  {"cp", p.cp}, {"ep", p.ep},
                                                     {"etp", p.etp}};
  if (auto e = check_range("seq_len", tr.seq_len, 1, kMaxSeqLen)) return e;
  if (auto e = check_range("micro_batch", tr.micro_batch, 1, kMaxMicroBatch)) return e;
  if (auto e = check_range("global_batch", tr.global_batch, 0, kMaxGlobalBatch)) return e;
  for (const auto& [name, value] : degrees)
    if (auto e = check_range(name, value, 1, kMaxDegree)) return e;
  if (static_cast<__int128>(p.tp) * p.pp * p.cp * p.dp > kMaxWorld)
    return Error{"dp", to_string(p.dp), "tp·pp·cp·dp of at most " + to_string(kMaxWorld) + " GPUs",
                 "the world size is beyond any cluster"};
  if (auto e = check_range("zero", p.zero, 0, 3)) return e;
  if (auto e = check_range("vocab_pad_multiple", s.conventions.vocab_pad_multiple, 1, 65536))
    return e;
  if (auto e = check_range("gated_mlp_tensors", s.conventions.gated_mlp_tensors, 1, 16)) return e;
  if (auto e = check_range("loss_bytes_per_logit", s.conventions.loss_bytes_per_logit, 0, 64))
    return e;
  if (auto e = check_range("recompute_layers", tr.recompute_layers, 0, 1'000'000)) return e;
  if (auto e = check_range("fsdp_shard_group", p.fsdp_shard_group, 0, kMaxWorld)) return e;
  if (auto e = check_range("fsdp_prefetch", p.fsdp_prefetch, 0, 64)) return e;
  if (auto e = check_range("first_stage_layers", p.first_stage_layers, 0, 1'000'000)) return e;
  if (auto e = check_range("last_stage_layers", p.last_stage_layers, 0, 1'000'000)) return e;
  const Overheads& o = s.overheads;
  if (auto e = check_range("cuda_context_gib", o.cuda_context_bytes >> 30, 0, 64)) return e;
  if (o.cuda_context_bytes < 0)
    return Error{"cuda_context_gib", to_string(o.cuda_context_bytes), "0 to 64 GiB", ""};
  if (o.nccl_bytes_per_group < 0 || o.nccl_bytes_per_group > (int64_t{64} << 30))
    return Error{"nccl_gib_per_group", to_string(o.nccl_bytes_per_group), "0 to 64 GiB", ""};
  if (o.gemm_workspace_bytes < 0 || o.gemm_workspace_bytes > (int64_t{64} << 30))
    return Error{"gemm_workspace_mib", to_string(o.gemm_workspace_bytes >> 20), "0 to 65536 (MiB)",
                 ""};
  if (!std::isfinite(o.allocator_fraction) || o.allocator_fraction < 0 || o.allocator_fraction > 4)
    return Error{"allocator_overhead", fmt::format("{}", o.allocator_fraction),
                 "a fraction from 0 to 4 (0.1 = reserved 10% above allocated)", ""};
  return std::nullopt;
}

std::optional<Error> check_tensor_parallel(const Scenario& s) {
  const ModelConfig& m = s.model;
  const Parallelism& p = s.parallel;
  if (m.num_heads % p.tp != 0) return not_divisor("tp", p.tp, m.num_heads, "attention heads");
  if (m.attention == AttentionKind::kStandard && m.num_kv_heads % p.tp != 0)
    return not_divisor("tp", p.tp, m.num_kv_heads, "key/value heads");
  const bool has_dense_mlp = !m.is_moe() || std::find(m.moe_layers.begin(), m.moe_layers.end(),
                                                      false) != m.moe_layers.end();
  if (has_dense_mlp && m.ffn % p.tp != 0) return not_divisor("tp", p.tp, m.ffn, "the FFN width");
  // Mamba-2 and DeltaNet mixers split their heads over tp (Mamba's B/C groups are replicated
  // when they do not divide, as vLLM's MambaMixer2 does).
  for (LayerMixer kind : m.layer_mixer) {
    if (kind == LayerMixer::kMamba2 && m.mamba.num_heads % p.tp != 0)
      return not_divisor("tp", p.tp, m.mamba.num_heads, "Mamba-2 heads");
    if (kind == LayerMixer::kGatedDeltaNet && m.deltanet.num_k_heads % p.tp != 0)
      return not_divisor("tp", p.tp, m.deltanet.num_k_heads, "gated-DeltaNet key heads");
  }
  const int64_t local_seq = s.training.seq_len / p.cp;
  if (p.tp > 1 && p.sequence_parallel && local_seq % p.tp != 0)
    return Error{"seq_len", to_string(s.training.seq_len),
                 "a multiple of tp·cp = " + to_string(p.tp * p.cp) + " with sequence parallelism",
                 "sequence parallelism splits each CP rank's " + to_string(local_seq) +
                     " tokens over tp = " + to_string(p.tp)};
  return std::nullopt;
}

std::optional<Error> check_context_parallel(const Scenario& s) {
  const int64_t cp = s.parallel.cp;
  // Causal load balancing gives each CP rank two chunks of the sequence (Megatron, TE).
  if (cp > 1 && s.training.seq_len % (2 * cp) != 0)
    return Error{"cp", to_string(cp), "a cp with seq_len divisible by 2·cp",
                 "seq_len " + to_string(s.training.seq_len) +
                     " is not divisible by 2·cp = " + to_string(2 * cp)};
  return std::nullopt;
}

std::optional<Error> check_experts(const Scenario& s) {
  const ModelConfig& m = s.model;
  const Parallelism& p = s.parallel;
  if (!m.is_moe()) {
    if (p.ep > 1)
      return Error{"ep", to_string(p.ep), "1 for a dense model", m.name + " has no experts"};
    if (p.etp > 1)
      return Error{"etp", to_string(p.etp), "1 for a dense model", m.name + " has no experts"};
    return std::nullopt;
  }
  if (m.moe.num_experts % p.ep != 0)
    return not_divisor("ep", p.ep, m.moe.num_experts, "routed experts");
  if (m.moe.expert_ffn % p.etp != 0)
    return not_divisor("etp", p.etp, m.moe.expert_ffn, "the expert FFN width");
  const int64_t expert_world = p.tp * p.cp * p.dp;
  if (expert_world % (p.ep * p.etp) != 0)
    return Error{"ep", to_string(p.ep), "ep·etp dividing tp·cp·dp = " + to_string(expert_world),
                 "experts are laid out over the tp·cp·dp ranks of a pipeline stage; ep·etp = " +
                     to_string(p.ep * p.etp)};
  return std::nullopt;
}

std::optional<Error> check_schedule(const Scenario& s) {
  const Parallelism& p = s.parallel;
  if (p.vpp > 1 && p.pp == 1)
    return Error{"vpp", to_string(p.vpp), "1 when pp = 1", "virtual stages interleave a pipeline"};
  if (p.vpp > 1 && p.schedule != Schedule::kInterleaved && p.schedule != Schedule::kGPipe)
    return Error{"schedule", "1f1b", "interleaved (or gpipe) when vpp > 1", ""};
  if (p.schedule == Schedule::kInterleaved && p.vpp == 1)
    return Error{"schedule", "interleaved", "1f1b or gpipe when vpp = 1, or set vpp > 1", ""};
  return validate_pipeline(s.model, p);
}

std::optional<Error> check_sharding(const Scenario& s) {
  const Parallelism& p = s.parallel;
  if (p.zero > 0 && p.fsdp != FsdpMode::kNone)
    return Error{"zero", to_string(p.zero), "0 when fsdp is set (they are two names for sharding)",
                 ""};
  if (p.distributed_optimizer && (p.zero > 0 || p.fsdp != FsdpMode::kNone))
    return Error{"distributed_optimizer", "true", "false when zero or fsdp is set", ""};
  if (p.fsdp_shard_group > 0 && p.fsdp != FsdpMode::kHybridShard)
    return Error{"fsdp_shard_group", to_string(p.fsdp_shard_group), "only with fsdp hybrid_shard",
                 ""};
  const int64_t data_ranks = p.dp * p.cp;
  if (p.fsdp == FsdpMode::kHybridShard && p.fsdp_shard_group > 0 &&
      data_ranks % p.fsdp_shard_group != 0)
    return not_divisor("fsdp_shard_group", p.fsdp_shard_group, data_ranks, "dp·cp");
  return std::nullopt;
}

std::optional<Error> check_batch(const Scenario& s) {
  const Training& tr = s.training;
  const int64_t per_step = tr.micro_batch * s.parallel.dp;
  if (tr.global_batch > 0 && tr.global_batch % per_step != 0)
    return Error{"global_batch", to_string(tr.global_batch),
                 "a multiple of micro_batch·dp = " + to_string(per_step), ""};
  return std::nullopt;
}

std::optional<Error> check_recompute(const Scenario& s) {
  const Training& tr = s.training;
  if (tr.recompute_layers > 0 && tr.recompute != Recompute::kFull)
    return Error{"recompute_layers", to_string(tr.recompute_layers), "0 unless recompute is full",
                 ""};
  const bool mla = s.model.attention == AttentionKind::kMla;
  if (tr.recompute == Recompute::kSelectiveOp && (mla || s.model.is_moe()))
    return Error{"recompute", "selective-op", "none, selective or full for MoE and MLA models",
                 "op-level selective checkpointing is modelled for dense layers with standard "
                 "attention only"};
  return std::nullopt;
}

std::optional<Error> check_fp8(const Scenario& s) {
  const Training& tr = s.training;
  if (tr.fp8_params && tr.fp8 == Fp8Recipe::kNone)
    return Error{"fp8_params", "true", "false unless fp8 names a recipe",
                 "fp8 primary weights need an fp8 recipe (--fp8 tensorwise, delayed, blockwise "
                 "or mxfp8)"};
  if (tr.fp8 == Fp8Recipe::kNone) return std::nullopt;
  if (sharding_of(s.parallel).params)
    return Error{"fp8", fp8_recipe_name(tr.fp8), "none with ZeRO-3 or sharded FSDP",
                 "fp8 training with sharded parameters (float8 all-gathers) is not modelled yet"};
  if (tr.recompute == Recompute::kSelectiveOp)
    return Error{"fp8", fp8_recipe_name(tr.fp8), "none with selective-op recompute",
                 "op-level selective checkpointing is modelled for bf16 layers only"};
  return std::nullopt;
}

}  // namespace

// Offload (docs/offload.md): which framework's mechanism each setting names, and what it needs.
// DeepSpeed: offload_optimizer with ZeRO 1-3, offload_param only with ZeRO-3, NVMe
// (ZeRO-Infinity) only with ZeRO-3 (deepspeed/runtime/zero/config.py, stage3.py). FSDP: one
// CPUOffload knob moves the sharded parameters, their gradients and so the optimizer's step to
// the CPU (torch.distributed.fsdp CPUOffload / FSDP2 CPUOffloadPolicy): both settings say cpu.
// Megatron: --optimizer-cpu-offload needs --use-distributed-optimizer (megatron/training/
// arguments.py) and offloads no parameters.
std::optional<Error> check_offload(const Scenario& s) {
  const Offload& o = s.offload;
  const Parallelism& p = s.parallel;
  const bool fsdp = p.fsdp != FsdpMode::kNone;
  const std::string opt = offload_tier_name(o.optimizer);
  const std::string par = offload_tier_name(o.params);
  if (!(o.optimizer_fraction > 0.0 && o.optimizer_fraction <= 1.0))
    return Error{"optimizer_offload_fraction", fmt::format("{}", o.optimizer_fraction),
                 "a fraction above 0, at most 1", ""};
  if (o.optimizer_fraction < 1.0 && o.optimizer == OffloadTier::kNone)
    return Error{"optimizer_offload_fraction", fmt::format("{}", o.optimizer_fraction),
                 "1 unless offload_optimizer is cpu or nvme", ""};
  if (o.optimizer_fraction < 1.0 && o.optimizer == OffloadTier::kNvme)
    return Error{"optimizer_offload_fraction", fmt::format("{}", o.optimizer_fraction),
                 "1 with offload_optimizer nvme",
                 "a partial offload (Megatron's fraction, DeepSpeed's ratio) keeps the rest on "
                 "the GPU and is a CPU offload"};
  if (o.params != OffloadTier::kNone) {
    if (p.zero != 3 && !(fsdp && sharding_of(p).params))
      return Error{"offload_params", par,
                   "none unless zero is 3 or fsdp is full_shard/hybrid_shard",
                   "only ZeRO-3 (offload_param) and sharded FSDP (CPUOffload) keep parameters "
                   "off the GPU between uses"};
    if (o.params == OffloadTier::kNvme && o.optimizer == OffloadTier::kNone)
      return Error{"offload_params", par, "none or cpu unless offload_optimizer is set too",
                   "ZeRO-Infinity swaps parameters to NVMe beside an offloaded optimizer"};
  }
  if (o.optimizer != OffloadTier::kNone) {
    if (p.zero == 0 && !fsdp && !p.distributed_optimizer)
      return Error{"offload_optimizer", opt,
                   "none unless zero is 1-3, fsdp shards, or distributed_optimizer is on",
                   "DeepSpeed's ZeRO-Offload needs a ZeRO stage, Megatron's "
                   "--optimizer-cpu-offload its distributed optimizer"};
    if (o.optimizer == OffloadTier::kNvme && p.zero != 3)
      return Error{"offload_optimizer", opt, "none or cpu unless zero is 3",
                   "ZeRO-Infinity's NVMe optimizer swapping runs with ZeRO stage 3 only"};
    if (o.optimizer_fraction < 1.0 && p.zero > 0 && p.zero != 3)
      return Error{"optimizer_offload_fraction", fmt::format("{}", o.optimizer_fraction),
                   "1 unless zero is 3 (DeepSpeed offload_optimizer.ratio) or Megatron's "
                   "distributed optimizer",
                   ""};
  }
  if (fsdp) {
    if (o.optimizer == OffloadTier::kNvme || o.params == OffloadTier::kNvme)
      return Error{o.params == OffloadTier::kNvme ? "offload_params" : "offload_optimizer", "nvme",
                   "none or cpu with fsdp", "FSDP offloads to CPU memory only"};
    if (o.optimizer != o.params)
      return Error{"offload_optimizer", opt, fmt::format("{} (as offload_params) with fsdp", par),
                   "FSDP's one CPUOffload knob moves the parameter shards and the optimizer "
                   "together"};
    if (o.optimizer_fraction < 1.0)
      return Error{"optimizer_offload_fraction", fmt::format("{}", o.optimizer_fraction),
                   "1 with fsdp", ""};
  }
  if (p.distributed_optimizer && o.params != OffloadTier::kNone)
    return Error{"offload_params", par, "none with distributed_optimizer",
                 "Megatron offloads optimizer states, never parameters"};
  if (o.optimizer != OffloadTier::kNone && finetune_active(s.finetune))
    return Error{"offload_optimizer", opt, "none with finetune lora/qlora",
                 "offloading the adapters' small optimizer is not modelled"};
  return std::nullopt;
}

std::optional<Error> validate_scenario(const Scenario& s) {
  if (auto e = validate_model(s.model)) return e;
  if (auto e = check_sizes(s)) return e;
  if (auto e = check_tensor_parallel(s)) return e;
  if (auto e = check_context_parallel(s)) return e;
  if (auto e = check_experts(s)) return e;
  if (auto e = check_schedule(s)) return e;
  if (auto e = check_sharding(s)) return e;
  if (auto e = check_batch(s)) return e;
  if (auto e = check_recompute(s)) return e;
  if (auto e = check_fp8(s)) return e;
  if (auto e = check_offload(s)) return e;
  if (auto e = check_images(s)) return e;
  return std::nullopt;
}

int64_t default_global_batch(const Parallelism& par, int64_t micro_batch) {
  return micro_batch * par.dp * (par.pp > 1 ? 2 * par.pp : 1);
}

int64_t microbatches_of(const Scenario& s) {
  const int64_t global = s.training.global_batch > 0
                             ? s.training.global_batch
                             : default_global_batch(s.parallel, s.training.micro_batch);
  return global / (s.training.micro_batch * s.parallel.dp);
}

}  // namespace vramplan
