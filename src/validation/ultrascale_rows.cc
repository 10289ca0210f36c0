// The Ultra-Scale Playbook sweep (nanotron on H100s): memory of every run that ran, and whether
// the ones that crashed were flagged.
#include <algorithm>
#include <cmath>
#include <map>
#include <regex>

#include "validation/dataset_rows.h"
#include "validation/ultrascale.h"
#include "vramplan/io/scenario_io.h"
#include "vramplan/perf/hardware.h"
#include "vramplan/training/frameworks.h"

namespace vramplan {
namespace dataset_rows {
namespace {

// The Ultra-Scale Playbook's four models (data/measurements/README.md): Llama-style, MHA.
ModelConfig ultrascale_model(const std::string& size) {
  struct Shape {
    const char* name;
    int64_t layers, hidden, heads, ffn;
    bool tied;
  };
  static const Shape kShapes[] = {{"1B", 16, 2048, 32, 8192, true},
                                  {"3B", 28, 3072, 32, 8192, true},
                                  {"8B", 32, 4096, 32, 14336, false},
                                  {"80B", 80, 8192, 64, 28672, false}};
  ModelConfig m;
  for (const Shape& shape : kShapes) {
    if (size != shape.name) continue;
    m.name = std::string("ultrascale-") + shape.name;
    m.model_type = "llama";
    m.num_layers = shape.layers;
    m.hidden = shape.hidden;
    m.num_heads = m.num_kv_heads = shape.heads;
    m.head_dim = shape.hidden / shape.heads;
    m.ffn = shape.ffn;
    m.vocab = 131072;
    m.tied_embeddings = shape.tied;
    m.max_position_embeddings = 4096;
    m.moe_layers.assign(shape.layers, false);
    m.layer_attention.assign(shape.layers, LayerAttention::kFull);
  }
  return m;
}

// The sweep's "GPU memory as reported" is the peak reserved pool of global rank 0: nanotron's
// log_memory (logging.py) prints "Memory usage … Peak reserved" from rank 0 only, which is the
// first pipeline stage, and the Playbook's bench_cluster (report.py) parses that line.
double rank0_reserved_gib(const Estimate& est) { return est.stages.front().reserved_bytes / kGiB; }

}  // namespace

void add_ultrascale_rows(const std::vector<CsvRow>& ran, const std::vector<CsvRow>& crashed,
                         ValidationReport& report) {
  const Gpu* h100 = builtin_gpus().find("h100-80gb");
  auto layout_id = [](const CsvRow& r) {
    return r["model"] + " dp" + r["dp"] + " tp" + r["tp"] + " pp" + r["pp"] + " zero" +
           r["zero_stage"] + " mb" + r["micro_batch"] + " ga" + r["grad_accum"];
  };
  for (const CsvRow& r : ran) {
    Result<Estimate> est = estimate(ultrascale_scenario(r), {.explain = false});
    const double measured = number_or(r["gpu_memory_GB_as_reported"], 0);
    if (!est.ok()) {
      report.rows.push_back(skipped_row("ultrascale", layout_id(r), r["model"], "reported",
                                        measured,
                                        "not a valid layout here: " + est.error().message()));
      continue;
    }
    const Verdict verdict = fit_on(*h100, est->peak.device_bytes).verdict;
    ValidationRow row{"ultrascale",
                      layout_id(r),
                      r["model"],
                      "reported",
                      measured,
                      rank0_reserved_gib(*est),
                      std::string(verdict_name(verdict)),
                      false,
                      ""};
    // The gate reports the pp = 1, tp >= 8 two-regime group apart (accuracy_gate.cc).
    row.facets = {{"tp", r["tp"]}, {"pp", r["pp"]}};
    report.rows.push_back(std::move(row));
    FitConfusion& f = report.fit;
    (verdict == Verdict::kFits    ? f.ran_fits
     : verdict == Verdict::kTight ? f.ran_tight
                                  : f.ran_oom)++;
  }
  for (const CsvRow& r : crashed) {
    Result<Estimate> est = estimate(ultrascale_scenario(r), {.explain = false});
    if (!est.ok()) {
      report.rows.push_back(skipped_row("ultrascale-crashed", layout_id(r), r["model"], "fit", 0,
                                        "not a valid layout here: " + est.error().message()));
      continue;
    }
    const Verdict verdict = fit_on(*h100, est->peak.device_bytes).verdict;
    report.rows.push_back({"ultrascale-crashed", layout_id(r), r["model"], "fit", 0,
                           est->peak.device_bytes / kGiB, std::string(verdict_name(verdict)), false,
                           ""});
    FitConfusion& f = report.fit;
    (verdict == Verdict::kFits    ? f.crashed_fits
     : verdict == Verdict::kTight ? f.crashed_tight
                                  : f.crashed_oom)++;
  }
}

NoiseFloor ultrascale_noise_floor(const std::vector<CsvRow>& ran) {
  std::map<std::string, std::vector<double>> groups;
  for (const CsvRow& r : ran) {
    if (r["zero_stage"] != "0") continue;
    if (integer_or(r["grad_accum"], 1) < integer_or(r["pp"], 1)) continue;
    groups[r["model"] + " tp" + r["tp"] + " pp" + r["pp"] + " mb" + r["micro_batch"]].push_back(
        number_or(r["gpu_memory_GB_as_reported"], 0));
  }
  return floor_of_groups(std::move(groups));
}

}  // namespace dataset_rows

using namespace dataset_rows;

// nanotron's recipe in the sweep: bf16 with fp32 gradient accumulation, fused AdamW, TP with
// sequence parallelism, 1F1B, ZeRO 0 or 1, flash attention, no recompute.
Scenario ultrascale_scenario(const CsvRow& r) {
  Scenario s;
  apply_framework(Framework::kNanotron, s);
  s.model = ultrascale_model(r["model"]);
  s.training.seq_len = 4096;
  s.training.micro_batch = integer_or(r["micro_batch"], 1);
  s.parallel.dp = integer_or(r["dp"], 1);
  s.parallel.tp = integer_or(r["tp"], 1);
  s.parallel.pp = integer_or(r["pp"], 1);
  s.parallel.zero = integer_or(r["zero_stage"], 0);
  // nanotron's conventions (docs/frameworks.md): compute-cost pipeline split, unfused GLU,
  // the loss's fp32 copies of the logits, fp32 gradient accumulation, allocator pool.
  s.training.global_batch = s.training.micro_batch * integer_or(r["grad_accum"], 1) * s.parallel.dp;
  return s;
}

}  // namespace vramplan
