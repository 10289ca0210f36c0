#include "validation/throughput/throughput_validation.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <map>
#include <numeric>

#include "base/csv.h"
#include "base/embedded_data.h"
#include "training/scenario_checks.h"
#include "validation/dataset_rows.h"
#include "validation/throughput/gpu_step_time.h"
#include "validation/throughput/group_rankings.h"
#include "validation/ultrascale.h"
#include "vramplan/model/params.h"
#include "vramplan/perf/hardware.h"

namespace vramplan {
namespace {

constexpr const char* kSweep = "measurements/ultrascale_playbook_benchmarks.csv";

double number(const CsvRow& r, const char* column) {
  const std::string& text = r[column];
  return text.empty() ? 0 : std::strtod(text.c_str(), nullptr);
}

// A sweep row ready to evaluate: its scenario and what was measured.
struct Run {
  ThroughputRow row;
  Scenario scenario;
};

std::string run_id(const CsvRow& r) {
  return fmt::format("{} n{} dp{} tp{} pp{} zero{} mb{} ga{}", r["model"], r["nodes"], r["dp"],
                     r["tp"], r["pp"], r["zero_stage"], r["micro_batch"], r["grad_accum"]);
}

Result<std::vector<Run>> load_runs() {
  Result<std::vector<CsvRow>> table = parse_csv(embedded_file(kSweep), "ultrascale");
  if (!table) return table.error();
  std::vector<Run> runs;
  for (const CsvRow& r : *table) {
    Run run;
    run.scenario = ultrascale_scenario(r);
    ThroughputRow& row = run.row;
    row.id = run_id(r);
    row.model = r["model"];
    row.gpus = run.scenario.parallel.world_size();
    row.measured_tok_s = number(r, "tok_s_gpu");
    row.measured_mfu_pct = number(r, "mfu_pct");
    if (row.measured_tok_s <= 0) {
      row.skipped = true;
      row.reason = "no throughput recorded";
    } else if (auto e = validate_scenario(run.scenario)) {
      row.skipped = true;
      row.reason = "not a valid layout here: " + e->message();
    }
    runs.push_back(std::move(run));
  }
  return runs;
}

const Gpu& sweep_gpu() { return *builtin_gpus().find("h100-80gb"); }

// Prepares one model per distinct model name (the sweep varies only the layout within a model).
Result<std::map<std::string, StepTimeModel>> prepare_models(const std::vector<Run>& runs,
                                                            const StepTimeConstants& c) {
  std::map<std::string, StepTimeModel> models;
  const Cluster cluster = default_cluster(sweep_gpu());
  for (const Run& run : runs) {
    if (run.row.skipped || models.count(run.row.model)) continue;
    Result<StepTimeModel> model = StepTimeModel::prepare(run.scenario, sweep_gpu(), cluster, c);
    if (!model) return model.error();
    models.emplace(run.row.model, std::move(model).value());
  }
  return models;
}

void predict(const std::map<std::string, StepTimeModel>& models, Run& run) {
  if (run.row.skipped) return;
  ThroughputRow& row = run.row;
  row.predicted = models.at(row.model).evaluate(run.scenario);
  row.predicted_tok_s = row.predicted.tokens_per_s_per_gpu;
  row.predicted_mfu_pct = row.predicted_tok_s * nanotron_flops_per_token(run.scenario) /
                          (sweep_gpu().bf16_tflops * 1e12) * 100;
}

// Nearest-rank percentile of sorted values.
double percentile(const std::vector<double>& sorted, double fraction) {
  if (sorted.empty()) return 0;
  const size_t rank = static_cast<size_t>(std::ceil(fraction * sorted.size()));
  return sorted[std::clamp<size_t>(rank, 1, sorted.size()) - 1];
}

ThroughputSummary summarise(const std::vector<ThroughputRow>& rows, const std::string& model) {
  ThroughputSummary s;
  s.model = model;
  const auto& fitted = calibration_models();
  s.fitted = std::find(fitted.begin(), fitted.end(), model) != fitted.end();
  std::vector<double> abs_tok, signed_tok, abs_mfu, predicted_tok, measured_tok, predicted_mfu,
      measured_mfu;
  for (const ThroughputRow& r : rows) {
    if (model != "all" && r.model != model) continue;
    if (r.skipped) {
      ++s.skipped;
      continue;
    }
    abs_tok.push_back(std::fabs(r.tok_error_pct()));
    signed_tok.push_back(r.tok_error_pct());
    predicted_tok.push_back(r.predicted_tok_s);
    measured_tok.push_back(r.measured_tok_s);
    if (r.measured_mfu_pct <= 0) continue;  // rounded to 0.0 in the sweep: no relative error
    abs_mfu.push_back(std::fabs(r.mfu_error_pct()));
    predicted_mfu.push_back(r.predicted_mfu_pct);
    measured_mfu.push_back(r.measured_mfu_pct);
  }
  s.rows = static_cast<int>(abs_tok.size());
  s.spearman_tok = spearman(predicted_tok, measured_tok);
  s.spearman_mfu = spearman(predicted_mfu, measured_mfu);
  for (auto* v : {&abs_tok, &signed_tok, &abs_mfu}) std::sort(v->begin(), v->end());
  s.median_abs_tok_pct = percentile(abs_tok, 0.5);
  s.p90_abs_tok_pct = percentile(abs_tok, 0.9);
  s.bias_tok_pct = percentile(signed_tok, 0.5);
  s.median_abs_mfu_pct = percentile(abs_mfu, 0.5);
  return s;
}

std::vector<double> ranks_of(const std::vector<double>& values) {
  std::vector<size_t> order(values.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return values[a] < values[b]; });
  std::vector<double> ranks(values.size());
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j + 1 < order.size() && values[order[j + 1]] == values[order[i]]) ++j;
    const double average = (static_cast<double>(i) + static_cast<double>(j)) / 2 + 1;
    for (size_t k = i; k <= j; ++k) ranks[order[k]] = average;
    i = j + 1;
  }
  return ranks;
}

