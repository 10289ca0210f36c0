// Per-GPU serving memory: weights under TP/PP/EP in their real formats, the KV cache (MHA/GQA,
// MLA's latent, sliding-window layers, paged blocks, fp16/bf16/fp8/int8/int4), the activation
// workspace an engine reserves for a prefill chunk and its sampler, CUDA graphs and the memory
// outside PyTorch. And the inverse question: at vLLM's --gpu-memory-utilization (or SGLang's
// --mem-fraction-static) how many KV tokens and sequences fit.
#pragma once

#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "vramplan/base/error.h"
#include "vramplan/model/model.h"
#include "vramplan/model/params.h"
#include "vramplan/model/quantization.h"
#include "vramplan/training/estimate.h"

namespace vramplan {

enum class KvDtype { kBf16, kFp16, kFp32, kFp8, kInt8, kInt4 };
inline constexpr std::array<const char*, 6> kKvDtypeNames = {"bf16", "fp16", "fp32",
                                                             "fp8",  "int8", "int4"};
inline const char* kv_dtype_name(KvDtype d) { return kKvDtypeNames[static_cast<size_t>(d)]; }

enum class ServingEngine { kVllm, kSglang };
inline constexpr std::array<const char*, 2> kServingEngineNames = {"vllm", "sglang"};
inline const char* engine_name(ServingEngine e) {
  return kServingEngineNames[static_cast<size_t>(e)];
}

// Memory outside the tensors an inference engine allocates through PyTorch.
struct InferenceOverheads {
  int64_t cuda_context_bytes = 600ll << 20;    // before the engine profiles (outside its budget)
  int64_t nccl_bytes_per_group = 512ll << 20;  // per communicator group of size > 1
  // What vLLM's profiler logs as non-torch memory on one GPU without NCCL: kernels loaded during
  // the profile run (lazy module loading), cuBLAS handles. 0.13 GiB on H100 (vLLM V1 logs).
  int64_t non_torch_bytes = int64_t{133} << 20;
  int64_t cuda_graph_bytes = 512ll << 20;  // graph pool of the captured decode batch sizes
};

// What a serving engine keeps in host memory (docs/offload.md, "Serving"): weights streamed from
// pinned CPU memory, vLLM V0's swap space, the KV cache offloaded to the host (vLLM's
// OffloadingConnector or LMCache), SGLang's hierarchical cache. Zero / unset = none.
struct ServingOffload {
  int64_t cpu_offload_bytes = 0;    // --cpu-offload-gb (vLLM, SGLang): weights per GPU
  int64_t swap_space_bytes = 0;     // vLLM --swap-space: per GPU
  int64_t kv_offload_bytes = 0;     // vLLM --kv-offloading-size: summed over the tp·pp ranks
  bool hierarchical_cache = false;  // SGLang --enable-hierarchical-cache
  double hicache_ratio = 2.0;       // SGLang: host pool = ratio × the GPU pool (tokens)
  int64_t hicache_bytes = 0;        // SGLang --hicache-size (GB per GPU), overrides the ratio
  bool any() const {
    return cpu_offload_bytes > 0 || swap_space_bytes > 0 || kv_offload_bytes > 0 ||
           hierarchical_cache;
  }
};

struct InferenceScenario {
  ModelConfig model;
  ModuleFormats weights;  // per module class
  KvDtype kv_dtype = KvDtype::kBf16;

  int64_t tp = 1;
  int64_t pp = 1;
  int64_t ep = 1;  // expert parallel: routed experts split over ep ranks (ep divides tp·dp)
  int64_t dp = 1;  // data-parallel attention replicas (vLLM --data-parallel-size)

  int64_t context = 0;      // tokens per sequence (max_model_len); 0 = max_position_embeddings
  int64_t batch = 1;        // concurrent sequences of `context` tokens
  int64_t block_size = 16;  // paged KV block, tokens
  int64_t max_num_batched_tokens = 8192;  // prefill chunk the engine profiles (vLLM)
  int64_t max_num_seqs = 1024;            // sequences the profile run samples for (vLLM)
  double sampler_bytes_per_logit = 38;    // alive at the sampler's peak, per logit

