#include "validation/throughput/published_release_floor.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "validation/dataset_rows.h"
#include "validation/throughput/published_throughput.h"

namespace vramplan {

NoiseFloor published_release_floor(const std::vector<CsvRow>& rows, bool held_out_only) {
  static const char* const kLayout[] = {"hf_model",  "gpu",         "gpus",         "tp",
                                        "pp",        "cp",          "vp",           "ep",
                                        "etp",       "micro_batch", "global_batch", "seq_len",
                                        "precision", "recompute",   "framework"};
  std::map<std::string, std::vector<double>> groups;
  for (const CsvRow& r : rows) {
    const double measured = std::strtod(r["tokens_per_s_per_gpu"].c_str(), nullptr);
    if (r["hf_model"].empty() || !(measured > 0)) continue;
    if (held_out_only && !published_held_out(r["hf_model"])) continue;
    std::string key;
    for (const char* column : kLayout) key += r[column] + "|";
    groups[key].push_back(measured);
  }
  return dataset_rows::floor_of_groups(std::move(groups));
}

}  // namespace vramplan
