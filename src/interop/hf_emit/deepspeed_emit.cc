// The scenario as a DeepSpeed run of the HF Trainer: a script that writes ds_config.json in a
// here-document (ZeRO stage, buckets, live parameters, optimizer; "auto" where the Trainer fills
// it) and launches the Trainer script with `deepspeed --num_gpus N` and its arguments, in the
// shape of transformers' DeepSpeed guide.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "interop/emitters.h"
#include "interop/hf_emit/hf_emit.h"
#include "interop/hf_emit/hf_emitters.h"
#include "vramplan/training/frameworks.h"

namespace vramplan::interop::hf_emit {
namespace {

// Keys in the order DeepSpeed's documentation shows them.
using json = nlohmann::ordered_json;

constexpr const char* kFormat = "deepspeed";

json auto_params() {
  json p = json::object();
  for (const char* key : {"lr", "betas", "eps", "weight_decay"}) p[key] = "auto";
  return p;
}

// The optimizer as DeepSpeed's block (FusedAdam, torch's Adam, Lion, SGD, Muon) or, for the
// Trainer's own optimizers (8-bit AdamW, Adafactor, plain SGD), as --optim with no block.
std::optional<Error> optimizer(const Scenario& s, json& config, FlagLines& flags) {
  const Training& t = s.training;
  switch (t.optimizer) {
    case Optimizer::kAdamW: {
      json params = auto_params();
      if (s.conventions.optimizer_foreach_temporaries) params["torch_adam"] = true;
      config["optimizer"] = {{"type", "AdamW"}, {"params", params}};
      return std::nullopt;
    }
    case Optimizer::kLion:
      config["optimizer"] = {{"type", "Lion"}, {"params", {{"lr", "auto"}}}};
      return std::nullopt;
    case Optimizer::kSgdMomentum:
      config["optimizer"] = {{"type", "SGD"}, {"params", {{"lr", "auto"}, {"momentum", 0.9}}}};
      return std::nullopt;
    case Optimizer::kMuon:
      config["optimizer"] = {{"type", "Muon"}, {"params", {{"lr", "auto"}}}};
      return std::nullopt;
    case Optimizer::kAdam8bit:
      flags.add("--optim", "adamw_bnb_8bit");
      return std::nullopt;
    case Optimizer::kAdafactor:
      flags.add("--optim", "adafactor");
      return std::nullopt;
    case Optimizer::kSgd:
      flags.add("--optim", "sgd");
      return std::nullopt;
  }
  return std::nullopt;
}

json zero_config(const Scenario& s) {
  const Conventions& c = s.conventions;
  json zero = json::object();
  zero["stage"] = s.parallel.zero;
  zero["overlap_comm"] = false;  // one bucket at a time, as vramplan counts them
  zero["contiguous_gradients"] = true;
  zero["reduce_bucket_size"] = c.comm_bucket_elements;
  if (s.parallel.zero < 3) {
    zero["allgather_bucket_size"] = c.comm_bucket_elements;
  } else {
    zero["stage3_max_live_parameters"] = c.zero3_live_params;
    zero["stage3_max_reuse_distance"] = 1'000'000'000;  // DeepSpeed's default
    zero["stage3_prefetch_bucket_size"] = "auto";
    zero["stage3_param_persistence_threshold"] = "auto";
  }
  // ZeRO-Offload / ZeRO-Infinity (docs/offload.md); NVMe needs a path, written as a placeholder.
  const Offload& o = s.offload;
  if (o.optimizer != OffloadTier::kNone) {
    json opt = {{"device", offload_tier_name(o.optimizer)}, {"pin_memory", true}};
    if (o.optimizer == OffloadTier::kNvme) opt["nvme_path"] = "/local_nvme";
    if (o.optimizer_fraction < 1.0) opt["ratio"] = o.optimizer_fraction;
    zero["offload_optimizer"] = std::move(opt);
  }
  if (o.params != OffloadTier::kNone) {
    json par = {{"device", offload_tier_name(o.params)}, {"pin_memory", true}};
    if (o.params == OffloadTier::kNvme) par["nvme_path"] = "/local_nvme";
    zero["offload_param"] = std::move(par);
  }
  return zero;
}

// What --from builds from the file: DeepSpeed's conventions with the file's buckets, live
// parameters and optimizer implementation.
Scenario reference(const Scenario& s) {
  Scenario r;
  apply_framework(Framework::kDeepspeed, r);
  r.conventions.comm_bucket_elements = s.conventions.comm_bucket_elements;
  r.conventions.zero3_live_params = s.conventions.zero3_live_params;
  r.conventions.optimizer_foreach_temporaries = s.conventions.optimizer_foreach_temporaries;
  r.offload = s.offload;  // written to offload_optimizer / offload_param
  return r;
}

std::optional<Error> check(const Scenario& s) {
  if (s.framework_id != static_cast<int>(Framework::kDeepspeed))
    return cannot_emit(kFormat, "a DeepSpeed run follows DeepSpeed's conventions",
                       "--framework deepspeed");
  if (auto e = check_data_parallel(kFormat, s)) return e;
  if (s.parallel.fsdp != FsdpMode::kNone)
    return cannot_emit(kFormat, "DeepSpeed shards with ZeRO, not FSDP", "zero 0-3 and fsdp none");
  if (s.parallel.fsdp_prefetch != 1)
    return cannot_emit(kFormat, "ZeRO-3 prefetches by bucket size, not by layers",
                       "fsdp_prefetch 1");
  if (s.parallel.zero > 0 && s.conventions.comm_bucket_elements == 0)
    return cannot_emit(kFormat, "ZeRO always keeps a reduce bucket", "comm_bucket_elements > 0");
  if (s.training.optimizer_state_dtype != DType::kFp32 &&
      s.training.optimizer != Optimizer::kAdam8bit)
    return cannot_emit(kFormat, "DeepSpeed keeps optimizer states in fp32", "optimizer_dtype fp32");
  if (s.training.reduce_dtype != DType::kFp32)
    return cannot_emit(kFormat, "vramplan writes DeepSpeed's default reduction",
                       "reduce_dtype fp32");
  return check_conventions(kFormat, s, reference(s));
}

}  // namespace

Result<std::string> emit_deepspeed(const Scenario& s, const nlohmann::json& /*settings*/) {
  if (auto e = check(s)) return *e;
  Result<hf::Precision> precision = precision_of(kFormat, s, hf::Weights::kMaster);
  if (!precision) return precision.error();
  const Finetune& ft = s.finetune;
  if (ft.method != FinetuneMethod::kNone && ft.adapter_dtype != s.training.param_dtype)
    return cannot_emit(
        kFormat, "DeepSpeed casts the LoRA adapters to the weights' dtype",
        std::string("adapter_dtype ") + std::string(dtype_name(s.training.param_dtype)));
  Result<FlagLines> flags = trainer_flags(kFormat, s, *precision, true);
  if (!flags) return flags.error();
  FlagLines f = std::move(flags).value();
  json config = json::object();
  config["bf16"] = {{"enabled", "auto"}};
  config["fp16"] = {{"enabled", "auto"}};
  config["zero_optimization"] = zero_config(s);
  const hf::PrecisionPlan plan = hf::precision_plan(*precision, hf::Weights::kMaster);
  if (s.training.fp32_grad_accumulation != plan.fp32_grad_accum)
    config["data_types"] = {{"grad_accum_dtype", s.training.fp32_grad_accumulation
                                                     ? "fp32"
                                                     : hf::precision_name(*precision)}};
  if (auto e = optimizer(s, config, f)) return *e;
  config["gradient_accumulation_steps"] = "auto";
  config["gradient_clipping"] = "auto";
  config["train_batch_size"] = "auto";
  config["train_micro_batch_size_per_gpu"] = "auto";
  f.add("--output_dir", "output");
  const int64_t world = s.parallel.world_size();
  const auto [per_node, nodes] = nodes_of(world);
  std::string out = fmt::format(
      "#!/bin/bash\n# {} on {} GPUs with DeepSpeed ZeRO-{}, written by vramplan (--emit "
      "deepspeed):\n# the DeepSpeed config and the HF Trainer arguments of this run. train.py is "
      "your Trainer\n# script (HfArgumentParser over TrainingArguments, e.g. TRL's sft.py, whose "
      "ModelConfig\n# takes the LoRA flags); data arguments are yours to add.{}\n\n",
      s.model.name, world, s.parallel.zero,
      nodes > 1 ? "\n# Several nodes: deepspeed reads them from its hostfile (--hostfile)." : "");
  out += "cat > ds_config.json <<'EOF'\n" + config.dump(2) + "\nEOF\n\n";
  std::string launch = fmt::format("deepspeed --num_gpus {}", per_node);
  if (nodes > 1) launch += fmt::format(" --num_nodes {}", nodes);
  launch += " train.py";
  return out + f.text(launch + " \\\n    --deepspeed ds_config.json");
}

}  // namespace vramplan::interop::hf_emit
