// The scenario as a torchtune recipe config, in the shape of torchtune's own
// (recipes/configs/llama3_1/8B_lora_single_device.yaml): a header comment with the `tune run`
// line that launches it, the model builder (lora_ / qlora_ for LoRA and QLoRA), batch,
// accumulation, dtype, activation checkpointing, optimizer and loss components, FSDP resharding.
#include "interop/torchtune/torchtune_emit.h"

#include <fmt/format.h>

#include <algorithm>

#include "interop/emitters.h"
#include "interop/hf_emit/hf_emit.h"
#include "interop/torchtune/torchtune_models.h"
#include "vramplan/training/finetune.h"
#include "vramplan/training/frameworks.h"

namespace vramplan::interop::torchtune {
namespace {

constexpr const char* kFormat = "torchtune";

// What --from builds from the recipe: torchtune's conventions (torchtune_recipe.cc).
Scenario reference(const Scenario& s) {
  Scenario r;
  apply_model_code(ModelCode::kTorchtune, r);
  r.conventions.lazy_gradients = true;
  r.overheads.allocator_fraction = 0.2;
  r.conventions.loss_bytes_per_logit = s.conventions.loss_bytes_per_logit;
  // The chunked losses write num_output_chunks (at least 1); torch's CrossEntropyLoss none.
  r.conventions.loss_chunks = s.conventions.loss_bytes_per_logit == 10
                                  ? 0
                                  : std::max<int64_t>(s.conventions.loss_chunks, 1);
  r.conventions.optimizer_foreach_temporaries = s.conventions.optimizer_foreach_temporaries;
  // Written back: enable_activation_offloading, and fsdp_cpu_offload (parameters and optimizer
  // together) in distributed recipes.
  r.offload.activations = s.offload.activations;
  if (s.parallel.world_size() > 1 && s.offload.params == OffloadTier::kCpu)
    r.offload.params = r.offload.optimizer = OffloadTier::kCpu;
  return r;
}

Result<std::string> loss_component(const Scenario& s) {
  switch (s.conventions.loss_bytes_per_logit) {
    case 4:
      return std::string("torchtune.modules.loss.LinearCrossEntropyLoss");
    case 6:
      return std::string("torchtune.modules.loss.CEWithChunkedOutputLoss");
    case 10:
      return std::string("torch.nn.CrossEntropyLoss");
    default:
      return cannot_emit(kFormat,
                         fmt::format("no torchtune loss keeps {} bytes per logit",
                                     s.conventions.loss_bytes_per_logit),
                         "loss_bytes_per_logit 4 (LinearCrossEntropyLoss), 6 "
                         "(CEWithChunkedOutputLoss) or 10 (torch's CrossEntropyLoss)");
  }
}

Result<std::string> optimizer_block(const Scenario& s) {
  const bool foreach_temp = s.conventions.optimizer_foreach_temporaries;
  switch (s.training.optimizer) {
    case Optimizer::kAdamW:
      return fmt::format("optimizer:\n  _component_: torch.optim.AdamW\n  fused: {}\n  lr: 2e-5\n",
                         foreach_temp ? "False" : "True");
    case Optimizer::kAdam8bit:
      return std::string(
          "optimizer:\n  _component_: bitsandbytes.optim.PagedAdamW8bit\n  lr: 2e-5\n");
    case Optimizer::kSgd:
      return std::string("optimizer:\n  _component_: torch.optim.SGD\n  lr: 2e-5\n");
    case Optimizer::kSgdMomentum:
      return std::string(
          "optimizer:\n  _component_: torch.optim.SGD\n  lr: 2e-5\n  momentum: 0.9\n");
    case Optimizer::kAdafactor:
      return std::string("optimizer:\n  _component_: torch.optim.Adafactor\n  lr: 2e-5\n");
    default:
      return cannot_emit(kFormat,
                         std::string("torchtune has no ") + optimizer_name(s.training.optimizer) +
                             " optimizer component",
                         "optimizer adamw, adam8bit, sgd, sgd-momentum or adafactor");
  }
}

std::optional<Error> check(const Scenario& s) {
  if (s.framework_id >= 0)
    return cannot_emit(kFormat, "torchtune's conventions are its own, not a framework preset's",
                       "no --framework (the recipe sets torchtune's conventions)");
  if (auto e = hf_emit::check_data_parallel(kFormat, s)) return e;
  const Parallelism& p = s.parallel;
  if (p.zero > 0) return cannot_emit(kFormat, "torchtune shards with FSDP", "zero 0");
  if (p.world_size() > 1 && p.fsdp != FsdpMode::kFullShard && p.fsdp != FsdpMode::kShardGradOp)
    return cannot_emit(kFormat, "torchtune's distributed recipes shard with FSDP2",
                       "fsdp full_shard or shard_grad_op");
  if (p.fsdp_prefetch != 1)
    return cannot_emit(kFormat, "FSDP2 prefetches one layer", "fsdp_prefetch 1");
  if (auto e = hf_emit::check_conventions(kFormat, s, reference(s))) return e;
  const Finetune& f = s.finetune;
  if (f.method != FinetuneMethod::kNone) {
    const uint32_t mlp = kLoraGate | kLoraUp | kLoraDown;
    if ((f.lora_targets & mlp) != 0 && (f.lora_targets & mlp) != mlp)
      return cannot_emit(kFormat, "torchtune puts adapters on all of the MLP or none of it",
                         "lora_targets with all of gate, up, down or none");
    if (f.adapter_dtype != s.training.param_dtype)
      return cannot_emit(kFormat, "torchtune builds the adapters in the recipe's dtype",
                         "adapter_dtype " + std::string(dtype_name(s.training.param_dtype)));
  }
  return std::nullopt;
}

// Tokenizer builders and checkpoint model types by family (torchtune/models/*/__init__.py,
// torchtune/training/checkpointing/_utils.py ModelType).
struct Family {
  const char* family;
  const char* tokenizer;
  const char* model_type;
  bool merges;  // the tokenizer takes a merges file beside its vocabulary
};
constexpr Family kFamilies[] = {
    {"llama3_1", "llama3.llama3_tokenizer", "LLAMA3", false},
    {"llama3_2", "llama3.llama3_tokenizer", "LLAMA3_2", false},
    {"llama2", "llama2.llama2_tokenizer", "LLAMA2", false},
    {"mistral", "mistral.mistral_tokenizer", "MISTRAL", false},
    {"qwen2_5", "qwen2_5.qwen2_5_tokenizer", "QWEN2", true},
    {"qwen3", "qwen3.qwen3_tokenizer", "QWEN3", true},
    {"gemma2", "gemma.gemma_tokenizer", "GEMMA2", false},
    {"phi3", "phi3.phi3_mini_tokenizer", "PHI3_MINI", false},
};

// What the recipe needs beside the settings: paths are placeholders to replace.
std::string files_block(const TorchtuneModel& m, int64_t seq_len) {
  const Family* f = &kFamilies[0];
  for (const Family& candidate : kFamilies)
    if (std::string_view(candidate.family) == m.family) f = &candidate;
  const std::string dir = std::string("/tmp/") + m.preset;
  std::string out = "output_dir: /tmp/torchtune/vramplan\n\n";
  out += fmt::format("tokenizer:\n  _component_: torchtune.models.{}\n", f->tokenizer);
  out += f->merges ? fmt::format("  path: {}/vocab.json\n  merges_file: {}/merges.txt\n", dir, dir)
                   : fmt::format("  path: {}/original/tokenizer.model\n", dir);
  out += fmt::format("  max_seq_len: {}\n\n", seq_len);
  out += fmt::format(
      "checkpointer:\n  _component_: torchtune.training.FullModelHFCheckpointer\n"
      "  checkpoint_dir: {}/\n  checkpoint_files: [model.safetensors]  # the checkpoint's "
      "files\n  recipe_checkpoint: null\n  output_dir: ${{output_dir}}\n  model_type: {}\n"
      "resume_from_checkpoint: False\n\n",
      dir, f->model_type);
  out +=
      "dataset:\n  _component_: torchtune.datasets.alpaca_cleaned_dataset\n  packed: True\n"
      "seed: null\nshuffle: True\n";
  return out;
}

constexpr const char* kSchedule =
    "lr_scheduler:\n  _component_: torchtune.training.lr_schedulers."
    "get_cosine_schedule_with_warmup\n  num_warmup_steps: 100\n\nepochs: 1\n"
    "max_steps_per_epoch: null\n\nmetric_logger:\n  _component_: "
    "torchtune.training.metric_logging.DiskLogger\n  log_dir: ${output_dir}/logs\n"
    "log_every_n_steps: 1\ndevice: cuda\n";

std::string lora_lines(const Scenario& s) {
  const Finetune& f = s.finetune;
  if (f.method == FinetuneMethod::kNone) return "";
  std::string attn;
  const std::pair<uint32_t, const char*> kAttn[] = {
      {kLoraQ, "q_proj"}, {kLoraK, "k_proj"}, {kLoraV, "v_proj"}, {kLoraO, "output_proj"}};
  for (const auto& [bit, name] : kAttn)
    if (f.lora_targets & bit) attn += std::string(attn.empty() ? "" : ", ") + "'" + name + "'";
  return fmt::format(
      "  lora_attn_modules: [{}]\n  apply_lora_to_mlp: {}\n  apply_lora_to_output: False\n"
      "  lora_rank: {}\n  lora_alpha: {}\n  lora_dropout: 0.0\n",
      attn, (f.lora_targets & kLoraGate) ? "True" : "False", f.lora_rank, 2 * f.lora_rank);
}

}  // namespace

Result<std::string> emit_torchtune(const Scenario& s, const nlohmann::json& /*settings*/) {
  if (auto e = check(s)) return *e;
  const TorchtuneModel* model = model_for_preset(s.model.name);
  if (model == nullptr)
    return cannot_emit(kFormat, "torchtune has no builder vramplan knows for " + s.model.name,
                       "a model torchtune builds (Llama 3.1 / 3.2, Llama 2 7B, Mistral 7B, Qwen "
                       "2.5 / 3, Gemma 2, Phi-3 mini)");
  const FinetuneMethod method = s.finetune.method;
  if (method == FinetuneMethod::kQlora && !model->has_qlora)
    return cannot_emit(kFormat, std::string("torchtune has no qlora_") + model->builder,
                       "finetune lora");
  Result<hf::Precision> precision = hf_emit::precision_of(kFormat, s, hf::Weights::kPure);
  if (!precision) return precision.error();
  if (*precision == hf::Precision::kFp16)
    return cannot_emit(kFormat, "torchtune trains in bf16 or fp32", "param_dtype bf16 or fp32");
  Result<int64_t> accum = hf_emit::accumulation_steps(kFormat, s);
  if (!accum) return accum.error();
  Result<std::string> loss = loss_component(s);
  if (!loss) return loss.error();
  Result<std::string> optimizer = optimizer_block(s);
  if (!optimizer) return optimizer.error();
  const int64_t world = s.parallel.world_size();
  const std::string kind = method == FinetuneMethod::kNone ? "full_finetune" : "lora_finetune";
  const std::string recipe = kind + (world > 1 ? "_distributed" : "_single_device");
  const auto [per_node, nodes] = hf_emit::nodes_of(world);
  std::string launch = "tune run";
  if (nodes > 1) launch += fmt::format(" --nnodes {}", nodes);
  if (world > 1) launch += fmt::format(" --nproc_per_node {}", per_node);
  const std::string prefix = method == FinetuneMethod::kQlora  ? "qlora_"
                             : method == FinetuneMethod::kLora ? "lora_"
                                                               : "";
  std::string out = fmt::format(
      "# Config for {} in {}.py\n# using {}, written by vramplan (--emit torchtune).\n#\n"
      "# To launch, run the following command from root:\n#   {} {} --config <this file>\n#\n"
      "# The checkpoint and tokenizer paths, and the dataset, are yours to set.\n\n",
      kind == "full_finetune" ? "full finetuning" : "LoRA finetuning", recipe, s.model.name, launch,
      recipe);
  out += files_block(*model, s.training.seq_len);
  out += fmt::format("\nmodel:\n  _component_: torchtune.models.{}.{}{}\n{}", model->family, prefix,
                     model->builder, lora_lines(s));
  out += fmt::format("\nbatch_size: {}\ngradient_accumulation_steps: {}\n", s.training.micro_batch,
                     *accum);
  out += "\n" + *optimizer + kSchedule + fmt::format("\nloss:\n  _component_: {}\n", *loss);
  if (s.conventions.loss_bytes_per_logit != 10)
    out += fmt::format("  num_output_chunks: {}\n", s.conventions.loss_chunks);
  out += fmt::format("\ndtype: {}\nenable_activation_checkpointing: {}\n",
                     hf::precision_name(*precision),
                     s.training.recompute == Recompute::kFull ? "True" : "False");
  out += fmt::format("enable_activation_offloading: {}\ncompile: False\n",
                     s.offload.activations ? "True" : "False");
  if (world > 1)
    out += fmt::format("fsdp_cpu_offload: {}\nfsdp_reshard_after_forward: {}\n",
                       s.offload.params == OffloadTier::kCpu ? "True" : "False",
                       s.parallel.fsdp == FsdpMode::kFullShard ? "True" : "False");
  return out;
}

}  // namespace vramplan::interop::torchtune