// ---- Calibration: Nelder–Mead over the constants, each kept inside the range that is physically
// plausible for it (a logistic maps the search space onto the range; times on a log scale), so
// that the fit cannot trade one constant against another into nonsense (a 99%-efficient GEMM
// behind a 100 µs kernel launch).

struct Bounded {
  double StepTimeConstants::*field;
  double low, high;
  bool log_scale;
};

constexpr Bounded kFittedConstants[] = {
    {&StepTimeConstants::matmul_efficiency, 0.30, 0.85, false},     // cuBLAS bf16 on H100: ~0.75
    {&StepTimeConstants::attention_efficiency, 0.10, 0.60, false},  // FlashAttention-2: ~0.35
    {&StepTimeConstants::hbm_efficiency, 0.60, 0.92, false},
    {&StepTimeConstants::kernel_overhead_s, 1e-6, 20e-6, true},
    {&StepTimeConstants::cpu_overhead_s, 5e-6, 300e-6, true},
    {&StepTimeConstants::collective_overhead_s, 5e-6, 1e-3, true},
    {&StepTimeConstants::intra_bw_efficiency, 0.30, 0.90, false},
    {&StepTimeConstants::inter_bw_efficiency, 0.10, 0.90, false},
    {&StepTimeConstants::intra_latency_s, 1e-6, 100e-6, true},
    {&StepTimeConstants::inter_latency_s, 5e-6, 1e-3, true},
    {&StepTimeConstants::inter_p2p_latency_s, 10e-6, 1.0, true},
};
constexpr int kFitted = static_cast<int>(std::size(kFittedConstants));
using Point = std::array<double, kFitted>;

double to_unit(const Bounded& b, double value) {
  const double v = std::clamp(value, b.low, b.high);
  return b.log_scale ? std::log(v / b.low) / std::log(b.high / b.low)
                     : (v - b.low) / (b.high - b.low);
}
double from_unit(const Bounded& b, double unit) {
  // Clamped: low + 1·(high − low) can round above high.
  return std::clamp(
      b.log_scale ? b.low * std::pow(b.high / b.low, unit) : b.low + unit * (b.high - b.low), b.low,
      b.high);
}

Point encode(const StepTimeConstants& c) {
  Point x;
  for (int i = 0; i < kFitted; ++i) {
    const double u =
        std::clamp(to_unit(kFittedConstants[i], c.*kFittedConstants[i].field), 1e-3, 1 - 1e-3);
    x[i] = std::log(u / (1 - u));
  }
  return x;
}

StepTimeConstants decode(const Point& x) {
  StepTimeConstants c;
  for (int i = 0; i < kFitted; ++i)
    c.*kFittedConstants[i].field = from_unit(kFittedConstants[i], 1 / (1 + std::exp(-x[i])));
  return c;
}

// A robust mean of the log errors e = ln(predicted / measured) tokens/s: Cauchy's loss
// ln(1 + (e/σ)²), σ = 0.3. Smooth, so the simplex can follow it (a median is flat in places),
// and it grows only logarithmically for the sweep's pathological runs (a few hundred times
// slower than runs next to them; see docs/accuracy.md), which a squared or absolute error
// would let pull the constants.
constexpr double kLossScale = 0.3;

