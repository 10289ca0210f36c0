// The GPU catalog (data/gpus.json, compiled in; users may load their own) and the fit verdict.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "vramplan/error.h"
#include "vramplan/estimate.h"

namespace vramplan {

struct Gpu {
  std::string id;             // "h100-80gb"
  std::string name;           // "NVIDIA H100 SXM 80GB"
  int64_t nominal_bytes = 0;  // as marketed (decimal GB)
  int64_t usable_bytes = 0;   // total memory the driver reports (nvidia-smi / rocm-smi total)
  std::string source;         // where usable_bytes comes from
};

struct GpuCatalog {
  std::vector<Gpu> gpus;
  const Gpu* find(std::string_view id) const;  // case-insensitive
  std::string ids() const;                     // "v100-16gb, v100-32gb, ..." for error messages
};

// Parses a catalog file: {"gpus": [{"id":..., "name":..., "nominal_gb":..., "usable_mib":...,
// "source":...}, ...]}.
Result<GpuCatalog> parse_gpu_catalog(std::string_view json_text);

// The catalog compiled into the program.
const GpuCatalog& builtin_gpus();

// A GPU of any capacity (--gpu-memory-gib X): nominal = usable = X GiB.
Gpu custom_gpu(double gib);

// Above kTightFraction of usable memory is "tight": Fujii et al. found no OOM below 80%.
inline constexpr double kTightFraction = 0.80;
Fit fit_on(const Gpu& gpu, int64_t device_bytes);
std::vector<Fit> fit_table(const GpuCatalog& catalog, int64_t device_bytes);

}  // namespace vramplan
