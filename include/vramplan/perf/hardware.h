// The GPU catalog (data/gpus.json, compiled in; users may load their own) and the fit verdict.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "vramplan/base/error.h"
#include "vramplan/model/precision.h"
#include "vramplan/training/estimate.h"

namespace vramplan {

struct Gpu {
  std::string id;             // "h100-80gb"
  std::string name;           // "NVIDIA H100 SXM 80GB"
  int64_t nominal_bytes = 0;  // as marketed (decimal GB)
  int64_t usable_bytes = 0;   // total memory the driver reports (nvidia-smi / rocm-smi total)
  std::string source;         // where usable_bytes comes from

  // Speeds, for the roofline and step time (0 = not known; optional in catalog files).
  // Dense tensor-core peaks (no 2:4 sparsity), TFLOP/s.
  double bf16_tflops = 0;  // 0 where the GPU has no bf16 tensor cores (V100)
  double fp16_tflops = 0;  // 0 = the bf16 rate
  double fp8_tflops = 0;   // 0 where the GPU has no fp8 tensor cores
  double fp4_tflops = 0;   // 0 where the GPU has no fp4 tensor cores
  double tf32_tflops = 0;  // tensor-core tf32 (fp32 matmuls under PyTorch's allow_tf32)
  double fp32_tflops = 0;  // non-tensor fp32 (vector units)
  double hbm_gbps = 0;     // memory bandwidth, GB/s
  double nvlink_gbps = 0;  // NVLink/NVSwitch/Infinity Fabric per GPU, GB/s one direction; 0 = PCIe
  int gpus_per_node = 8;   // GPUs in the typical server
  // Streaming multiprocessors (AMD: compute units): how many attention tiles run at once.
  // 0 = not known (attention is then priced as if it filled the GPU).
  int sm_count = 0;
  double inter_node_gbps = 0;  // typical network bandwidth per GPU, GB/s one direction
  double host_memory_gib = 0;  // host RAM of the typical server, GiB; 0 = not known
  // The GPU's link to its host (PCIe x16, NVLink-C2C), GB/s one direction, and the typical
  // node's DRAM bandwidth (all sockets), GB/s: what offloaded states, parameters and
  // activations move over and what a CPU optimizer streams through. 0 = not known.
  double host_link_gbps = 0;
  double host_memory_gbps = 0;
  std::string speed_source;  // datasheets the speeds come from

  // Peak TFLOP/s for matmuls in dtype t (fp32 = tf32 tensor cores); 0 if the GPU has none.
  double peak_tflops(DType t) const;
};

struct GpuCatalog {
  std::vector<Gpu> gpus;
  const Gpu* find(std::string_view id) const;  // case-insensitive
  std::string ids() const;                     // "v100-16gb, v100-32gb, ..." for error messages
};

// Parses a catalog file: {"gpus": [{"id":..., "name":..., "nominal_gb":..., "usable_mib":...,
// "source":...}, ...]}. Optional speed fields (each a non-negative number, or null for "absent"):
// bf16_tflops, fp16_tflops, fp8_tflops, fp4_tflops, tf32_tflops, fp32_tflops, hbm_gbps,
// nvlink_gbps, gpus_per_node (a positive integer), inter_node_gbps, host_memory_gib (the typical
// node's RAM), host_link_gbps, host_memory_gbps, and speed_source (a string).
Result<GpuCatalog> parse_gpu_catalog(std::string_view json_text);

// The catalog compiled into the program.
const GpuCatalog& builtin_gpus();

// A GPU of any capacity (--gpu-memory-gib X): nominal = usable = X GiB.
Gpu custom_gpu(double gib);

// Above kTightFraction of usable memory is "tight": Fujii et al. found no OOM below 80%.
inline constexpr double kTightFraction = 0.80;
Fit fit_on(const Gpu& gpu, int64_t device_bytes);
std::vector<Fit> fit_table(const GpuCatalog& catalog, int64_t device_bytes);
// The node's host-memory check (Fit::host_*): min(gpus_per_node, world_size) ranks of
// host_rank_bytes each against host_memory_gib of RAM, with the GPU's thresholds. Not checked
// (host_checked false) when host_memory_gib is 0.
void fit_host(Fit& fit, int64_t host_rank_bytes, int64_t world_size, int64_t gpus_per_node,
              double host_memory_gib);

}  // namespace vramplan
