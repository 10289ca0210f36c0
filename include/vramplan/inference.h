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

#include "vramplan/error.h"
#include "vramplan/estimate.h"
#include "vramplan/model.h"
#include "vramplan/params.h"
#include "vramplan/quantization.h"
#include "vramplan/report.h"
#include "vramplan/scenario_io.h"

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

// One pipeline rank's summary (ranks with the same layers and parts merge in reports).
struct InferenceRank {
  int64_t rank = 0;
  int64_t layers = 0;
  int64_t weights_bytes = 0;
  int64_t kv_bytes_per_token = 0;
  int64_t kv_bytes_per_sequence = 0;
  int64_t activation_bytes = 0;
  int64_t device_bytes = 0;
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
  std::optional<Capacity> capacity;
  std::vector<Fit> fit;  // filled by the front end
  std::vector<std::string> warnings;
};

// Validates the scenario and estimates serving memory per GPU.
Result<InferenceEstimate> estimate_inference(const InferenceScenario& scenario,
                                             const EstimateOptions& options = {});

// --- Building an InferenceScenario from settings (CLI flags, scenario files, API requests) ---

// Every inference setting in --help order: the model keys of scenario_options() and the serving
// ones. Keys are the CLI option names with underscores (--kv-dtype ⇄ "kv_dtype").
std::span<const OptionSpec> inference_options();

struct ResolvedInference {
  InferenceScenario scenario;
  std::string gpu;                       // catalog id the fit table starts with
  std::optional<double> gpu_memory_gib;  // a GPU of any other capacity
  std::string quantization;              // quant_method read from config.json ("" = none)
  std::vector<std::string> warnings;
};

// REQUIRES: settings is a JSON object. Weight formats come from config.json's torch_dtype and
// quantization_config unless --weight-dtype or a per-module dtype says otherwise; engine
// defaults (max_num_batched_tokens, max_num_seqs) follow vLLM's for the chosen GPU.
Result<ResolvedInference> resolve_inference(const nlohmann::json& settings,
                                            const FileReader& read_file,
                                            const ModelFetcher& fetch_model = nullptr);

// --- Reports (stable JSON keys; table, markdown and CSV for people and spreadsheets) ---

// weights_bytes, kv_bytes_per_token, kv_bytes_per_sequence, kv_cache_bytes, activation_bytes,
// allocated/reserved/device_bytes, rows[] {component, bytes, counts_toward, formula, source},
// ranks[], max_kv_tokens and max_sequences (with a fraction; null otherwise), capacity {...},
// fit[], warnings[], parameters, scenario.
nlohmann::json inference_to_json(const InferenceScenario& s, const InferenceEstimate& e);
std::string render_inference_table(const InferenceScenario& s, const InferenceEstimate& e,
                                   const TableOptions& options = {});
std::string render_inference_markdown(const InferenceScenario& s, const InferenceEstimate& e);
std::string render_inference_csv(const InferenceEstimate& e);

// --- Published serving figures (data/measurements/serving_published.csv, compiled in) ---

// One logged figure of one run next to vramplan's prediction for it.
struct ServingCheck {
  std::string id;        // run id from the CSV
  std::string engine;    // "vllm" | "sglang"
  std::string version;   // engine version as logged
  std::string quantity;  // "weights", "activation peak", "non-torch", "KV cache", "KV tokens"
  std::string unit;      // "GiB" | "tokens"
  double published = 0;
  double predicted = 0;
  std::string source;  // URL of the log
  std::string note;
  // Signed error relative to the published magnitude; 0 when both are 0.
  double error_pct() const;
};

struct ServingSummary {
  std::string quantity;
  int rows = 0;
  double median_abs_pct = 0;
  double max_abs_pct = 0;
};

struct ServingValidation {
  std::vector<ServingCheck> rows;
  std::vector<ServingSummary> summaries;
};

// Predicts every published figure with the default conventions (the CSV supplies only each
// run's inputs: model, formats, tp, the GPU total logged, fraction and the engine's profile
// sizes), never per-row constants.
Result<ServingValidation> validate_serving();

}  // namespace vramplan