double objective(std::vector<Run>& runs, const StepTimeConstants& c) {
  Result<std::map<std::string, StepTimeModel>> models = prepare_models(runs, c);
  if (!models) return INFINITY;
  double sum = 0;
  int n = 0;
  for (Run& run : runs) {
    if (run.row.skipped) continue;
    predict(*models, run);
    sum += cauchy_log_loss(run.row.predicted_tok_s, run.row.measured_tok_s);
    ++n;
  }
  return n > 0 ? sum / n : INFINITY;
}

constexpr int kRestarts = 4;

struct Simplex {
  std::array<Point, kFitted + 1> points;
  std::array<double, kFitted + 1> values;
};

Point along(const Point& from, const Point& to, double t) {  // from + t·(to − from)
  Point p;
  for (int i = 0; i < kFitted; ++i) p[i] = from[i] + t * (to[i] - from[i]);
  return p;
}

// Standard Nelder–Mead (reflection 1, expansion 2, contraction ½, shrink ½).
Point nelder_mead(const Point& start, const std::function<double(const Point&)>& f, int max_evals,
                  int& evals) {
  Simplex s;
  s.points.fill(start);
  for (int i = 0; i < kFitted; ++i) s.points[i + 1][i] += 1.0;
  for (int i = 0; i <= kFitted; ++i) s.values[i] = f(s.points[i]);
  evals = kFitted + 1;
  std::array<int, kFitted + 1> order;
  while (evals < max_evals) {
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](int a, int b) { return s.values[a] < s.values[b]; });
    const int best = order.front(), worst = order.back(), second = order[kFitted - 1];
    if (s.values[worst] - s.values[best] < 1e-6) break;
    Point centroid{};
    for (int i : order)
      if (i != worst)
        for (int k = 0; k < kFitted; ++k) centroid[k] += s.points[i][k] / kFitted;
    const Point reflected = along(centroid, s.points[worst], -1);
    const double fr = f(reflected);
    ++evals;
    if (fr < s.values[best]) {
      const Point expanded = along(centroid, s.points[worst], -2);
      const double fe = f(expanded);
      ++evals;
      s.points[worst] = fe < fr ? expanded : reflected;
      s.values[worst] = std::min(fe, fr);
    } else if (fr < s.values[second]) {
      s.points[worst] = reflected;
      s.values[worst] = fr;
    } else {
      const Point contracted = along(centroid, s.points[worst], 0.5);
      const double fc = f(contracted);
      ++evals;
      if (fc < s.values[worst]) {
        s.points[worst] = contracted;
        s.values[worst] = fc;
      } else {
        for (int i = 0; i <= kFitted; ++i) {
          if (i == best) continue;
          s.points[i] = along(s.points[best], s.points[i], 0.5);
          s.values[i] = f(s.points[i]);
          ++evals;
        }
      }
    }
  }
  const int best =
      static_cast<int>(std::min_element(s.values.begin(), s.values.end()) - s.values.begin());
  return s.points[best];
}

// Issue 23's targets, not met yet, with their committed figures (dataset_rows.h): lower or
// raise one as the model improves, delete it when the target is met.
constexpr dataset_rows::CommittedFigure kOpenThroughputFigures[] = {
    {"Ultra-Scale groups (model, GPU count) with rank correlation >= 0.9, %", 15.4},
    {"Published tokens/s per GPU, held out, p90 |error| %", 26.4},
};

AccuracyTarget open_target(const char* name, double value, double goal, bool at_most) {
  AccuracyTarget t{name, value, goal, at_most};
  t.committed = dataset_rows::committed_figure(kOpenThroughputFigures, t.name);
  return t;
}

const PublishedSummary* published_group(const PublishedReport& report, const std::string& name) {
  for (const PublishedSummary& s : report.summaries)
    if (s.group == name) return &s;
  return nullptr;
}

void add_targets(ThroughputReport& report) {
  const ThroughputSummary& all = report.summaries.back();
  double worst_spearman = 1;
  for (const ThroughputSummary& s : report.summaries)
    worst_spearman = std::min(worst_spearman, s.spearman_tok);
  // Ratchets a little looser than what the fitted constants reach (docs/accuracy.md: 38% median
  // error, 0.87 rank correlation overall, 0.67 for the worst model): a change that makes the
  // step-time model worse fails Throughput.AccuracyDoesNotRegress.
  report.targets = {
      {"Ultra-Scale tokens/s per GPU, median |error| %", all.median_abs_tok_pct, 40, true},
      {"Ultra-Scale MFU, median |error| %", all.median_abs_mfu_pct, 40, true},
      {"Ultra-Scale tokens/s rank correlation (all rows)", all.spearman_tok, 0.85, false},
      {"Ultra-Scale tokens/s rank correlation (worst model)", worst_spearman, 0.65, false},
  };
  int ordered = 0;
  for (const GroupRanking& g : report.group_rankings)
    ordered += g.spearman_tok >= kGroupRankingGoal;
  const double groups = static_cast<double>(std::max<size_t>(report.group_rankings.size(), 1));
  report.targets.push_back(
      open_target(kOpenThroughputFigures[0].name, 100.0 * ordered / groups, 100, false));
  if (const PublishedSummary* held_out = published_group(report.published, "held out")) {
    // Met since the release's recipe settings are read (docs/roofline.md, "Per-release recipes").
    report.targets.push_back({"Published tokens/s per GPU, held out, median |error| %",
                              held_out->median_abs_pct, 10, true});
    report.targets.push_back(
        open_target(kOpenThroughputFigures[1].name, held_out->p90_abs_pct, 20, true));
  }
}

}  // namespace

