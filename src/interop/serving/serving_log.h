// What an engine's startup log, pasted below its command, says that a command does not: which
// vLLM engine ran (V0 or V1: their memory profiles and defaults differ) and the GPU total the
// engine saw. Measured figures in the log (weights, KV cache) are never read.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace vramplan::interop {

enum class VllmGeneration { kUnknown, kV0, kV1 };

struct LogFact {
  std::string line;  // the log message as written (after the logger's prefix)
  std::string value;
};

struct EngineLog {
  std::string version;  // "0.6.5", "" when the log does not say
  VllmGeneration generation = VllmGeneration::kUnknown;
  std::optional<LogFact> generation_from;  // the line that told the engine
  std::optional<LogFact> version_from;
  std::optional<double> gpu_total_gib;  // "total_gpu_memory (79.22GiB)", "(78.57/79.18 GiB)"
  std::optional<LogFact> gpu_total_from;
  std::optional<double> utilization;  // "gpu_memory_utilization (0.90)"
  std::optional<LogFact> utilization_from;
  size_t other_lines = 0;  // lines read for nothing
};

EngineLog read_engine_log(const std::vector<std::string>& lines);

// "0.6.5" -> 6 (the minor version of a 0.x release), or -1.
int vllm_minor_version(const std::string& version);

}  // namespace vramplan::interop
