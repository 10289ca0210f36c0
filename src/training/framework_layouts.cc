#include "training/framework_layouts.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <string>

#include "training/pipeline.h"
#include "vramplan/training/pipeline_split.h"

namespace vramplan {
namespace {

FrameworkLayouts megatron() {
  FrameworkLayouts f;
  // schedules.py: forward_backward_pipelining_without_interleaving (1F1B) and
  // _with_interleaving; there is no all-forward-all-backward schedule.
  f.schedule = {Schedule::k1F1B, Schedule::kInterleaved};
  // Sharding: DDP, the distributed optimizer (ZeRO-1), and Megatron-FSDP's
  // --data-parallel-sharding-strategy optim (ZeRO-1), optim_grads (ZeRO-2: the parameters stay
  // whole) and optim_grads_params (FSDP full_shard, as is --use-torch-fsdp2); with
  // --outer-dp-sharding-strategy no_shard and --num-distributed-optimizer-instances > 1
  // Megatron-FSDP shards within groups and replicates across them (HSDP, hybrid_shard)
  // (megatron/core/distributed/fsdp/src/README.md). It has no FSDP SHARD_GRAD_OP (gather once,
  // keep the parameters through the backward pass) and no DeepSpeed ZeRO-3.
  f.zero = {0, 1, 2};
  f.fsdp = {FsdpMode::kNone, FsdpMode::kFullShard, FsdpMode::kHybridShard};
  f.source =
      "Megatron-LM schedules only 1F1B and interleaved 1F1B "
      "(megatron/core/pipeline_parallel/schedules.py); it shards by the distributed optimizer or "
      "Megatron-FSDP's optim / optim_grads / optim_grads_params strategies, HSDP with "
      "--outer-dp-sharding-strategy no_shard (megatron/core/distributed/fsdp/src/README.md): no "
      "FSDP shard_grad_op, no ZeRO-3 by that name";
  return f;
}

FrameworkLayouts torchtitan() {
  FrameworkLayouts f;
  // FSDP2 fully_shard (reshard_after_forward or not), HSDP, or DDP (replicate): the parameters
  // are sharded whenever anything is, so there is no ZeRO-1/2 and no distributed optimizer.
  f.zero = {0};
  f.distributed_optimizer = {false};
  f.split.assign(kSplitOrder, kSplitOrder + kGenericSplitKinds);
  f.split.push_back(SplitKind::kBalancedEmbeddingAndLoss);
  // activation_checkpoint.py apply_ac: none, full, the op-level policy, or full checkpointing of
  // every N-th layer (recompute full with recompute_layers); no recomputation of the attention
  // core alone (Megatron's selective).
  f.recompute = {Recompute::kNone, Recompute::kFull, Recompute::kSelectiveOp};
  f.source =
      "torchtitan shards with FSDP2 fully_shard, HSDP or DDP: no ZeRO-1/2 and no distributed "
      "optimizer (parallelize_llama.py); its pipeline split is its own by default, any other "
      "by module_fqns_per_model_part; it checkpoints whole layers or by its op-level policy, "
      "not the attention core alone (activation_checkpoint.py)";
  return f;
}

FrameworkLayouts deepspeed() {
  FrameworkLayouts f;
  f.vpp = {1};
  f.schedule = {Schedule::k1F1B};
  f.fsdp = {FsdpMode::kNone};
  f.distributed_optimizer = {false};
  f.pipeline_max_zero = 1;
  f.source =
      "DeepSpeed's pipeline engine refuses ZeRO-2 and ZeRO-3 (runtime/pipe/engine.py) and runs "
      "1F1B without virtual stages (runtime/pipe/schedule.py TrainSchedule); it has no FSDP";
  return f;
}

FrameworkLayouts nanotron() {
  FrameworkLayouts f;
  f.vpp = {1};
  f.schedule = {Schedule::k1F1B, Schedule::kGPipe};  // pp_engine "1f1b" or "afab"
  f.zero = {0, 1};
  f.fsdp = {FsdpMode::kNone};
  f.distributed_optimizer = {false};
  f.split = {SplitKind::kCompute};
  f.source =
      "nanotron has ZeRO-1 at most (helpers.py: ZeroDistributedOptimizer for any zero_stage), "
      "the 1F1B and AFAB pipeline engines without virtual stages (config/parallelism_config.py) "
      "and places layers by compute cost (models/base.py)";
  return f;
}

FrameworkLayouts hf_trainer() {
  FrameworkLayouts f;
  f.pp = {1};
  f.distributed_optimizer = {false};
  f.source =
      "the Hugging Face Trainer runs DDP, FSDP (accelerate) or DeepSpeed ZeRO, without pipeline "
      "parallelism or Megatron's distributed optimizer";
  return f;
}

}  // namespace

std::string layout_value_text(int64_t v) { return std::to_string(v); }
std::string layout_value_text(bool v) { return v ? "true" : "false"; }
std::string layout_value_text(Schedule v) { return schedule_name(v); }
std::string layout_value_text(FsdpMode v) { return fsdp_name(v); }
std::string layout_value_text(SplitKind v) { return split_name(v); }
std::string layout_value_text(Recompute v) { return recompute_name(v); }

const FrameworkLayouts& framework_layouts(Framework framework) {
  // Built once: estimate() asks on every call, the planner's fallback included.
  static const std::array<FrameworkLayouts, kFrameworkNames.size()> kAll = {
      megatron(), torchtitan(), deepspeed(), nanotron(), hf_trainer()};  // Framework's order
  return kAll[static_cast<size_t>(framework)];
}

std::vector<std::string> layout_outside_framework(const Scenario& s) {
  std::vector<std::string> out;
  if (s.framework_id < 0) return out;
  const auto framework = static_cast<Framework>(s.framework_id);
  const FrameworkLayouts& f = framework_layouts(framework);
  const Parallelism& p = s.parallel;
  auto check = [&](const char* key, const auto& runs, const auto& value) {
    if (runs_value(runs, value)) return;
    out.push_back(fmt::format("{} = {} (it runs {})", key, layout_value_text(value),
                              layout_values_text(runs)));
  };
  check("pp", f.pp, p.pp);
  check("zero", f.zero, p.zero);
  check("fsdp", f.fsdp, p.fsdp);
  check("distributed_optimizer", f.distributed_optimizer, p.distributed_optimizer);
  check("recompute", f.recompute, s.training.recompute);
  if (p.pp > 1) {
    check("vpp", f.vpp, p.vpp);
    check("schedule", f.schedule, p.schedule);
    const std::optional<SplitKind> kind = split_kind_of(p);
    if (kind) check("pipeline_split", f.split, *kind);
    if (!kind && !f.split.empty())
      out.push_back(
          fmt::format("a balanced split with only one of embedding_stage/loss_stage "
                      "(it runs {})",
                      layout_values_text(f.split)));
    if (f.pipeline_max_zero && p.zero > *f.pipeline_max_zero)
      out.push_back(fmt::format("zero = {} with pp = {} (it runs ZeRO 0 to {} with a pipeline)",
                                p.zero, p.pp, *f.pipeline_max_zero));
  }
  return out;
}

}  // namespace vramplan
