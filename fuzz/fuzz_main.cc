// libFuzzer's entry points for every target (fuzz_targets.h); VRAMPLAN_FUZZ_TARGET picks one:
//   hf_config, hub, roofline, api_estimate, api_infer, api_plan, api_sweep, import_<format>
//   (a --from-format name with '-' written '_': import_megatron_yaml, import_hf_trainer, ...).
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "fuzz_checks.h"
#include "fuzz_targets.h"
#include "server/search_limits.h"
#include "vramplan/interop/import.h"

namespace {

using Target = std::function<int(const uint8_t*, size_t)>;
Target chosen;

std::vector<std::pair<std::string, Target>> targets() {
  using namespace vramplan::fuzz;
  std::vector<std::pair<std::string, Target>> list = {
      {"hf_config", fuzz_hf_config}, {"hub", fuzz_hub}, {"roofline", fuzz_roofline}};
  for (const char* endpoint : {"estimate", "infer", "plan", "sweep"})
    list.emplace_back(std::string("api_") + endpoint,
                      [path = std::string("/api/") + endpoint](const uint8_t* d, size_t n) {
                        return fuzz_api(path, d, n);
                      });
  for (const vramplan::ImportFormat& format : vramplan::import_formats()) {
    std::string name = std::string("import_") + format.name;
    for (char& c : name)
      if (c == '-') c = '_';
    list.emplace_back(name, [format = std::string(format.name)](const uint8_t* d, size_t n) {
      return fuzz_import(format, d, n);
    });
  }
  return list;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const char* name = std::getenv("VRAMPLAN_FUZZ_TARGET");
  std::string names;
  for (auto& [target, run] : targets()) {
    if (name != nullptr && target == name) chosen = run;
    names += " " + target;
  }
  if (std::getenv("VRAMPLAN_FUZZ_LIST") != nullptr) {
    std::printf("%s\n", names.c_str() + 1);
    std::exit(0);
  }
  if (!chosen) {
    std::fprintf(stderr, "fuzz_vramplan: VRAMPLAN_FUZZ_TARGET=%s is not a target; one of:%s\n",
                 name == nullptr ? "(unset)" : name, names.c_str());
    std::exit(2);
  }
  vramplan::fuzz::use_offline_hub();
  // A search past 2 s stops and answers 503 (the server's own budget, tested in
  // search_limits_test.cc), under the fuzzer's 10 s timeout even in this -O0 sanitized build.
  vramplan::server::configure_limits({.max_searches = 1, .search_seconds = 2});
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return chosen(data, size);
}
