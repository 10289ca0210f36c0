// Megatron-LM's argument names as vramplan reads them (megatron_arg_table.h).
#include "interop/megatron/megatron_arg_table.h"

#include <algorithm>

namespace vramplan::interop {
namespace {

// Arguments that shape the model: copied into a megatron_gpt model_config under Megatron's own
// names (model/megatron_config.h), with the JSON type each takes.
constexpr MegatronModelArg kModelArgs[] = {
    {"--num-layers", MegatronArgType::kInt},
    {"--hidden-size", MegatronArgType::kInt},
    {"--ffn-hidden-size", MegatronArgType::kInt},
    {"--num-attention-heads", MegatronArgType::kInt},
    {"--group-query-attention", MegatronArgType::kFlag},
    {"--num-query-groups", MegatronArgType::kInt},
    {"--kv-channels", MegatronArgType::kInt},
    {"--swiglu", MegatronArgType::kFlag},
    {"--normalization", MegatronArgType::kText},
    {"--disable-bias-linear", MegatronArgType::kFlag},
    {"--add-qkv-bias", MegatronArgType::kFlag},
    {"--position-embedding-type", MegatronArgType::kText},
    {"--untie-embeddings-and-output-weights", MegatronArgType::kFlag},
    {"--qk-layernorm", MegatronArgType::kFlag},
    {"--max-position-embeddings", MegatronArgType::kInt},
    {"--multi-latent-attention", MegatronArgType::kFlag},
    {"--q-lora-rank", MegatronArgType::kInt},
    {"--kv-lora-rank", MegatronArgType::kInt},
    {"--qk-head-dim", MegatronArgType::kInt},
    {"--qk-pos-emb-head-dim", MegatronArgType::kInt},
    {"--v-head-dim", MegatronArgType::kInt},
    {"--num-experts", MegatronArgType::kInt},
    {"--moe-router-topk", MegatronArgType::kInt},
    {"--moe-ffn-hidden-size", MegatronArgType::kInt},
    {"--moe-shared-expert-intermediate-size", MegatronArgType::kInt},
    {"--moe-layer-freq", MegatronArgType::kText},
    {"--moe-router-enable-expert-bias", MegatronArgType::kFlag},
    {"--moe-router-num-groups", MegatronArgType::kInt},
    {"--moe-router-group-topk", MegatronArgType::kInt},
    {"--mtp-num-layers", MegatronArgType::kInt},
};

// Argument prefixes that change nothing vramplan counts: learning rates and schedules,
// initialisation, data, checkpoints, logging, evaluation, fused-kernel switches that keep the
// same tensors.
constexpr const char* kNoEffectPrefixes[] = {
    "--lr",
    "--min-lr",
    "--weight-decay",
    "--clip-grad",
    "--adam-",
    "--sgd-momentum",
    "--init-method",
    "--rampup-batch-size",
    "--train-",
    "--eval-",
    "--data-",
    "--split",
    "--save",
    "--load",
    "--log",
    "--tensorboard",
    "--wandb",
    "--seed",
    "--exit-",
    "--timing",
    "--ckpt",
    "--dist-ckpt",
    "--mock-data",
    "--no-mmap",
    "--num-workers",
    "--tokenizer-",
    "--vocab-file",
    "--merge-file",
    "--rotary-",
    "--norm-epsilon",
    "--apply-layernorm",
    "--distributed-backend",
    "--distributed-timeout",
    "--use-mcore-models",
    "--bias-",
    "--no-bias-",
    "--masked-softmax",
    "--no-masked-softmax",
    "--no-gradient-accumulation",
    "--overlap-",
    "--check-",
    "--deterministic",
    "--manual-gc",
    "--rerun-",
    "--use-checkpoint",
    "--no-load",
    "--no-save",
    "--finetune",
    "--auto-detect",
    "--attention-softmax-in-fp32",
    "--moe-router-load-balancing",
    "--moe-aux-loss",
    "--moe-z-loss",
    "--moe-router-score",
    "--moe-router-pre-softmax",
    "--moe-router-dtype",
    "--moe-router-topk-scaling",
    "--moe-permute-fusion",
    "--moe-input-jitter",
    "--moe-router-bias-update",
    "--mtp-loss",
    "--use-rope-scaling",
    "--rope-scaling",
    "--calculate-per-token-loss",
    "--async-save",
    "--use-persistent",
    "--profile",
    "--nccl-",
    "--tp-comm-bootstrap",
    "--reset-",
    "--eod-mask",
    "--object-storage",
    "--micro-batch-size-per",
    "--ddp-",
    "--use-dist-ckpt",
    "--ft-",
    "--enable-ft",
    "--straggler",
    "--num-dataset",
    "--dataloader",
    "--no-persist",
    "--keep-fp8-transpose-cache",
    "--fp8-margin",
    "--fp8-amax",
    "--fp8-interval",
    "--fp8-wgrad",
    "--legacy-tokenizer",
    "--spec",
    "--hybrid-",
    "--qk-l2-norm",
    "--moe-apply-probs",
    "--disable-vision",
    "--inference",
    "--flash-decode",
    "--result-rejected",
    "--te-rng-tracker",
    "--no-create-attention-mask",
    "--use-cpu-initialization",
    "--empty-unused-memory-level",
};

}  // namespace

std::span<const MegatronModelArg> megatron_model_args() { return kModelArgs; }

bool megatron_arg_has_no_memory_effect(const std::string& name) {
  return std::any_of(std::begin(kNoEffectPrefixes), std::end(kNoEffectPrefixes),
                     [&](const char* p) { return name.rfind(p, 0) == 0; });
}

std::string megatron_arg_field(std::string name) {
  name = name.substr(2);
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

}  // namespace vramplan::interop
