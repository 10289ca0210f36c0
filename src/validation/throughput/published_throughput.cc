#include "validation/throughput/published_throughput.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <nlohmann/json.hpp>

#include "base/csv.h"
#include "base/embedded_data.h"
#include "training/scenario_checks.h"
#include "validation/dataset_rows.h"
#include "validation/throughput/published_release_floor.h"
#include "validation/throughput/throughput_validation.h"
#include "vramplan/io/scenario_io.h"
#include "vramplan/perf/hardware.h"

namespace vramplan {
namespace {

using nlohmann::json;

constexpr const char* kPublished = "measurements/published_throughput.csv";

// The catalog GPU a row was measured on; nullptr where the catalog has none. GB200 rows ran on
// NVL72 racks, whose catalog entry makes the 72-GPU NVLink domain the node.
const Gpu* catalog_gpu(const std::string& published) {
  if (published == "b200") return builtin_gpus().find("b200-180gb");
  if (published == "gb200") return builtin_gpus().find("gb200-186gb");
  return builtin_gpus().find(published);
}

// The fp8 recipe vramplan models for a published precision; "" where it models none. An unnamed
// "FP8" is the framework's default of the time: Transformer Engine's delayed scaling in NeMo 2's
// recipes, current (tensorwise) scaling in Megatron-Bridge (25.11 labels the same rows FP8-CS)
// and in torchtitan's float8 (dynamic tensorwise by default).
std::string fp8_recipe(const std::string& precision, const std::string& framework) {
  if (precision == "bf16") return "none";
  if (precision == "fp8-cs") return "tensorwise";
  if (precision == "fp8-ds") return "delayed";
  if (precision == "fp8-mx") return "mxfp8";
  if (precision == "fp8-blockwise") return "blockwise";
  if (precision == "fp8") return framework == "nemo" ? "delayed" : "tensorwise";
  return "";
}

int64_t integer(const std::string& text, int64_t fallback) {
  return text.empty() ? fallback : std::strtoll(text.c_str(), nullptr, 10);
}

// torchtitan's tables give the local (per-rank) batch without gradient accumulation: the global
// batch is that times the data-parallel degree.
int64_t global_batch_of(const CsvRow& r) {
  if (!r["global_batch"].empty()) return integer(r["global_batch"], 1);
  const int64_t model_parallel = integer(r["tp"], 1) * integer(r["pp"], 1) * integer(r["cp"], 1);
  const int64_t dp = integer(r["dp"], integer(r["gpus"], 1) / std::max<int64_t>(model_parallel, 1));
  return integer(r["micro_batch"], 1) * dp;
}

// Whether the recipe that ran a row overlaps TP communication with the GEMMs (Transformer
// Engine userbuffers; torchtitan's async TP). Megatron-Bridge's performance configs
// (scripts/performance/configs/, read at 55443cb, 2026-06, the same back to 25.11): on whenever
// tp > 1 for Llama 3 / 3.1 (the recipes' CommOverlapConfig(tp_comm_overlap=True) with userbuffers
// configs; llama3_8b: tp > 1), Qwen3 and gpt-oss, except for NVFP4; off for Qwen3-235B-A22B on
// H100 (qwen3_llm_pretrain.py sets tp_comm_overlap=False) and for DeepSeek-V3, whose recipe
// (recipes/deepseek/deepseek_v3.py) sets it False and whose performance config leaves it. NeMo 2's
// performance scripts overlap likewise. torchtitan's tables name async TP per row, in the notes.
bool recipe_overlaps_tp_comm(const CsvRow& r) {
  if (r["framework"] == "torchtitan")
    return r["notes"].find("async TP on") != std::string::npos ||
           r["notes"].find("AsyncTP") != std::string::npos;
  if (r["precision"] == "nvfp4") return false;
  if (r["hf_model"].rfind("DeepSeek-V3", 0) == 0) return false;
  return !(r["hf_model"] == "Qwen3-235B-A22B" && r["gpu"] == "h100-80gb");
}

// A Megatron-Bridge row's release without its patch number ("26.02" for 26.02.01): patch
// releases run their release's recipes.
std::string bridge_release(const CsvRow& r) { return r["framework_version"].substr(0, 5); }

// Whether the recipe that ran a row captured each layer's static part, attention included, in
// CUDA graphs (vramplan's cuda_graphs: the step time issues those layers as graph launches). Read
// in Megatron-Bridge's performance configs of each release for the Qwen3 rows, the only ones whose
// steps the model finds CPU-bound. Qwen3-30B-A3B: 25.09
// (scripts/performance/configs/qwen3/qwen3_30b_a3b_llm_pretrain.yaml at v0.1.0rc4, the layouts
// of the table) sets `cuda_graphs: true` on GB200 and B200, which helpers.py
// set_cuda_graph_overrides turns into model.enable_cuda_graph; from 25.11 (qwen3
// workload_base_configs.py) the scope includes "attn" for GB200 bf16 and fp8-cs, and for B200
// from 26.04 (v0.4.0); GB200 MXFP8 captures only the router and its preprocessing until 26.06
// (v0.5.0), which captures the full iteration; H100 captures only the router and its
// preprocessing. Qwen3-235B-A22B: on GB200 in every release (25.09 `cuda_graphs: true` at
// v0.1.0rc3 and rc4; the "attn" scope from 25.11, inherited by the 256-GPU variants; the full
// iteration for MXFP8 from 26.06), never on B200 or H100. A scope without the attention leaves
// most of the layer eager, as vramplan's default does.
bool recipe_captures_layer_graphs(const CsvRow& r) {
  if (r["framework"] != "megatron-bridge") return false;
  const std::string release = bridge_release(r);
  const std::string& gpu = r["gpu"];
  if (r["hf_model"] == "Qwen3-235B-A22B") return gpu == "gb200";
  if (r["hf_model"] != "Qwen3-30B-A3B") return false;
  if (release == "25.09") return gpu == "gb200" || gpu == "b200";
  if (gpu == "gb200") return r["precision"] != "fp8-mx" || release >= "26.06";
  if (gpu == "b200") return release >= "26.04";
  return false;
}

// Whether the recipe that ran a row overlapped the expert all-to-all with the paired microbatch's
// compute (Megatron's combined 1F1B: Megatron-Bridge's moe_a2a_overlap / comm_overlap
// overlap_moe_expert_parallel_comm). Read in Megatron-Bridge's performance configs of each
// release for the MoE models of the table, by (model, GPU, precision): 25.09
// (scripts/performance/run_script.py at v0.1.0rc4) for DeepSeek-V3 on H100 only; 25.11
// (configs/qwen3/workload_base_configs.py at v0.2.0) for Qwen3-235B-A22B on B200 and H100 and
// Qwen3-30B-A3B on H100; 26.02 (v0.3.0) for both Qwen3 models on H100; 26.04 (v0.4.0) for
// Qwen3-235B-A22B on H100 (Qwen3-30B-A3B on H100 moved to ep 16 with it off) and gpt-oss-120b
// on GB200 (its GBS-1280 variant, the table's); 26.06 (v0.5.0) and 26.08 (v0.6.0
// perf_recipes, the full-iteration MXFP8 helpers) for the GB200 MXFP8 runs of DeepSeek-V3, both
// Qwen3 models and gpt-oss-120b.
bool recipe_overlaps_ep_comm(const CsvRow& r) {
  if (r["framework"] != "megatron-bridge") return false;
  const std::string release = bridge_release(r);
  const std::string& model = r["hf_model"];
  const std::string& gpu = r["gpu"];
  const bool gb200_mxfp8_from_2606 =
      gpu == "gb200" && r["precision"] == "fp8-mx" && release >= "26.06";
  if (model == "DeepSeek-V3")
    return (release == "25.09" && gpu == "h100-80gb") || gb200_mxfp8_from_2606;
  if (model == "Qwen3-235B-A22B")
    return (gpu == "h100-80gb" && release >= "25.11" && release <= "26.04") ||
           (gpu == "b200" && release == "25.11") || gb200_mxfp8_from_2606;
  if (model == "Qwen3-30B-A3B")
    return (gpu == "h100-80gb" && (release == "25.11" || release == "26.02")) ||
           gb200_mxfp8_from_2606;
  if (model == "gpt-oss-120b") return gpu == "gb200" && release >= "26.04";
  return false;
}

// The MoE token dispatcher backend of the recipe that ran a row ("" for alltoall, the Bridge model
// providers' choice). Read in Megatron-Bridge's performance configs of each release
// (moe_flex_dispatcher_backend; applied by training/flex_dispatcher_backend.py, which switches
// moe_token_dispatcher_type to flex): 25.09 (scripts/performance/run_script.py at v0.1.0rc4)
// enables DeepEP on H100 unless tokens are dropped; 25.11 (workload_base_configs.py at v0.2.0)
// sets HybridEP for every GB200 run of DeepSeek-V3 and both Qwen3 models and DeepEP for
// DeepSeek-V3 on H100; 26.02 (v0.3.0) adds HybridEP for DeepSeek-V3 on B200 and H100 and DeepEP
// for Qwen3-30B-A3B on H100; 26.02.01 (v0.3.1) sets HybridEP for Qwen3-30B-A3B on B200 and H100
// and DeepEP for Qwen3-235B-A22B on B200 and H100, which 26.04 (v0.4.0) drops again. The 26.02
// container cannot run DeepEP (docs/releases/known-issues.md, 26.02: "DeepEP is not supported in
// the current NeMo framework 26.02 container", never marked fixed, where the same list marks
// other 26.02 issues "Fixed in 26.02.01"), so the runs that asked for it in 26.02 and 26.02.01
// fell back to all-to-all (Qwen3-235B-A22B on H100: 1,633 tokens/s in 26.02, 1,611 in 26.02.01);
// HybridEP is a separate backend (Qwen3-30B-A3B on H100: 5,113 in 26.02 with DeepEP asked,
// 9,058 in 26.02.01 with HybridEP). 26.06 (v0.5.0) and 26.08
// (v0.6.0 perf_recipes) keep the rest and add HybridEP to gpt-oss-120b's GB200 MXFP8 runs and
// Qwen3-235B-A22B's 256-GPU B200 MXFP8 run (26.08). HybridEP and DeepEP count alike.
std::string recipe_backend(const CsvRow& r) {
  if (r["framework"] != "megatron-bridge") return "";
  const std::string& version = r["framework_version"];
  const std::string release = bridge_release(r);
  const std::string& model = r["hf_model"];
  const std::string& gpu = r["gpu"];
  const bool gb200_from_2511 = gpu == "gb200" && release >= "25.11";
  if (model == "DeepSeek-V3") {
    if (gpu == "h100-80gb") {
      if (release == "25.09")
        return r["model"].find("tokendrop") == std::string::npos ? "deepep" : "";
      if (release == "25.11") return "deepep";
      return "hybridep";
    }
    if (gpu == "b200") return release >= "26.02" ? "hybridep" : "";
    return gb200_from_2511 ? "hybridep" : "";
  }
  if (model == "Qwen3-30B-A3B") {
    if (gb200_from_2511) return "hybridep";
    if (gpu == "h100-80gb" && version == "26.02") return "deepep";
    return (gpu == "b200" || gpu == "h100-80gb") && version >= "26.02.01" ? "hybridep" : "";
  }
  if (model == "Qwen3-235B-A22B") {
    if (gb200_from_2511) return "hybridep";
    if (version == "26.02.01") return "deepep";
    const bool b200_mxfp8_256 = gpu == "b200" && r["precision"] == "fp8-mx" && r["gpus"] == "256";
    return b200_mxfp8_256 && release >= "26.08" ? "hybridep" : "";
  }
  if (model == "gpt-oss-120b")
    return gpu == "gb200" && r["precision"] == "fp8-mx" && release >= "26.06" ? "hybridep" : "";
  return "";
}

// What ran: the recipe's backend, less DeepEP where the container could not run it (above).
std::string recipe_dispatcher(const CsvRow& r) {
  const std::string backend = recipe_backend(r);
  return backend == "deepep" && bridge_release(r) == "26.02" ? "" : backend;
}

json settings_of(const CsvRow& r, const std::string& recipe) {
  const std::string& framework = r["framework"];
  json s = {{"model", r["hf_model"]},
            {"gpu", catalog_gpu(r["gpu"])->id},
            {"gpus", integer(r["gpus"], 1)},
            {"tp", integer(r["tp"], 1)},
            {"pp", integer(r["pp"], 1)},
            {"cp", integer(r["cp"], 1)},
            {"micro_batch", integer(r["micro_batch"], 1)},
            {"global_batch", global_batch_of(r)},
            {"seq_len", integer(r["seq_len"], 4096)},
            {"framework", framework == "torchtitan" ? "torchtitan" : "megatron"},
            {"fp8", recipe}};
  if (integer(r["vp"], 1) > 1) s["vpp"] = integer(r["vp"], 1);
  if (integer(r["ep"], 1) > 1) s["ep"] = integer(r["ep"], 1);
  if (!r["etp"].empty()) s["etp"] = integer(r["etp"], 1);
  if (!r["recompute"].empty()) s["recompute"] = r["recompute"];
  if (integer(r["tp"], 1) > 1 && recipe_overlaps_tp_comm(r)) s["tp_comm_overlap"] = true;
  if (recipe_captures_layer_graphs(r)) s["cuda_graphs"] = true;
  if (integer(r["ep"], 1) > 1 && recipe_overlaps_ep_comm(r)) s["ep_comm_overlap"] = true;
  if (const std::string d = recipe_dispatcher(r); !d.empty()) s["moe_dispatcher"] = d;
  return s;
}

// Reads a row's layout. Where pp·vp does not divide the layers, Megatron-Bridge's recipes count
// the embedding and the loss as pipeline layers (account_for_embedding_in_pipeline_split,
// account_for_loss_in_pipeline_split): vramplan's embedding_stage / loss_stage, split evenly.
Result<ResolvedScenario> accepted_layout(const json& settings) {
  Result<ResolvedScenario> r = resolve_scenario(settings, nullptr);
  if (!r.ok()) return r;
  if (std::optional<Error> e = validate_scenario(r->scenario)) return *e;
  return r;
}

Result<ResolvedScenario> read_layout(const json& settings, PublishedRow& row) {
  Result<ResolvedScenario> plain = accepted_layout(settings);
  if (plain.ok() || settings.value("pp", 1) == 1) return plain;
  json split = settings;
  split["embedding_stage"] = true;
  split["loss_stage"] = true;
  split["pipeline_split"] = "balanced";
  Result<ResolvedScenario> balanced = accepted_layout(split);
  if (!balanced.ok()) return plain;
  row.notes.push_back(
      "pp·vp does not divide the layers: embedding and loss counted as pipeline layers, split "
      "balanced (Megatron-Bridge account_for_embedding/loss_in_pipeline_split)");
  return balanced;
}

std::string skip_reason(const CsvRow& r, const std::string& recipe) {
  if (r["tokens_per_s_per_gpu"].empty()) return "only TFLOP/s published (no tokens/s)";
  if (r["hf_model"].empty()) return fmt::format("no vramplan preset for {}", r["model"]);
  if (catalog_gpu(r["gpu"]) == nullptr)
    return fmt::format("{} is not in the GPU catalog", r["gpu"]);
  if (r["precision"].empty()) return "precision not published";
  if (r["micro_batch"].empty() || r["seq_len"].empty())
    return "micro batch or sequence length not published";
  if (recipe.empty()) return fmt::format("precision {} is not modelled", r["precision"]);
  return "";
}

// A row ready to predict: its layout read once, its catalog GPU.
struct Case {
  PublishedRow row;
  Scenario scenario;
  const Gpu* gpu = nullptr;
};

Case read_case(const CsvRow& r) {
  Case out;
  PublishedRow& row = out.row;
  row.id = r["id"];
  row.model = r["hf_model"];
  row.gpu = r["gpu"];
  row.framework = r["framework"];
  row.precision = r["precision"];
  row.source = r["source"];
  row.gpus = integer(r["gpus"], 0);
  row.held_out = published_held_out(row.model);
  row.measured_tok_s = std::strtod(r["tokens_per_s_per_gpu"].c_str(), nullptr);
  const std::string recipe = fp8_recipe(r["precision"], r["framework"]);
  row.reason = skip_reason(r, recipe);
  if (row.reason.empty() && !(row.measured_tok_s > 0)) row.reason = "no positive tokens/s";
  if (!row.reason.empty()) {
    row.skipped = true;
    return out;
  }
  if (r["precision"] != "bf16") row.notes.push_back("fp8 recipe read as " + recipe);
  Result<ResolvedScenario> layout = read_layout(settings_of(r, recipe), row);
  if (!layout.ok()) {
    row.skipped = true;
    row.reason = "layout not accepted: " + layout.error().message();
    return out;
  }
  out.scenario = layout->scenario;
  out.gpu = catalog_gpu(r["gpu"]);
  return out;
}

// Predicts a case that was read (not skipped) with `constants`; false when it has no step time.
bool predict(Case& c, const StepTimeConstants& constants) {
  Result<StepTime> time =
      estimate_step_time(c.scenario, *c.gpu, default_cluster(*c.gpu), constants);
  if (!time.ok() || !(time->tokens_per_s_per_gpu > 0)) {
    c.row.skipped = true;
    c.row.reason = time.ok() ? "no step time" : "no step time: " + time.error().message();
    return false;
  }
  c.row.predicted = *time;
  c.row.predicted_tok_s = time->tokens_per_s_per_gpu;
  return true;
}

Result<std::vector<CsvRow>> published_table() {
  return parse_csv(embedded_file(kPublished), "published_throughput");
}

Result<std::vector<Case>> read_cases() {
  Result<std::vector<CsvRow>> table = published_table();
  if (!table) return table.error();
  std::vector<Case> cases;
  for (const CsvRow& r : *table) cases.push_back(read_case(r));
  return cases;
}

void add_summaries(PublishedReport& report) {
  const auto& rows = report.rows;
  auto& out = report.summaries;
  out.push_back(summarise_published(rows, "all", [](const PublishedRow&) { return true; }));
  out.push_back(
      summarise_published(rows, "held out", [](const PublishedRow& r) { return r.held_out; }));
  out.push_back(
      summarise_published(rows, "the rest", [](const PublishedRow& r) { return !r.held_out; }));
  std::vector<std::string> frameworks, gpus;
  for (const PublishedRow& r : rows) {
    if (std::find(frameworks.begin(), frameworks.end(), r.framework) == frameworks.end())
      frameworks.push_back(r.framework);
    if (std::find(gpus.begin(), gpus.end(), r.gpu) == gpus.end()) gpus.push_back(r.gpu);
  }
  for (const std::string& f : frameworks)
    out.push_back(summarise_published(rows, "framework " + f,
                                      [&](const PublishedRow& r) { return r.framework == f; }));
  for (const std::string& g : gpus)
    out.push_back(
        summarise_published(rows, "gpu " + g, [&](const PublishedRow& r) { return r.gpu == g; }));
  out.push_back(summarise_published(rows, "precision bf16",
                                    [](const PublishedRow& r) { return r.precision == "bf16"; }));
  out.push_back(summarise_published(rows, "precision fp8", [](const PublishedRow& r) {
    return r.precision.rfind("fp8", 0) == 0;
  }));
}

}  // namespace

PublishedSummary summarise_published(const std::vector<PublishedRow>& rows,
                                     const std::string& group,
                                     const std::function<bool(const PublishedRow&)>& in_group) {
  PublishedSummary s;
  s.group = group;
  std::vector<double> abs_error, signed_error, predicted, measured;
  for (const PublishedRow& r : rows) {
    if (!in_group(r)) continue;
    if (r.skipped) {
      ++s.skipped;
      continue;
    }
    abs_error.push_back(std::fabs(r.error_pct()));
    signed_error.push_back(r.error_pct());
    predicted.push_back(r.predicted_tok_s);
    measured.push_back(r.measured_tok_s);
  }
  s.rows = static_cast<int>(abs_error.size());
  s.spearman = spearman(predicted, measured);
  std::sort(abs_error.begin(), abs_error.end());
  std::sort(signed_error.begin(), signed_error.end());
  s.median_abs_pct = dataset_rows::percentile(abs_error, 0.5);
  s.p90_abs_pct = dataset_rows::percentile(abs_error, 0.9);
  s.bias_pct = dataset_rows::percentile(signed_error, 0.5);
  return s;
}

bool published_held_out(const std::string& preset) {
  return preset.rfind("Qwen3-", 0) == 0 || preset.rfind("Llama-2-", 0) == 0;
}

Result<PublishedReport> validate_published_throughput(const StepTimeConstants& constants) {
  Result<std::vector<Case>> cases = read_cases();
  if (!cases) return cases.error();
  PublishedReport report;
  for (Case& c : cases.value()) {
    if (!c.row.skipped) predict(c, constants);
    report.rows.push_back(std::move(c.row));
  }
  add_summaries(report);
  Result<std::vector<CsvRow>> table = published_table();
  if (!table) return table.error();
  report.release_floor = published_release_floor(*table, false);
  report.held_out_release_floor = published_release_floor(*table, true);
  return report;
}

bool published_calibration_row(const PublishedRow& row) {
  return !row.held_out && (row.framework == "megatron-bridge" || row.framework == "nemo");
}

Result<PublishedCalibration> calibrate_published(const StepTimeConstants& start) {
  Result<std::vector<Case>> read = read_cases();
  if (!read) return read.error();
  std::vector<Case> cases;
  for (Case& c : read.value())
    if (!c.row.skipped && published_calibration_row(c.row) && predict(c, start))
      cases.push_back(std::move(c));
  if (cases.empty())
    return Error{"published_throughput", "no rows", "Megatron-Bridge or NeMo rows not held out",
                 ""};
  const auto loss = [&](const StepTimeConstants& k) -> double {
    double sum = 0;
    for (Case& c : cases) {
      if (!predict(c, k)) return INFINITY;
      sum += cauchy_log_loss(c.row.predicted_tok_s, c.row.measured_tok_s);
    }
    return sum / static_cast<double>(cases.size());
  };
  PublishedCalibration out;
  out.rows = static_cast<int>(cases.size());
  out.start_objective = loss(start);
  out.constants = fit_step_time_constants(loss, start, &out.evaluations);
  out.objective = loss(out.constants);
  return out;
}

}  // namespace vramplan
