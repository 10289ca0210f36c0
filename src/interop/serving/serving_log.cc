#include "interop/serving/serving_log.h"

#include <cstdlib>
#include <string_view>

namespace vramplan::interop {
namespace {

// The message after the logger's prefix ("INFO 12-13 19:54:18 worker.py:243] ").
std::string message_of(const std::string& line) {
  const size_t mark = line.find("] ");
  std::string m = mark == std::string::npos ? line : line.substr(mark + 2);
  while (!m.empty() && (m.back() == ' ' || m.back() == '\r')) m.pop_back();
  return m.size() > 120 ? m.substr(0, 117) + "..." : m;
}

// The number starting at text[pos] after blanks and an opening parenthesis; nullopt if none.
std::optional<double> number_at(const std::string& text, size_t pos, std::string* written) {
  while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\t' || text[pos] == '(')) ++pos;
  const char* start = text.c_str() + pos;
  char* end = nullptr;
  const double value = std::strtod(start, &end);
  if (end == start) return std::nullopt;
  if (written != nullptr) *written = std::string(start, static_cast<size_t>(end - start));
  return value;
}

// "(v0.6.5)" after `marker`: the version without its "v".
std::string version_after(const std::string& line, std::string_view marker) {
  size_t pos = line.find(marker);
  if (pos == std::string::npos) return "";
  pos += marker.size();
  const size_t end = line.find_first_of(") ", pos);
  return line.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
}

// vllm/worker/worker.py (V0) logged "Memory profiling ..."; V1's is v1/worker/gpu_worker.py.
bool from_v0_worker(const std::string& line) {
  const size_t pos = line.find("worker.py:");
  return pos != std::string::npos && (pos == 0 || line[pos - 1] == ' ' || line[pos - 1] == '[') &&
         line.find("Memory profiling") != std::string::npos;
}

void read_generation(const std::string& line, EngineLog& log) {
  // vllm/v1/engine/core.py and vllm/engine/llm_engine.py log the engine they start.
  if (std::string v = version_after(line, "Initializing a V1 LLM engine (v"); !v.empty()) {
    log.generation = VllmGeneration::kV1;
    log.version = v;
    log.generation_from = LogFact{message_of(line), "V1 " + v};
  } else if (std::string v0 = version_after(line, "Initializing an LLM engine (v"); !v0.empty()) {
    log.generation = VllmGeneration::kV0;
    log.version = v0;
    log.generation_from = LogFact{message_of(line), "V0 " + v0};
  } else if (from_v0_worker(line) && !log.generation_from) {
    log.generation = VllmGeneration::kV0;
    log.generation_from = LogFact{message_of(line), "V0 (vllm/worker/worker.py)"};
  }
}

// The GPU total and the fraction the engine applied; true when the line told either.
bool read_memory(const std::string& line, EngineLog& log) {
  std::string written;
  bool used = false;
  if (size_t pos = line.find("total_gpu_memory"); pos != std::string::npos) {
    if (auto gib = number_at(line, pos + 16, &written)) {
      log.gpu_total_gib = *gib;
      log.gpu_total_from = LogFact{message_of(line), written};
      used = true;
    }
  }
  // vLLM V1 (v1/worker/gpu_worker.py): "Free memory on device (78.57/79.18 GiB) on startup".
  if (size_t pos = line.find("Free memory on device ("); pos != std::string::npos) {
    const size_t slash = line.find('/', pos);
    if (slash != std::string::npos)
      if (auto gib = number_at(line, slash + 1, &written)) {
        log.gpu_total_gib = *gib;
        log.gpu_total_from = LogFact{message_of(line), written};
        used = true;
      }
  }
  if (size_t pos = line.find("gpu_memory_utilization"); pos != std::string::npos) {
    if (auto f = number_at(line, pos + 22, &written)) {
      log.utilization = *f;
      log.utilization_from = LogFact{message_of(line), written};
      used = true;
    }
  }
  return used;
}

}  // namespace

int vllm_minor_version(const std::string& version) {
  if (version.rfind("0.", 0) != 0) return -1;
  return std::atoi(version.c_str() + 2);
}

EngineLog read_engine_log(const std::vector<std::string>& lines) {
  EngineLog log;
  for (const std::string& line : lines) {
    const std::string before = log.generation_from ? log.generation_from->line : "";
    read_generation(line, log);
    bool used = log.generation_from && log.generation_from->line != before;
    if (const std::string api = version_after(line, "vLLM API server version ");
        !api.empty() && log.version.empty()) {
      log.version = api;
      log.version_from = LogFact{message_of(line), api};
      used = true;
    }
    if (read_memory(line, log)) used = true;
    if (!used) ++log.other_lines;
  }
  return log;
}

}  // namespace vramplan::interop
