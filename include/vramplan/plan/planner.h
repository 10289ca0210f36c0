// Choosing a parallel layout: every valid combination of tensor parallelism (with or without
// sequence parallelism), pipeline parallelism (schedule, virtual stages, layer split), context,
// expert and expert-tensor parallelism, data parallelism, micro-batch, recomputation and
// ZeRO/FSDP/distributed-optimizer sharding for a given number of GPUs; those whose peak memory
// fits with headroom, ranked by the step-time model's tokens/s per GPU.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "vramplan/base/error.h"
#include "vramplan/perf/hardware.h"
#include "vramplan/perf/step_time.h"
#include "vramplan/training/pipeline_split.h"
#include "vramplan/training/scenario.h"

namespace vramplan {

// How model states are sharded over the data-parallel ranks (one planner dimension).
struct ShardingChoice {
  int64_t zero = 0;
  FsdpMode fsdp = FsdpMode::kNone;
  int64_t fsdp_shard_group = 0;  // HYBRID_SHARD only
  bool distributed_optimizer = false;
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
  // What the layout offloads (docs/offload.md): the request's own offload settings, or what the
  // planner's offload pass chose when no layout fit without offload.
  Offload offload;
};

// "tp4 sp pp8 vpp2 interleaved cp1 dp32 mb1 recompute=selective zero1"
// (+ " offload=optimizer:cpu,params:cpu,activations" when it offloads)
std::string layout_name(const PlanLayout& layout);
// Its parts: "zero1", "distopt", "fsdp=full_shard", "fsdp=hybrid_shard/8"; and
// "optimizer:cpu,params:cpu,activations" ("" when it offloads nothing).
std::string sharding_name(const ShardingChoice& sharding);
std::string offload_name(const Offload& offload);
// Writes the layout into a scenario: parallelism, micro-batch, recompute, offload.
void apply_layout(const PlanLayout& layout, Scenario& scenario);

// The scenario keys that describe a layout: given, each fixes its dimension of the search.
inline constexpr const char* kPlanLayoutKeys[] = {"tp",
                                                  "sequence_parallel",
                                                  "pp",
                                                  "vpp",
                                                  "schedule",
                                                  "dp",
                                                  "cp",
                                                  "ep",
                                                  "etp",
                                                  "zero",
                                                  "fsdp",
                                                  "fsdp_shard_group",
                                                  "recompute",
                                                  "micro_batch",
                                                  "distributed_optimizer",
                                                  "first_stage_layers",
                                                  "last_stage_layers",
                                                  "embedding_stage",
                                                  "loss_stage",
                                                  "pipeline_split",
                                                  "pipeline_layout"};

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
  // The node's RAM for the offloaded rows (min(gpus_per_node, gpus) ranks each): a layout over
  // it does not fit. 0 = not known (not checked).
  double host_memory_gib = 0;
  int top_k = 5;
  PlanSpace space;
  int threads = 0;  // 0: every hardware thread
  // When no layout fits and the base offloads nothing: search again with offload (the optimizer,
  // then the parameters, then the activations, to the host and then to NVMe) and rank what fits
  // (planner.cc kOffloadLadder). false: report that nothing fits.
  bool offload_search = true;
  // > 0: collect the space of fitting layouts (PlanResult::space) with at most this many sampled
  // points besides the Pareto front and the top K; 0: not collected.
  int64_t space_points = 0;
  // Asked by each search thread before each branch of the space (so within milliseconds): true
  // stops the search, and plan() returns an Error naming "search". The server stops a search
  // whose client went away or whose time budget ran out; empty: the search runs to its end.
  // Must be thread-safe.
  std::function<bool()> should_stop;
  // The user's scenario settings (scenario_io keys); each candidate's "scenario" in the JSON is
  // these plus its layout, so `vramplan estimate --scenario` reproduces it.
  nlohmann::json settings = nlohmann::json::object();
  // What was read from the user's framework config ("from"), as imported_to_json writes it;
  // null when the settings held none.
  nlohmann::json imported;
};

struct PlanCandidate {
  PlanLayout layout;
  int64_t allocated_bytes = 0;  // peak, as Estimate::peak
  int64_t reserved_bytes = 0;
  int64_t device_bytes = 0;
  int64_t host_bytes = 0;  // one rank's host memory (offloaded rows), as Estimate::peak
  StepTime time;
  // Other layouts with exactly this step time and peak memory (FSDP full_shard and ZeRO-3 under
  // the same conventions, ...): the same trade-off, reported once. Best-first by layout fields;
  // `layout` itself is the first of them all.
  std::vector<PlanLayout> equivalents;
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
  int64_t memory_computed = 0;  // decided one by one (not by the branch bound), by the fast
                                // path or estimate(); a miss may stop at its first rank group
  int64_t memory_fallback = 0;  // of those, by estimate() (layouts outside the fast path)
  int64_t pruned = 0;           // decided by the branch bound
  int64_t fitting = 0;          // fit with headroom: each was timed
  int64_t untimed = 0;    // of those, the step-time model gave no finite positive speed (skipped)
  int64_t host_over = 0;  // fit the GPU but their offloaded rows pass the node's RAM
  double seconds = 0;
  int threads = 1;
};

// The space of fitting layouts as points (peak device memory, tokens/s per GPU), for the Plan
// view's scatter chart (layout_space.h collects it).
struct LayoutSpace {
  int64_t fitting = 0;  // layouts that fit and were timed: each is a point of the space
  int64_t cap = 0;      // PlanRequest::space_points: the most sampled points besides the front
  // The thinning grid: peak device memory in `memory_cells` equal cells from 0 to the limit,
  // tokens/s per GPU in cells of `speed_cell_octaves` doublings (log scale); each occupied cell
  // keeps its best layout (fastest, then least memory, then first by fields). The grid is the
  // finest (128 cells, 1/16 octave) halved in one direction at a time (memory first) until at
  // most `cap` cells are occupied.
  int memory_cells = 0;
  double speed_cell_octaves = 0;
  bool thinned = false;  // fewer points shown than layouts fit
  // The points shown: the Pareto front, the grid's sample and the top-K candidates, each once,
  // fastest first (then least memory). `pareto` flags the front; `rank` is the candidate's place
  // in the top K (0: not one). Points with equal memory and speed are one trade-off, shown once
  // (as in the top K).
  struct Point {
    PlanCandidate candidate;
    bool pareto = false;
    int rank = 0;
  };
  std::vector<Point> points;
  int64_t pareto_count = 0;
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
  // The offload pass: whether it ran (nothing fitted without offload), and in words what it
  // tried and found; the candidates then offload.
  bool offload_searched = false;
  std::string offload_note;
  std::optional<LayoutSpace> space;  // when PlanRequest::space_points > 0 and a layout fits
  nlohmann::json settings;
  nlohmann::json imported;  // the request's
};

// Searches the space. Errors: invalid request values (gpus, max_tp, headroom, top_k, a fixed
// dimension no layout can take), or the step-time model cannot time this GPU or model.
Result<PlanResult> plan(const PlanRequest& request);

}  // namespace vramplan
