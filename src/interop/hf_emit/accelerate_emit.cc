// The scenario as an accelerate run of the HF Trainer: a script that writes the accelerate config
// (`accelerate config`'s keys: distributed_type NO / MULTI_GPU / FSDP / DEEPSPEED, fsdp_config,
// deepspeed_config, mixed_precision, num_processes, num_machines) in a here-document and runs
// `accelerate launch --config_file ... train.py` with the Trainer's arguments.
#include <fmt/format.h>

#include "interop/emitters.h"
#include "interop/hf_emit/hf_emit.h"
#include "interop/hf_emit/hf_emitters.h"
#include "vramplan/training/frameworks.h"

namespace vramplan::interop::hf_emit {
namespace {

constexpr const char* kFormat = "accelerate";

// The Trainer's --optim for the optimizer (hf_common.cc reads them back).
std::optional<Error> optim_flags(const Scenario& s, FlagLines& f) {
  switch (s.training.optimizer) {
    case Optimizer::kAdamW:
      f.add("--optim",
            s.conventions.optimizer_foreach_temporaries ? "adamw_torch" : "adamw_torch_fused");
      return std::nullopt;
    case Optimizer::kAdam8bit:
      f.add("--optim", "adamw_bnb_8bit");
      return std::nullopt;
    case Optimizer::kAdafactor:
      f.add("--optim", "adafactor");
      return std::nullopt;
    case Optimizer::kLion:
      f.add("--optim", "lion_32bit");
      return std::nullopt;
    case Optimizer::kSgd:
      f.add("--optim", "sgd");
      return std::nullopt;
    case Optimizer::kSgdMomentum:
      f.add("--optim", "sgd");
      f.add("--optim_args", "momentum=0.9");
      return std::nullopt;
    case Optimizer::kMuon:
      break;
  }
  return cannot_emit(kFormat, "the HF Trainer has no Muon optimizer", "another optimizer");
}

// PEFT keeps adapters and their optimizer states in fp32; DeepSpeed casts them.
std::optional<Error> check_adapters(const Scenario& s, bool deepspeed) {
  if (s.finetune.method == FinetuneMethod::kNone) return std::nullopt;
  const DType adapters = deepspeed ? s.training.param_dtype : DType::kFp32;
  if (s.finetune.adapter_dtype != adapters)
    return cannot_emit(kFormat,
                       deepspeed ? "DeepSpeed casts the adapters to the weights' dtype"
                                 : "PEFT keeps the adapters in fp32",
                       "adapter_dtype " + std::string(dtype_name(adapters)));
  if (!deepspeed && s.training.optimizer != Optimizer::kAdam8bit &&
      s.training.optimizer_state_dtype != DType::kFp32)
    return cannot_emit(kFormat, "the adapters' optimizer states are fp32", "optimizer_dtype fp32");
  return std::nullopt;
}

struct Written {
  std::string config;  // the YAML's distributed part
  hf::Precision precision;
  std::string torch_dtype;  // --torch_dtype when the weights are loaded in a 16-bit dtype
};

std::string fsdp_config(const Scenario& s) {
  const Parallelism& p = s.parallel;
  std::string c = "distributed_type: FSDP\nfsdp_config:\n";
  const bool v2 =
      p.fsdp_prefetch == 1 && (p.fsdp == FsdpMode::kFullShard || p.fsdp == FsdpMode::kShardGradOp);
  if (v2) {
    c += "  fsdp_version: 2\n";
    c += fmt::format("  fsdp_reshard_after_forward: {}\n", p.fsdp == FsdpMode::kFullShard);
  } else {
    static const char* kStrategy[] = {"", "FULL_SHARD", "SHARD_GRAD_OP", "HYBRID_SHARD",
                                      "NO_SHARD"};
    c += fmt::format("  fsdp_sharding_strategy: {}\n", kStrategy[static_cast<int>(p.fsdp)]);
    c += fmt::format("  fsdp_backward_prefetch: {}\n",
                     p.fsdp_prefetch == 0 ? "NO_PREFETCH" : "BACKWARD_PRE");
  }
  c += "  fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP\n";
  c += fmt::format("  fsdp_activation_checkpointing: {}\n",
                   s.training.recompute == Recompute::kFull);
  c += fmt::format("  fsdp_offload_params: {}\n", s.offload.params == OffloadTier::kCpu);
  return c;
}

Result<Written> distributed(const Scenario& s, Scenario& ref) {
  const Parallelism& p = s.parallel;
  Written w;
  if (s.framework_id == static_cast<int>(Framework::kDeepspeed)) {
    apply_framework(Framework::kDeepspeed, ref);
    Result<hf::Precision> pr = precision_of(kFormat, s, hf::Weights::kMaster);
    if (!pr) return pr.error();
    if (p.fsdp != FsdpMode::kNone || p.fsdp_prefetch != 1)
      return cannot_emit(kFormat, "DeepSpeed shards with ZeRO", "fsdp none, fsdp_prefetch 1");
    w.precision = *pr;
    w.config = fmt::format(
        "distributed_type: DEEPSPEED\ndeepspeed_config:\n  zero_stage: {}\n"
        "  offload_optimizer_device: {}\n  offload_param_device: {}\n"
        "  zero3_init_flag: false\n",
        p.zero, offload_tier_name(s.offload.optimizer), offload_tier_name(s.offload.params));
    // Offload devices are written; accelerate has no key for the ratio or activations.
    ref.offload.optimizer = s.offload.optimizer;
    ref.offload.params = s.offload.params;
    return w;
  }
  if (s.framework_id != static_cast<int>(Framework::kHfTrainer))
    return cannot_emit(kFormat,
                       "an accelerate run follows the HF Trainer's or DeepSpeed's conventions",
                       "--framework hf-trainer or --framework deepspeed");
  apply_framework(Framework::kHfTrainer, ref);
  if (p.zero > 0) return cannot_emit(kFormat, "ZeRO runs under DeepSpeed", "--framework deepspeed");
  Result<hf::Precision> pr = precision_of(kFormat, s, hf::Weights::kAutocast);
  if (pr) {
    w.precision = *pr;
  } else {
    pr = precision_of(kFormat, s, hf::Weights::kPure);
    if (!pr) return pr.error();
    w.precision = *pr;
    w.torch_dtype = *pr == hf::Precision::kBf16 ? "bfloat16" : "float16";
  }
  const bool mixed = w.torch_dtype.empty() && w.precision != hf::Precision::kFp32;
  if (p.fsdp != FsdpMode::kNone) {
    w.config = fsdp_config(s);
    ref.offload.optimizer = ref.offload.params =
        s.offload.params == OffloadTier::kCpu ? OffloadTier::kCpu : OffloadTier::kNone;
    if (p.fsdp == FsdpMode::kHybridShard) ref.parallel.fsdp_shard_group = p.fsdp_shard_group;
    ref.conventions.fsdp_mixed_precision = mixed;
    if (mixed) ref.training.reduce_dtype = hf::precision_dtype(w.precision);
  } else {
    w.config = std::string("distributed_type: ") + (p.world_size() > 1 ? "MULTI_GPU" : "NO") + "\n";
  }
  return w;
}

}  // namespace

Result<std::string> emit_accelerate(const Scenario& s, const nlohmann::json& /*settings*/) {
  if (auto e = check_data_parallel(kFormat, s)) return *e;
  Scenario ref;
  Result<Written> w = distributed(s, ref);
  if (!w) return w.error();
  const bool deepspeed = s.framework_id == static_cast<int>(Framework::kDeepspeed);
  ref.conventions.optimizer_foreach_temporaries = s.conventions.optimizer_foreach_temporaries;
  if (auto e = check_conventions(kFormat, s, ref)) return *e;
  if (s.parallel.fsdp == FsdpMode::kHybridShard &&
      (s.parallel.fsdp_shard_group <= 0 || s.parallel.world_size() % s.parallel.fsdp_shard_group))
    return cannot_emit(kFormat, "accelerate's hybrid_shard shards within a machine",
                       "fsdp_shard_group dividing the GPUs (the GPUs of one machine)");
  if (auto e = check_adapters(s, deepspeed)) return *e;
  Result<FlagLines> flags =
      trainer_flags(kFormat, s, w->precision, s.parallel.fsdp == FsdpMode::kNone);
  if (!flags) return flags.error();
  FlagLines f = std::move(flags).value();
  if (!w->torch_dtype.empty()) f.add("--torch_dtype", w->torch_dtype);
  if (auto e = optim_flags(s, f)) return *e;
  f.add("--output_dir", "output");
  const int64_t world = s.parallel.world_size();
  const int64_t machines = s.parallel.fsdp == FsdpMode::kHybridShard
                               ? world / s.parallel.fsdp_shard_group
                               : nodes_of(world).second;
  std::string yaml = "compute_environment: LOCAL_MACHINE\n" + w->config;
  yaml +=
      fmt::format("mixed_precision: {}\nnum_machines: {}\nnum_processes: {}\n",
                  w->precision == hf::Precision::kFp32 ? "'no'" : hf::precision_name(w->precision),
                  machines, world);
  std::string out = fmt::format(
      "#!/bin/bash\n# {} on {} GPUs with accelerate, written by vramplan (--emit accelerate): its\n"
      "# config and the HF Trainer arguments of this run. train.py is your Trainer script\n"
      "# (HfArgumentParser over TrainingArguments, e.g. TRL's sft.py, whose ModelConfig takes the\n"
      "# LoRA flags); data arguments are yours to add.{}\n\n",
      s.model.name, world,
      machines > 1 ? "\n# Several machines: run it on each with --machine_rank and the main "
                     "process's address."
                   : "");
  out += "cat > accelerate_config.yaml <<'EOF'\n" + yaml + "EOF\n\n";
  return out + f.text("accelerate launch --config_file accelerate_config.yaml train.py");
}

}  // namespace vramplan::interop::hf_emit
