// One endpoint of the JSON API (/api/estimate, /api/infer, /api/plan, /api/sweep) fed the fuzzer's
// bytes as its POST body, through handle_request() exactly as the server calls it: the settings
// readers (io/), the importers behind "from", the model readers behind "model_config", the estimate
// and the JSON writers. The answer must be JSON; a 200 passes check_bytes, an error names its field
// (fuzz_checks.h).
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "fuzz_checks.h"
#include "fuzz_targets.h"
#include "server/api.h"

namespace vramplan::fuzz {
namespace {

// The planner with small limits: a search over 4,096 GPUs takes seconds (the server's own bound,
// tested in plan_test.cc); the fuzzer needs thousands of inputs a second.
constexpr int64_t kMaxFuzzPlanGpus = 64;

// For /api/plan: inputs over the fuzzing limits are skipped (false); the search runs on one
// thread.
bool bound_plan(std::string& body) {
  nlohmann::json parsed = nlohmann::json::parse(body, nullptr, false);
  if (parsed.is_discarded() || !parsed.is_object()) return true;
  const auto gpus = parsed.find("gpus");
  if (gpus != parsed.end() && gpus->is_number() && gpus->get<double>() > kMaxFuzzPlanGpus)
    return false;
  if (gpus != parsed.end() && gpus->is_string()) return false;  // "4096" is read as a number
  parsed["threads"] = 1;
  body = parsed.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return true;
}

}  // namespace

int fuzz_api(std::string_view path, const uint8_t* data, size_t size) {
  server::Request request;
  request.method = "POST";
  request.path = std::string(path);
  request.content_type = "application/json";
  request.body.assign(reinterpret_cast<const char*>(data), size);
  if (path == "/api/plan" && !bound_plan(request.body)) return -1;  // not added to the corpus
  const server::Response response = server::handle_request(request);
  check_api_answer(response.status, response.body);
  return 0;
}

}  // namespace vramplan::fuzz