const std::vector<std::string>& calibration_models() {
  static const std::vector<std::string> models = {"1B", "8B"};
  return models;
}

double nanotron_flops_per_token(const Scenario& s) {
  const ModelConfig& m = s.model;
  const ParamCounts counts = count_parameters(m);
  double params = static_cast<double>(counts.total);
  if (m.tied_embeddings && s.parallel.pp > 1) params += static_cast<double>(counts.embedding);
  const double attention = 12.0 * m.num_layers * s.training.seq_len * m.hidden;
  return 6 * params + attention;
}

double spearman(const std::vector<double>& a, const std::vector<double>& b) {
  const size_t n = std::min(a.size(), b.size());
  if (n < 2) return 0;
  const std::vector<double> ra = ranks_of(a), rb = ranks_of(b);
  const double mean = (static_cast<double>(n) + 1) / 2;
  double cov = 0, va = 0, vb = 0;
  for (size_t i = 0; i < n; ++i) {
    cov += (ra[i] - mean) * (rb[i] - mean);
    va += (ra[i] - mean) * (ra[i] - mean);
    vb += (rb[i] - mean) * (rb[i] - mean);
  }
  return (va > 0 && vb > 0) ? cov / std::sqrt(va * vb) : 0;
}

Result<ThroughputReport> validate_throughput(const StepTimeConstants& constants) {
  Result<std::vector<Run>> runs = load_runs();
  if (!runs) return runs.error();
  Result<std::map<std::string, StepTimeModel>> models = prepare_models(*runs, constants);
  if (!models) return models.error();
  ThroughputReport report;
  report.constants = constants;
  std::vector<std::string> names;
  for (Run& run : runs.value()) {
    predict(*models, run);
    if (std::find(names.begin(), names.end(), run.row.model) == names.end())
      names.push_back(run.row.model);
    report.rows.push_back(std::move(run.row));
  }
  for (const std::string& name : names) report.summaries.push_back(summarise(report.rows, name));
  report.summaries.push_back(summarise(report.rows, "all"));
  report.group_rankings = rank_groups(report.rows);
  Result<PublishedReport> published = validate_published_throughput(constants);
  if (!published) return published.error();
  report.published = std::move(published).value();
  Result<PublishedReport> gpu_measured = validate_gpu_step_time(constants);
  if (!gpu_measured) return gpu_measured.error();
  report.gpu_measured = std::move(gpu_measured).value();
  add_targets(report);
  return report;
}

StepTimeConstants fit_step_time_constants(
    const std::function<double(const StepTimeConstants&)>& loss, const StepTimeConstants& start,
    int* evaluations) {
  const auto f = [&](const Point& x) { return loss(decode(x)); };
  // Restarts from the best point found: the loss is flat in places and a collapsed simplex
  // stops early.
  Point best = encode(start);
  for (int restart = 0; restart < kRestarts; ++restart) {
    int n = 0;
    best = nelder_mead(best, f, 2000, n);
    if (evaluations) *evaluations += n;
  }
  return decode(best);
}

double cauchy_log_loss(double predicted, double measured) {
  const double e = std::log(predicted / measured) / kLossScale;
  return std::log1p(e * e);
}

Result<Calibration> calibrate_step_time(const std::vector<std::string>& models,
                                        const StepTimeConstants& start) {
  Result<std::vector<Run>> loaded = load_runs();
  if (!loaded) return loaded.error();
  std::vector<Run> runs;
  for (Run& run : loaded.value())
    if (!run.row.skipped && std::find(models.begin(), models.end(), run.row.model) != models.end())
      runs.push_back(std::move(run));
  if (runs.empty())
    return Error{"models", fmt::format("{}", fmt::join(models, ",")), "1B, 3B, 8B, 80B",
                 "no sweep rows for these models"};
  Calibration out;
  out.models = models;
  out.rows = static_cast<int>(runs.size());
  out.start_objective = objective(runs, start);
  out.constants = fit_step_time_constants(
      [&](const StepTimeConstants& c) { return objective(runs, c); }, start, &out.evaluations);
  out.objective = objective(runs, out.constants);
  return out;
}

}  // namespace vramplan