  bool cuda_graphs = true;            // false: --enforce-eager
  bool cuda_graph_in_budget = false;  // vLLM subtracts graph memory from the KV budget
  ServingEngine engine = ServingEngine::kVllm;
  std::optional<double> gpu_memory_utilization;  // vLLM: fraction of the GPU total it may use
  std::optional<double> mem_fraction_static;     // SGLang: weights + KV pool fraction
  int64_t gpu_total_bytes = 0;  // total GPU memory as the engine sees it (capacity questions)
  InferenceOverheads overheads;
  ServingOffload offload;
  Images images;  // per request (--images, --image-size): multimodal models only

  int64_t world_size() const { return tp * pp * dp; }
};

// The answer to "how many tokens fit" at an engine's memory fraction, on the binding GPU.
struct Capacity {
  ServingEngine engine = ServingEngine::kVllm;
  double fraction = 0;          // gpu_memory_utilization or mem_fraction_static
  int64_t total_bytes = 0;      // GPU total the fraction applies to
  int64_t requested_bytes = 0;  // fraction × total (SGLang: × memory free at start)
  int64_t kv_budget_bytes = 0;  // what is left for the KV cache, >= 0
  int64_t shortfall_bytes = 0;  // > 0 when the fixed costs exceed the requested memory
  int64_t num_blocks = 0;       // paged blocks (vLLM); tokens / block_size
  int64_t max_kv_tokens = 0;    // tokens every layer can hold
  int64_t max_sequences = 0;    // sequences of `context` tokens (sliding layers capped)
  std::string formula;          // the subtraction with values
  std::string source;
};

// One tier of the KV cache on one GPU's rank: the GPU pool, or a host pool behind it.
struct KvTier {
  std::string tier;    // "gpu", "host: KV offload", "host: HiCache", "host: swap space"
  int64_t bytes = 0;   // per GPU (for the GPU without a fraction: the batch's KV cache)
  int64_t tokens = 0;  // tokens it holds in every layer of the rank
  std::string formula;
  std::string source;
};

// One pipeline rank's summary (ranks with the same layers and parts merge in reports).
struct InferenceRank {
  int64_t rank = 0;
  int64_t layers = 0;
  int64_t weights_bytes = 0;
  int64_t kv_bytes_per_token = 0;
  int64_t kv_bytes_per_sequence = 0;
  int64_t activation_bytes = 0;
  int64_t device_bytes = 0;
  int64_t host_bytes = 0;      // rows counting toward host (offload)
  int64_t max_kv_tokens = -1;  // -1 when no fraction was given
};

struct InferenceEstimate {
  ParamCounts parameters;
  int64_t context = 0;                // resolved tokens per sequence
  int64_t binding_rank = 0;           // the pipeline rank the rows describe
  std::vector<Row> rows;              // per GPU of the binding rank
  std::vector<InferenceRank> ranks;   // every pipeline rank
  int64_t weights_bytes = 0;          // per GPU: every weight, scale and buffer
  int64_t kv_bytes_per_token = 0;     // per GPU: one token in every layer the GPU holds
  int64_t kv_bytes_per_sequence = 0;  // per GPU: one sequence of `context` tokens, paged
  int64_t kv_cache_bytes = 0;         // batch × kv_bytes_per_sequence
  int64_t activation_bytes = 0;       // the profiled peak (prefill chunk, sampler)
  int64_t allocated_bytes = 0;
  int64_t reserved_bytes = 0;
  int64_t device_bytes = 0;
  int64_t host_bytes = 0;        // per GPU's process: the rows counting toward host
  std::vector<KvTier> kv_tiers;  // the GPU pool first, then the host pools (binding rank)
  std::optional<Capacity> capacity;
  std::vector<Fit> fit;  // filled by the front end
  // With weights offloaded (cpu_offload_gib), what a memory-bound decode step on the chosen GPU
  // spends reading them (perf/weight_reads.h): filled by the front end, which knows the GPU.
  struct DecodeReads {
    std::string gpu;
    double hbm_s = 0, host_link_s = 0;
  };
  std::optional<DecodeReads> decode_weight_reads;
  std::vector<std::string> warnings;
};

// Validates the scenario and estimates serving memory per GPU.
Result<InferenceEstimate> estimate_inference(const InferenceScenario& scenario,
                                             const EstimateOptions& options = {});

}  // namespace vramplan
