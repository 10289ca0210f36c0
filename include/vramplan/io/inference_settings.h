// Building an InferenceScenario from settings (CLI flags, scenario files, API requests).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "vramplan/base/error.h"
#include "vramplan/io/scenario_io.h"
#include "vramplan/serving/inference.h"

namespace vramplan {

struct ResolvedInference {
  InferenceScenario scenario;
  std::string gpu;                        // catalog id the fit table starts with
  std::optional<double> gpu_memory_gib;   // a GPU of any other capacity
  std::optional<double> host_memory_gib;  // the node's RAM (else the catalog GPU's node)
  std::string quantization;               // quant_method read from config.json ("" = none)
  std::vector<std::string> warnings;
  std::optional<Imported> imported;  // what "from" held (a vLLM or SGLang command line)
};

// REQUIRES: settings is a JSON object. Weight formats come from config.json's torch_dtype and
// quantization_config unless --weight-dtype or a per-module dtype says otherwise; engine
// defaults (max_num_batched_tokens, max_num_seqs) follow vLLM's for the chosen GPU.
Result<ResolvedInference> resolve_inference(const nlohmann::json& settings,
                                            const FileReader& read_file,
                                            const ModelFetcher& fetch_model = nullptr);

}  // namespace vramplan
