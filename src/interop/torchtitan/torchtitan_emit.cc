// The scenario as a torchtitan job config in the shape torchtitan publishes them
// (torchtitan/models/llama3/train_configs/llama3_8b.toml: [job], [model], [optimizer],
// [training], [parallelism], [activation_checkpoint], [compile]), with its launch command in a
// comment, so that `--from` reads it back to the same estimate. What torchtitan cannot run as
// vramplan estimated it is an error naming "emit" (torchtitan_emit_checks.cc, and the layout
// below: ZeRO stages, the distributed optimizer, Megatron's splits and recomputation).
#include "interop/torchtitan/torchtitan_emit.h"

#include <fmt/format.h>

#include <utility>
#include <vector>

#include "interop/emitters.h"
#include "interop/torchtitan/torchtitan_emit_checks.h"
#include "interop/torchtitan/torchtitan_layout.h"

namespace vramplan::interop {
namespace {

using Section = std::pair<std::string, std::vector<std::pair<std::string, std::string>>>;

class Toml {
 public:
  void add(const std::string& section, const std::string& key, std::string value) {
    for (Section& s : sections_)
      if (s.first == section) {
        s.second.emplace_back(key, std::move(value));
        return;
      }
    sections_.push_back({section, {{key, std::move(value)}}});
  }
  void add(const std::string& section, const std::string& key, int64_t value) {
    add(section, key, std::to_string(value));
  }
  std::string render() const {
    std::string out;
    for (const auto& [name, keys] : sections_) {
      out += "\n[" + name + "]\n";
      for (const auto& [key, value] : keys) out += key + " = " + value + "\n";
    }
    return out;
  }

