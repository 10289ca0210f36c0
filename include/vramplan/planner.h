// Choosing a parallel layout: every valid combination of tensor parallelism (with or without
// sequence parallelism), pipeline parallelism (schedule, virtual stages, layer split), context,
// expert and expert-tensor parallelism, data parallelism, micro-batch, recomputation and
// ZeRO/FSDP/distributed-optimizer sharding for a given number of GPUs; those whose peak memory
// fits with headroom, ranked by the step-time model's tokens/s per GPU.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "vramplan/error.h"
#include "vramplan/hardware.h"
#include "vramplan/scenario.h"
#include "vramplan/scenario_io.h"
#include "vramplan/step_time.h"

namespace vramplan {

// How model states are sharded over the data-parallel ranks (one planner dimension).
struct ShardingChoice {
  int64_t zero = 0;
  FsdpMode fsdp = FsdpMode::kNone;
  int64_t fsdp_shard_group = 0;  // HYBRID_SHARD only
  bool distributed_optimizer = false;
};

// Which pipeline layer splits the planner may use. kEven needs pp·vpp to divide the layers;
// kEmbeddingAndLoss / kEmbedding / kLoss count the embedding and/or the loss as a layer of the
// split (Megatron's --account-for-*-in-pipeline-split); kLighterEnds gives the first and last
// stage fewer layers than the rest (Llama 3's 405B layout; vpp = 1); kBalanced spreads a remainder
// over the first chunks; kBalancedEmbeddingAndLoss does that with the embedding and the loss
// counted as one layer each (torchtitan's generate_llm_fqn_per_model_part); kCompute is
// nanotron's split by compute cost (vpp = 1).
enum class SplitKind {
  kEven,
  kEmbeddingAndLoss,
  kEmbedding,
  kLoss,
  kLighterEnds,
  kBalanced,
  kBalancedEmbeddingAndLoss,
  kCompute
};

const char* split_name(SplitKind kind);  // "even", "embedding+loss", ..., "compute"

struct PipelineSplit {
  SplitKind kind = SplitKind::kEven;
  int64_t first_stage_layers = 0;  // kLighterEnds
  int64_t last_stage_layers = 0;
};

// One point of the search space.
struct PlanLayout {
  int64_t tp = 1;
  bool sequence_parallel = false;
  int64_t pp = 1;
  int64_t vpp = 1;
  Schedule schedule = Schedule::k1F1B;
  PipelineSplit split;
  int64_t cp = 1;
  int64_t ep = 1;
  int64_t etp = 1;
  int64_t dp = 1;
  int64_t micro_batch = 1;
  Recompute recompute = Recompute::kNone;
  ShardingChoice sharding;
};

// "tp4 sp pp8 vpp2 interleaved cp1 dp32 mb1 recompute=selective zero1"
std::string layout_name(const PlanLayout& layout);
// Writes the layout into a scenario: parallelism, micro-batch, recompute.
void apply_layout(const PlanLayout& layout, Scenario& scenario);

// Restrictions on the search. An empty list allows every valid value of that dimension.
struct PlanSpace {
  std::vector<int64_t> tp, pp, vpp, cp, ep, etp, dp, micro_batch, zero, fsdp_shard_group;
  std::vector<bool> sequence_parallel, distributed_optimizer;
  std::vector<Schedule> schedule;
  std::vector<Recompute> recompute;
  std::vector<FsdpMode> fsdp;
  std::vector<SplitKind> split;  // empty: the first six kinds (not torchtitan's nor nanotron's)
  std::optional<PipelineSplit> fixed_split;  // exactly this split (user's first/last layers)
  // The highest ZeRO stage allowed with pp > 1 (DeepSpeed's pipeline engine refuses ZeRO-2/3).
  std::optional<int64_t> pipeline_max_zero;
};

struct PlanRequest {
  Scenario base;  // model, training (seq_len, global_batch > 0, dtypes, ...), overheads,
                  // conventions; its parallelism, micro_batch and recompute are ignored
  Gpu gpu;
  Cluster cluster;
  int64_t gpus = 0;
  int64_t max_tp = 0;     // 0: cluster.gpus_per_node (TP stays inside a node)
  double headroom = 0.1;  // fraction of usable memory kept free
  int top_k = 5;
  PlanSpace space;
  int threads = 0;  // 0: every hardware thread
  // The user's scenario settings (scenario_io keys); each candidate's "scenario" in the JSON is
  // these plus its layout, so `vramplan estimate --scenario` reproduces it.
  nlohmann::json settings = nlohmann::json::object();
};

struct PlanCandidate {
  PlanLayout layout;
  int64_t allocated_bytes = 0;  // peak, as Estimate::peak
  int64_t reserved_bytes = 0;
  int64_t device_bytes = 0;
  StepTime time;
  // Filled for the reported candidates by estimate() itself: the stage that peaks.
  std::string peak_stage;
  int64_t peak_stage_index = 0;
};

// The popular layout families the winner is compared against.
enum class Family {
  kDataParallel,
  kTensorInNode,
  kTensorPipeline,
  kContext,
  kFullRecompute,
  kExpert
};
inline constexpr int kFamilies = 6;
const char* family_name(Family f);  // "pure data parallel (DP/ZeRO/FSDP)", ...
bool in_family(const PlanLayout& layout, Family f);

struct FamilyOutcome {
  Family family = Family::kDataParallel;
  std::optional<PlanCandidate> best;          // fastest layout of the family that fits
  std::optional<PlanCandidate> closest_miss;  // when none fits: the least memory needed
};

// What the search did. `evaluated` counts valid layouts decided: each either had its peak
// computed, or lies in a branch whose model states alone already exceed the limit (so no choice
// of micro-batch, recompute or schedule in it can fit).
struct PlanStats {
  int64_t evaluated = 0;
  int64_t memory_computed = 0;  // peaks computed, by the fast path or estimate()
  int64_t memory_fallback = 0;  // of those, by estimate() (layouts outside the fast path)
  int64_t pruned = 0;           // decided by the branch bound
  int64_t fitting = 0;          // fit with headroom: each was timed
  int64_t untimed = 0;  // of those, the step-time model gave no finite positive speed (skipped)
  double seconds = 0;
  int threads = 1;
};

struct PlanResult {
  std::string model;
  Gpu gpu;
  Cluster cluster;
  int64_t gpus = 0;
  int64_t max_tp = 0;
  double headroom = 0;
  int64_t limit_bytes = 0;  // usable × (1 − headroom)
  int64_t global_batch = 0;
  int64_t seq_len = 0;
  std::vector<PlanCandidate> candidates;      // best first, at most top_k
  std::vector<FamilyOutcome> families;        // those that apply to the model
  std::optional<PlanCandidate> closest_miss;  // when nothing fits
  PlanStats stats;
  std::string why;                       // the winner against the families, in words
  std::vector<std::string> suggestions;  // when nothing fits
  nlohmann::json settings;
};

// Searches the space. Errors: invalid request values (gpus, max_tp, headroom, top_k, a fixed
// dimension no layout can take), or the step-time model cannot time this GPU or model.
Result<PlanResult> plan(const PlanRequest& request);

// The planner's own settings beside the scenario keys: gpus (required), gpus_per_node, max_tp,
// headroom, top, threads.
struct PlanOption {
  const char* key;
  OptionKind kind;
  const char* default_text;
  const char* help;
};
std::span<const PlanOption> plan_options();

// A plan from settings as the CLI and the HTTP API pass them: scenario keys (see scenario_io.h)
// plus plan_options(). Scenario keys that describe the layout (tp, pp, micro_batch, zero, ...)
// fix that dimension; global_batch is required.
Result<PlanRequest> plan_request_from_settings(const nlohmann::json& settings,
                                               const FileReader& read_file);
Result<PlanResult> plan_from_settings(const nlohmann::json& settings, const FileReader& read_file);

// Stable keys: evaluated, candidates[] {layout, parallel, peak {stage, stage_index,
// allocated_bytes, reserved_bytes, device_bytes}, tokens_per_s_per_gpu, mfu, step_time_s,
// step_time {...}, scenario {settings for `vramplan estimate --scenario`}}, families[], why,
// closest_miss, suggestions, stats, limit_bytes, gpu, gpus.
nlohmann::json plan_to_json(const PlanResult& result);

// "tp4 sp pp8 ..." table of the top candidates and the why paragraph, for a terminal.
std::string render_plan(const PlanResult& result);

// --- The planner against measurements ---------------------------------------------------------
// For each (model, GPU count) group of the Ultra-Scale Playbook sweep
// (data/measurements/ultrascale_playbook_benchmarks.csv): the planner restricted to what nanotron
// varied there (dp, tp up to 32, pp with its compute-cost split and 1F1B, ZeRO 0/1, micro-batch; TP
// with sequence parallelism; same sequence length and global batch) on H100 80GB nodes of 8, and
// where its choices rank among the layouts that ran, by measured tokens/s per GPU.
struct PlannerCheckGroup {
  std::string model;  // "1B", "3B", "8B", "80B"
  int64_t gpus = 0;
  int measured = 0;           // distinct layouts that ran
  double best_measured = 0;   // tokens/s per GPU of the fastest that ran
  std::string best_layout;    // ... and its layout
  std::string top_layout;     // the planner's first choice ("" when nothing fits)
  std::string top_status;     // "ran", "crashed" (in the crashed list), "not run", "nothing fits"
  int top_measured_rank = 0;  // among the layouts that ran, 1 = fastest; 0 unless it ran
  double top_fraction = 0;    // its measured tokens/s over the best measured
  // The planner's highest-ranked choice that ran (the top choice itself when it ran).
  int ran_plan_rank = 0;  // 1 = the planner's top choice; 0 when none of its choices ran
  std::string ran_layout;
  int ran_measured_rank = 0;
  double ran_fraction = 0;
};

struct PlannerCheck {
  double headroom = 0;
  std::vector<PlannerCheckGroup> groups;
  int top_ran = 0;                 // groups whose top choice ran
  int top_in_top3 = 0;             // ... and was among the 3 fastest measured
  double median_ran_fraction = 0;  // median over groups of ran_fraction
  double min_ran_fraction = 0;
};

// Errors: the embedded measurement tables cannot be read, or the step-time model cannot be
// prepared for the sweep's models.
Result<PlannerCheck> check_planner_on_ultrascale(double headroom = 0.1);
nlohmann::json planner_check_to_json(const PlannerCheck& check);
std::string render_planner_check(const PlannerCheck& check);

}  // namespace vramplan
