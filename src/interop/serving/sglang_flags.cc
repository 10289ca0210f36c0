// SGLang's flags for `python -m sglang.launch_server` (sglang/srt/server_args.py ServerArgs and
// its add_cli_args), with how many values each takes and what it does for memory. "--tp", "--dp"
// and "--ep" are argparse's abbreviations of --tp-size, --dp-size and --ep-size, which SGLang's
// documentation uses.
#include "interop/serving/engine_flags.h"

namespace vramplan::interop {
namespace {

using A = Action;
using R = Arity;
using E = Effect;

constexpr const char* kGraphs =
    "the CUDA graph pool's size follows the captured batch sizes (vramplan counts a fixed "
    "--cuda-graph-gib)";
constexpr const char* kLora = "LoRA adapter weights and their memory pool";
constexpr const char* kSpeculative = "a draft model's weights and KV cache, or speculative heads";

constexpr FlagSpec kFlags[] = {
    // What vramplan reads.
    {"--model-path --model", R::kValue, E::kRead, "", A::kModel},
    {"--tp-size --tensor-parallel-size --tp", R::kValue, E::kRead, "", A::kTp},
    {"--pp-size --pipeline-parallel-size --pp", R::kValue, E::kRead, "", A::kPp},
    {"--dp-size --data-parallel-size --dp", R::kValue, E::kRead, "", A::kDp},
    {"--ep-size --expert-parallel-size --ep", R::kValue, E::kRead, "", A::kEp},
    {"--enable-ep-moe", R::kSwitch, E::kRead, "", A::kEnableEpMoe},
    {"--enable-dp-attention", R::kSwitch, E::kRead, "", A::kDpAttention},
    {"--mem-fraction-static", R::kValue, E::kRead, "", A::kMemFraction},
    {"--max-running-requests", R::kValue, E::kRead, "", A::kMaxSeqs},
    {"--chunked-prefill-size", R::kValue, E::kRead, "", A::kChunkedPrefillSize},
    {"--context-length", R::kValue, E::kRead, "", A::kContext},
    {"--kv-cache-dtype", R::kValue, E::kRead, "", A::kKvDtype},
    {"--disable-cuda-graph", R::kSwitch, E::kRead, "", A::kDisableCudaGraph},
    {"--quantization", R::kValue, E::kRead, "", A::kQuantization},
    {"--dtype", R::kValue, E::kRead, "", A::kDtype},
    {"--page-size", R::kValue, E::kRead, "", A::kBlockSize},
    {"--cpu-offload-gb", R::kValue, E::kRead, "", A::kOffloadGb},
    {"--enable-hierarchical-cache", R::kSwitch, E::kRead, "", A::kHierarchicalCache},
    {"--hicache-ratio", R::kValue, E::kRead, "", A::kHicacheRatio},
    {"--hicache-size", R::kValue, E::kRead, "", A::kHicacheSize},
    // Memory vramplan does not model.
    {"--max-total-tokens", R::kValue, E::kNotModelled, "caps the KV pool at this many tokens"},
    {"--max-prefill-tokens", R::kValue, E::kNotModelled,
     "the tokens of one prefill batch (vramplan sizes the prefill by --chunked-prefill-size)"},
    {"--cuda-graph-max-bs", R::kValue, E::kNotModelled, kGraphs},
    {"--cuda-graph-bs", R::kList, E::kNotModelled, kGraphs},
    {"--enable-torch-compile", R::kSwitch, E::kNotModelled,
     "torch.compile's graphs and buffers beside the CUDA graphs"},
    {"--torch-compile-max-bs", R::kValue, E::kNotModelled,
     "torch.compile's graphs and buffers beside the CUDA graphs"},
    {"--json-model-override-args", R::kValue, E::kNotModelled,
     "overrides config.json's model shape"},
    {"--speculative-algorithm", R::kValue, E::kNotModelled, kSpeculative},
    {"--speculative-draft-model-path --speculative-draft-model", R::kValue, E::kNotModelled,
     kSpeculative},
    {"--speculative-num-steps", R::kValue, E::kNotModelled, kSpeculative},
    {"--speculative-eagle-topk", R::kValue, E::kNotModelled, kSpeculative},
    {"--speculative-num-draft-tokens", R::kValue, E::kNotModelled, kSpeculative},
    {"--enable-lora", R::kSwitch, E::kNotModelled, kLora},
    {"--lora-paths", R::kList, E::kNotModelled, kLora},
    {"--max-loras-per-batch", R::kValue, E::kNotModelled, kLora},
    {"--max-lora-rank", R::kValue, E::kNotModelled, kLora},
    {"--lora-target-modules", R::kList, E::kNotModelled, kLora},
    {"--moe-a2a-backend", R::kValue, E::kNotModelled,
     "the all-to-all backend's communication buffers (DeepEP, Mooncake)"},
    {"--enable-deepep-moe", R::kSwitch, E::kNotModelled, "DeepEP's communication buffers"},
    {"--deepep-mode", R::kValue, E::kNotModelled, "DeepEP's communication buffers"},
    {"--ep-num-redundant-experts", R::kValue, E::kNotModelled,
     "redundant expert copies for load balancing"},
    {"--enable-eplb", R::kSwitch, E::kNotModelled, "redundant expert copies for load balancing"},
    {"--enable-two-batch-overlap", R::kSwitch, E::kNotModelled,
     "two micro-batches overlap in each step"},
    {"--enable-dp-lm-head", R::kSwitch, E::kNotModelled,
     "the LM head split over the attention tensor-parallel group"},
    {"--moe-dense-tp-size", R::kValue, E::kNotModelled,
     "dense MLP layers split over fewer GPUs than tp"},
    {"--swa-full-tokens-ratio", R::kValue, E::kNotModelled,
     "the sliding-window layers' share of the KV pool"},
    {"--disable-hybrid-swa-memory", R::kSwitch, E::kNotModelled,
     "sliding-window layers keep as many KV tokens as full-attention ones"},
    {"--decode-context-parallel-size --dcp-size", R::kValue, E::kNotModelled,
     "the KV cache split over decode context-parallel ranks"},
    {"--config", R::kValue, E::kNotModelled,
     "a YAML file of arguments vramplan cannot read here (paste its flags instead)"},
    // No effect on memory.
    {"--disable-radix-cache", R::kSwitch, E::kNoEffect,
     "the radix (prefix) cache shares blocks of the same KV pool"},
    {"--trust-remote-code", R::kSwitch, E::kNoEffect, ""},
    {"--host", R::kValue, E::kNoEffect, ""},
    {"--port", R::kValue, E::kNoEffect, ""},
    {"--api-key", R::kValue, E::kNoEffect, ""},
    {"--served-model-name", R::kValue, E::kNoEffect, ""},
    {"--tokenizer-path", R::kValue, E::kNoEffect, ""},
    {"--tokenizer-mode", R::kValue, E::kNoEffect, ""},
    {"--skip-tokenizer-init", R::kSwitch, E::kNoEffect, ""},
    {"--load-format", R::kValue, E::kNoEffect, "the same weights in memory however they load"},
    {"--download-dir", R::kValue, E::kNoEffect, ""},
    {"--revision", R::kValue, E::kNoEffect, ""},
    {"--chat-template", R::kValue, E::kNoEffect, ""},
    {"--tool-call-parser", R::kValue, E::kNoEffect, ""},
    {"--reasoning-parser", R::kValue, E::kNoEffect, ""},
    {"--log-level", R::kValue, E::kNoEffect, ""},
    {"--log-requests", R::kSwitch, E::kNoEffect, ""},
    {"--enable-metrics", R::kSwitch, E::kNoEffect, ""},
    {"--random-seed", R::kValue, E::kNoEffect, ""},
    {"--watchdog-timeout", R::kValue, E::kNoEffect, ""},
    {"--stream-interval", R::kValue, E::kNoEffect, ""},
    {"--schedule-policy", R::kValue, E::kNoEffect, ""},
    {"--schedule-conservativeness", R::kValue, E::kNoEffect, ""},
    {"--attention-backend", R::kValue, E::kNoEffect, ""},
    {"--prefill-attention-backend", R::kValue, E::kNoEffect, ""},
    {"--decode-attention-backend", R::kValue, E::kNoEffect, ""},
    {"--sampling-backend", R::kValue, E::kNoEffect, ""},
    {"--grammar-backend", R::kValue, E::kNoEffect, ""},
    {"--moe-runner-backend", R::kValue, E::kNoEffect, ""},
    {"--nnodes", R::kValue, E::kNoEffect, "the layout comes from the parallel sizes"},
    {"--node-rank", R::kValue, E::kNoEffect, ""},
    {"--dist-init-addr --nccl-init-addr", R::kValue, E::kNoEffect, ""},
    {"--base-gpu-id", R::kValue, E::kNoEffect, ""},
    {"--device", R::kValue, E::kNoEffect, ""},
    {"--is-embedding", R::kSwitch, E::kNoEffect, ""},
    {"--enable-mixed-chunk", R::kSwitch, E::kNoEffect, ""},
    {"--disable-overlap-schedule", R::kSwitch, E::kNoEffect, ""},
    {"--enable-nccl-nvls", R::kSwitch, E::kNoEffect, ""},
    {"--disable-custom-all-reduce", R::kSwitch, E::kNoEffect,
     "vramplan's NCCL allowance covers either all-reduce"},
    {"--enable-p2p-check", R::kSwitch, E::kNoEffect, ""},
    {"--load-balance-method", R::kValue, E::kNoEffect, ""},
    {"--disaggregation-mode", R::kValue, E::kNoEffect, ""},
    {"--disaggregation-transfer-backend", R::kValue, E::kNoEffect, ""},
    {"--disaggregation-bootstrap-port", R::kValue, E::kNoEffect, ""},
    {"--decode-log-interval", R::kValue, E::kNoEffect, ""},
    {"--enable-cache-report", R::kSwitch, E::kNoEffect, ""},
    {"--quantization-param-path", R::kValue, E::kNoEffect, ""},
    {"--file-storage-path", R::kValue, E::kNoEffect, ""},
    {"--mm-attention-backend", R::kValue, E::kNoEffect, ""},
};

}  // namespace

std::span<const FlagSpec> sglang_flags() { return kFlags; }

}  // namespace vramplan::interop