 private:
  std::vector<Section> sections_;
};

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

Error no(const std::string& what, const std::string& instead) {
  return cannot_emit(kTitanFormat, what, instead);
}

struct Layout {
  int64_t replicate = 1, shard = 1;
  bool fsdp = false;
  const char* reshard = "default";
};

// FSDP2 (replicate 1), HSDP (shard groups of dp_shard·cp) or DDP, as torchtitan decides from the
// degrees: FSDP whenever dp_shard or cp is above 1.
Result<Layout> data_parallel(const Parallelism& p) {
  Layout l;
  const int64_t data_ranks = p.dp * p.cp;
  if (p.zero > 0)
    return no(fmt::format("torchtitan shards with FSDP2 only: it has no ZeRO-{} stage", p.zero),
              "zero 0 with fsdp full_shard (ZeRO-3's sharding), hybrid_shard or none");
  if (p.distributed_optimizer)
    return no("torchtitan has no distributed optimizer (Megatron-LM's)",
              "fsdp full_shard (which shards the optimizer state too)");
  if (p.fsdp_prefetch != 1)
    return no("FSDP2 in torchtitan prefetches one layer ahead", "fsdp_prefetch 1");
  switch (p.fsdp) {
    case FsdpMode::kFullShard:
    case FsdpMode::kShardGradOp:
      if (data_ranks == 1)
        return no("on one data-parallel rank (dp·cp = 1) torchtitan applies no FSDP", "fsdp none");
      l.fsdp = true;
      l.shard = p.dp;
      if (p.fsdp == FsdpMode::kShardGradOp) {
        if (p.pp > 1)
          return no(
              "torchtitan keeps each pipeline stage gathered anyway; shard_grad_op is "
              "fsdp_reshard_after_forward = \"never\" without PP",
              "fsdp full_shard with pp > 1");
        l.reshard = "never";
      }
      return l;
    case FsdpMode::kHybridShard: {
      const int64_t group = p.fsdp_shard_group;
      if (group <= 0 || group == data_ranks || group % p.cp != 0 || p.dp % (group / p.cp) != 0 ||
          group / p.cp == 1)
        return no(fmt::format("torchtitan's HSDP shards over dp_shard·cp ranks with dp_shard "
                              "dividing dp; fsdp_shard_group {} with dp {} and cp {} is not that",
                              group, p.dp, p.cp),
                  "fsdp_shard_group = dp_shard·cp for a dp_shard > 1 dividing dp, below dp·cp");
      l.fsdp = true;
      l.shard = group / p.cp;
      l.replicate = p.dp / l.shard;
      return l;
    }
    case FsdpMode::kNone:
      if (p.cp > 1)
        return no("torchtitan applies FSDP whenever context parallelism is on",
                  "fsdp full_shard with cp > 1");
      l.replicate = p.dp;  // DDP, or nothing on one rank
      return l;
    case FsdpMode::kNoShard:
      break;
  }
  return no("torchtitan's unsharded data parallelism is DDP", "fsdp none");
}

// torchtitan's split is generate_llm_fqn_per_model_part's: the embedding and the output as one
// layer each, the remainder on the first stages; stages per rank from the schedule (2 for a
// looped one) or from pipeline_parallel_layers_per_stage.
// torchtitan's EP backends: torch's all_to_all_single ("standard"), DeepEP and HybridEP.
std::optional<Error> comm_backend(MoeDispatcher d, Toml& toml) {
  if (d == MoeDispatcher::kAllGather)
    return no("torchtitan's expert parallelism has no all-gather dispatcher",
              "moe_dispatcher alltoall, deepep or hybridep");
  if (d != MoeDispatcher::kAllToAll)
    toml.add("parallelism", "expert_parallel_comm_backend", quoted(moe_dispatcher_name(d)));
  return std::nullopt;
}

std::optional<Error> pipeline(const Scenario& s, Toml& toml) {
  const Parallelism& p = s.parallel;
  if (!p.embedding_as_stage || !p.loss_as_stage || !p.balanced_split || p.compute_balanced_split ||
      p.first_stage_layers > 0 || p.last_stage_layers > 0)
    return no(
        "torchtitan splits the layers with the embedding and the output counted as one "
        "layer each and the remainder on the first stages",
        "torchtitan's split (leave pipeline_split, embedding_stage, loss_stage and the "
        "stage layer counts out)");
  const char* schedule = p.schedule == Schedule::k1F1B                  ? "1F1B"
                         : p.schedule == Schedule::kGPipe && p.vpp == 1 ? "GPipe"
                         : p.schedule == Schedule::kGPipe               ? "LoopedBFS"
                                                                        : "Interleaved1F1B";
  toml.add("parallelism", "pipeline_parallel_schedule", quoted(schedule));
  const int64_t layers = s.model.num_layers, stages = p.pp * p.vpp;
  if (p.vpp > 2) {
    int64_t per_stage = 0;
    for (int64_t n = 1; n <= layers + 2 && per_stage == 0; ++n)
      if ((layers + 2 + n - 1) / n == stages) per_stage = n;
    if (per_stage == 0)
      return no(fmt::format("no pipeline_parallel_layers_per_stage makes {} stages of {} layers",
                            stages, layers),
                "vpp 2, or one giving pp·vpp stages");
    toml.add("parallelism", "pipeline_parallel_layers_per_stage", per_stage);
  }
  if (titan_rank_layers(layers, p.pp, p.vpp, 1, 1, false).empty())
    return no(fmt::format("torchtitan cannot split {} layers into {} stages", layers, stages),
              "fewer pipeline stages");
  return std::nullopt;
}

std::optional<Error> batch(const Scenario& s, Toml& toml) {
  const Training& t = s.training;
  const int64_t per_step = t.micro_batch * s.parallel.dp;
  const int64_t steps = t.global_batch / per_step;  // microbatches per rank and step
  if (s.parallel.pp > 1) {
    toml.add("training", "local_batch_size", t.micro_batch * steps);
    toml.add("parallelism", "pipeline_parallel_microbatch_size", t.micro_batch);
  } else {
    toml.add("training", "local_batch_size", t.micro_batch);
    if (steps > 1) toml.add("training", "global_batch_size", t.global_batch);
  }
  toml.add("training", "seq_len", t.seq_len);
  return std::nullopt;
}

// none, full, the op-level policy, or every N-th layer: the N whose count per rank is vramplan's.
std::optional<Error> recompute(const Scenario& s, Toml& toml) {
  const Training& t = s.training;
  if (t.recompute == Recompute::kNone ||
      (t.recompute == Recompute::kFull && t.recompute_layers == 0)) {
    toml.add("activation_checkpoint", "mode", quoted(recompute_name(t.recompute)));
    return std::nullopt;
  }
  toml.add("activation_checkpoint", "mode", quoted("selective"));
  if (t.recompute == Recompute::kSelectiveOp) {
    toml.add("activation_checkpoint", "selective_ac_option", quoted("op"));
    return std::nullopt;
  }
  const Parallelism& p = s.parallel;
  const std::vector<int64_t> ranks =
      p.pp == 1 ? std::vector<int64_t>{s.model.num_layers}
                : titan_rank_layers(s.model.num_layers, p.pp, p.vpp, 1, 1, false);
  for (int64_t every = 2; every <= s.model.num_layers; ++every) {
    const EveryNth n = titan_every_nth(ranks, p.vpp, every);
    if (n.exact && n.layers_per_chunk == t.recompute_layers) {
      toml.add("activation_checkpoint", "selective_ac_option", quoted(std::to_string(every)));
      return std::nullopt;
    }
  }
  return no(fmt::format("torchtitan checkpoints every N-th layer of a rank, and no N gives "
                        "recompute_layers {} on every rank",
                        t.recompute_layers),
            "recompute_layers giving each rank an N-th of its layers, or recompute full");
}

// fp32 parameters with FSDP2 mixed precision (or autocast), or everything in bf16
// (training.dtype = "bfloat16").
std::optional<Error> precision(const Scenario& s, const Layout& l, Toml& toml) {
  const Training& t = s.training;
  const bool pure = t.param_dtype == DType::kBf16 && t.grad_dtype == DType::kBf16 &&
                    t.optimizer_state_dtype == DType::kBf16 && !t.master_weights &&
                    !t.fp32_grad_accumulation && t.activation_dtype == DType::kBf16 &&
                    t.reduce_dtype == DType::kFp32;
  const bool mixed = t.param_dtype == DType::kFp32 && t.grad_dtype == DType::kFp32 &&
                     t.optimizer_state_dtype == DType::kFp32 && !t.master_weights &&
                     !t.fp32_grad_accumulation &&
                     (t.activation_dtype == DType::kBf16 || t.activation_dtype == DType::kFp32) &&
                     (t.reduce_dtype == DType::kFp32 || (l.fsdp && t.reduce_dtype == DType::kBf16));
  if (!pure && !mixed)
    return no(
        "torchtitan keeps fp32 parameters, gradients and Adam states with bf16 or fp32 "
        "compute, or everything in bf16 (training.dtype), reducing in fp32 (bf16 with FSDP)",
        "torchtitan's default dtypes");
  // FSDP2's CPU offload is one switch: parameters and optimizer together.
  const Offload& o = s.offload;
  const bool cpu = o.params == OffloadTier::kCpu && o.optimizer == OffloadTier::kCpu &&
                   o.optimizer_fraction == 1.0;
  if (o.activations || (o.any() && !cpu))
    return no(
        "torchtitan offloads only FSDP's parameters with their optimizer (enable_cpu_offload)",
        "offload_params cpu with offload_optimizer cpu, or no offload");
  if (cpu) toml.add("training", "enable_cpu_offload", "true");
  if (pure) {
    toml.add("training", "dtype", quoted("bfloat16"));
    return std::nullopt;
  }
  const bool amp = l.fsdp || (s.parallel.tp == 1 && s.parallel.pp == 1);
  if (!amp && t.activation_dtype != DType::kFp32)
    return no(
        "with TP or PP and no FSDP torchtitan trains without mixed precision "
        "(maybe_enable_amp)",
        "activation_dtype fp32, or fsdp full_shard");
  toml.add("training", "mixed_precision_param",
           quoted(t.activation_dtype == DType::kBf16 ? "bfloat16" : "float32"));
  if (l.fsdp)
    toml.add("training", "mixed_precision_reduce",
             quoted(t.reduce_dtype == DType::kBf16 ? "bfloat16" : "float32"));
  return std::nullopt;
}

std::optional<Error> parallel(const Scenario& s, const Layout& l, Toml& toml) {
  const Parallelism& p = s.parallel;
  if (p.tp > 1 && !p.sequence_parallel)
    return no("torchtitan's tensor parallelism always shards the norms over the sequence",
              "sequence_parallel true");
  toml.add("parallelism", "data_parallel_replicate_degree", l.replicate);
  toml.add("parallelism", "data_parallel_shard_degree", l.shard);
  toml.add("parallelism", "fsdp_reshard_after_forward", quoted(l.reshard));
  toml.add("parallelism", "tensor_parallel_degree", p.tp);
  if (p.tp > 1 && !p.loss_parallel) toml.add("parallelism", "disable_loss_parallel", "true");
  toml.add("parallelism", "pipeline_parallel_degree", p.pp);
  toml.add("parallelism", "context_parallel_degree", p.cp);
  if (s.model.is_moe()) {
    if (p.ep == 1 && p.etp != p.tp)
      return no("with expert_parallel_degree 1 torchtitan shards the experts over tp",
                fmt::format("etp {} (= tp)", p.tp));
    if (p.ep > 1 && p.etp != 1 && p.etp != p.tp)
      return no("torchtitan's expert tensor parallelism is 1 or tp",
                fmt::format("etp 1 or {}", p.tp));
    toml.add("parallelism", "expert_parallel_degree", p.ep);
    if (p.ep > 1) toml.add("parallelism", "expert_tensor_parallel_degree", p.etp);
    if (auto e = comm_backend(s.conventions.moe_dispatcher, toml)) return e;
  }
  if (p.pp > 1) return pipeline(s, toml);
  return std::nullopt;
}

std::string header(const Scenario& s) {
  const int64_t world = s.parallel.world_size();
  const int64_t per_node = world <= 8 ? world : (world % 8 == 0 ? 8 : 1);
  return fmt::format(
      "# {} on {} GPUs, written by vramplan (--emit torchtitan): torchtitan's job config with\n"
      "# this run's model, layout and training. Add your dataset, checkpoint and schedule.\n"
      "# torchrun --nproc_per_node {} --nnodes {} -m torchtitan.train --job.config_file job.toml\n",
      s.model.name.empty() ? "A model" : s.model.name, world, per_node, world / per_node);
}

}  // namespace

Result<std::string> emit_torchtitan(const Scenario& s, const nlohmann::json& settings) {
  (void)settings;
  if (auto e = refuse_for_torchtitan(s)) return *e;
  const TitanFlavor* flavor = titan_flavor_of_model(s.model);
  if (flavor == nullptr)
    return no(fmt::format("torchtitan builds its models from flavors, and {} is none of them",
                          s.model.name.empty() ? "the model" : s.model.name),
              "a model of a torchtitan flavor (Llama-3.1-8B/70B/405B, Qwen3-*, DeepSeek-V2-Lite, "
              "or one read from a torchtitan TOML)");
  Toml toml;
  toml.add("job", "dump_folder", quoted("./outputs"));
  toml.add("job", "description", quoted("vramplan --emit torchtitan"));
  toml.add("model", "name", quoted(flavor->model));
  toml.add("model", "flavor", quoted(flavor->flavor));
  if (flavor->preset)
    toml.add("model", "hf_assets_path", quoted(std::string("./assets/hf/") + flavor->preset));
  toml.add("optimizer", "name", quoted("AdamW"));
  Result<Layout> layout = data_parallel(s.parallel);
  if (!layout) return layout.error();
  if (auto e = batch(s, toml)) return *e;
  if (auto e = precision(s, *layout, toml)) return *e;
  if (auto e = parallel(s, *layout, toml)) return *e;
  if (auto e = recompute(s, toml)) return *e;
  toml.add("compile", "enable", "false");
  return header(s) + toml.render();
}

}  // namespace vramplan::interop
