// Per-GPU training memory: for each distinct pipeline stage, rows of where the bytes go, each
// with its formula (values filled in) and source; the peak stage; and a GPU fit table.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "vramplan/base/error.h"
#include "vramplan/model/params.h"
#include "vramplan/training/scenario.h"

namespace vramplan {

// Which of the three measurable quantities a row adds to. They nest: every allocated byte is
// also reserved, every reserved byte also shows in nvidia-smi.
//   kAllocated: live tensors (torch.cuda.max_memory_allocated)
//   kReserved:  the caching allocator's pool above live tensors (max_memory_reserved)
//   kDevice:    outside the allocator: CUDA context, NCCL buffers (nvidia-smi "used")
// Two more are off the GPU (offload, docs/offload.md) and add to none of the three:
//   kHost: the rank's process memory on the node (pinned or pageable host RAM)
//   kDisk: an NVMe swap file (DeepSpeed ZeRO-Infinity)
enum class CountsToward { kAllocated, kReserved, kDevice, kHost, kDisk };
// "allocated" | "reserved" | "device" | "host" | "disk"
std::string_view counts_toward_name(CountsToward c);
inline bool on_gpu(CountsToward c) { return c != CountsToward::kHost && c != CountsToward::kDisk; }

struct Row {
  std::string component;  // "weights", "gradients", "activations", ...
  int64_t bytes = 0;
  CountsToward counts_toward = CountsToward::kAllocated;
  std::string formula;  // with the values filled in; empty when explain is off
  std::string source;   // paper or framework file the formula follows
  // Where the measured value lies for 80% of validated runs (uncertainty.h).
  int64_t bytes_low = 0;
  int64_t bytes_high = 0;
};

// Allocated memory at one moment of a training step (see StageEstimate::phases).
struct Phase {
  std::string name;  // "forward/backward", "optimizer step", "first step forward/backward"
  int64_t allocated_bytes = 0;
};

struct StageEstimate {
  std::string name;                    // "stage 1 of 4 (first)", or "all layers" when pp = 1
  std::vector<int64_t> ranks;          // pipeline ranks sharing exactly this breakdown
  int64_t layers = 0;                  // decoder layers held by one such rank
  std::vector<int64_t> layer_ids;      // which decoder layers (0-based)
  int64_t in_flight_microbatches = 0;  // activations kept at the peak, in microbatch·chunk units
  std::vector<Row> rows;
  int64_t allocated_bytes = 0;
  int64_t reserved_bytes = 0;
  int64_t device_bytes = 0;
  int64_t allocated_bytes_low = 0, allocated_bytes_high = 0;  // uncertainty band (80%)
  int64_t reserved_bytes_low = 0, reserved_bytes_high = 0;
  int64_t device_bytes_low = 0, device_bytes_high = 0;
  int64_t host_bytes = 0;  // the rows counting toward host: one rank's host memory
  int64_t disk_bytes = 0;  // ... toward disk: one rank's NVMe swap
  // The step's high-water mark is the largest of its phases: the backward of the first
  // microbatch (activations in flight, logits), the optimizer step (states plus the optimizer's
  // temporaries, activations freed), and — reported, never larger — the first step's
  // forward/backward, before the optimizer has created its states. `rows` are what is alive in
  // `peak_phase`.
  std::vector<Phase> phases;
  std::string peak_phase;
};

struct Peak {
  size_t stage = 0;  // index into Estimate::stages
  int64_t allocated_bytes = 0;
  int64_t reserved_bytes = 0;
  int64_t device_bytes = 0;
  int64_t allocated_bytes_low = 0, allocated_bytes_high = 0;  // the peak stage's band
  int64_t reserved_bytes_low = 0, reserved_bytes_high = 0;
  int64_t device_bytes_low = 0, device_bytes_high = 0;
  int64_t host_bytes = 0;  // the largest of any stage's host_bytes (one rank)
  int64_t disk_bytes = 0;  // the largest of any stage's disk_bytes (one rank)
};

enum class Verdict { kFits, kTight, kOom };
std::string_view verdict_name(Verdict v);  // "fits" | "tight" | "oom"

struct Fit {
  std::string gpu;  // catalog id, e.g. "h100-80gb"
  std::string name;
  int64_t nominal_bytes = 0;
  int64_t usable_bytes = 0;
  double used_fraction = 0;  // peak device bytes / usable bytes
  Verdict verdict = Verdict::kFits;
  // Host memory of one node (perf/hardware.h fit_host): the GPUs of a node (gpus_per_node, or
  // the world size when smaller) each hold one rank's host bytes. Checked only when the node's
  // RAM is known (the catalog's host_memory_gib, or --host-memory-gib).
  bool host_checked = false;
  int64_t gpus_per_node = 0;
  int64_t host_node_bytes = 0;    // gpus_per_node × peak host bytes per rank
  int64_t host_memory_bytes = 0;  // the node's RAM
  double host_used_fraction = 0;
  Verdict host_verdict = Verdict::kFits;
};

struct Estimate {
  ParamCounts parameters;
  int64_t world_size = 0;
  int64_t microbatches = 0;  // per step per data-parallel rank
  std::vector<StageEstimate> stages;
  Peak peak;
  std::vector<Fit> fit;  // filled by the front end from a GpuCatalog (see hardware.h)
  std::vector<std::string> warnings;
};

// Which moment of the step a stage's rows describe.
enum class RowsAt {
  kPeak,             // the phase with the most allocated tensors (what fits is decided on)
  kForwardBackward,  // the first microbatch's backward (or the merged outputs after the last)
  kOptimizerStep,    // the optimizer step: states and temporaries, activations freed
};

struct EstimateOptions {
  bool explain = true;  // false: skip formula strings (the planner's hot path)
  // Anything but kPeak shows that phase's rows and totals even where another phase is larger
  // (the breakdown of a given moment, e.g. to compare with a profiler's snapshot of it);
  // `phases` still lists every phase's total.
  RowsAt rows_at = RowsAt::kPeak;
};

// Validates the scenario (layout, sizes) and estimates per-GPU memory.
Result<Estimate> estimate(const Scenario& scenario, const EstimateOptions& options = {});

}  // namespace vramplan
