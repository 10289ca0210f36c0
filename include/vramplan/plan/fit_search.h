// "What fits" questions answered by search rather than by a user's sweep (docs/fit.md): the
// largest micro-batch, sequence length or global batch that fits one layout, and the smallest
// GPU count on which the planner finds any layout that fits.
//
// The fit rule is the planner's: a value fits when the estimate's peak device bytes (the peak
// stage, CUDA context and NCCL included) are at most usable × (1 − headroom) of the GPU, and the
// offloaded rows, where the node's RAM is known, do not pass it (perf/hardware.h fit_host, the
// estimate's host verdict). With headroom 0 that is the estimate's "fits or tight" verdict.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "vramplan/base/error.h"
#include "vramplan/perf/hardware.h"
#include "vramplan/plan/planner.h"
#include "vramplan/training/scenario.h"

namespace vramplan {

enum class FitQuestion { kMicroBatch, kSeqLen, kGlobalBatch, kGpus };
// The question as the CLI, the JSON and the API name it.
inline constexpr std::array<const char*, 4> kFitQuestionNames = {"micro_batch", "seq_len",
                                                                 "global_batch", "gpus"};
inline const char* fit_question_name(FitQuestion q) {
  return kFitQuestionNames[static_cast<size_t>(q)];
}

struct FitRequest {
  FitQuestion question = FitQuestion::kMicroBatch;
  // The layout and training settings: everything but the value searched. Its micro-batch, seq_len
  // and global batch are the starting point of the questions that do not search them.
  Scenario base;
  Gpu gpu;
  double headroom = 0.1;  // fraction of usable memory kept free (the planner's default)
  // The host check (fit_host): ranks per node and the node's RAM; 0 GiB = not checked.
  int64_t host_gpus_per_node = 8;
  double host_memory_gib = 0;
  // seq_len answers are multiples of this and of what the layout requires (2·cp with context
  // parallelism, tp·cp with sequence parallelism).
  int64_t seq_multiple = 1;
  // The largest value considered (micro-batch, tokens, sequences, GPUs); 0: the scenario checks'
  // largest (GPUs: 16,384).
  int64_t up_to = 0;
  // The global-batch question: the micro-batch is fixed (the user gave it); otherwise every
  // micro-batch up to the largest that fits is tried.
  bool micro_batch_fixed = false;
  // The GPU-count question: the planner's request (base, gpu, cluster, space, headroom, offload
  // search); its gpus is set per count tried.
  PlanRequest plan;
  // The user's scenario settings: each answer's "scenario" is these with the value written in,
  // so `vramplan estimate --scenario` reproduces it.
  nlohmann::json settings = nlohmann::json::object();
};

// One value estimated.
struct FitPoint {
  int64_t value = 0;
  bool fits = false;
  bool host_over = false;  // fits the GPU but the offloaded rows pass the node's RAM
  int64_t allocated_bytes = 0, reserved_bytes = 0, device_bytes = 0, host_bytes = 0;
  std::string peak_stage;
  int64_t in_flight_microbatches = 0;  // of the peak stage
  int64_t micro_batch = 0, microbatches = 0, global_batch = 0, seq_len = 0;
  // The peak stage's on-GPU bytes by component ("activations", "weights", ...), in row order.
  std::vector<std::pair<std::string, int64_t>> components;
  std::string invalid;  // not a valid scenario: the error in words (fits is false)
};

// One GPU count the GPU-count question tried.
struct FitCount {
  int64_t gpus = 0;
  bool fits = false;
  int64_t layouts = 0;       // layouts the planner decided
  std::string layout;        // the best that fits, or the closest miss
  int64_t device_bytes = 0;  // its peak
  std::string reason;        // when the planner had no layout at all at this count
};

struct FitAnswer {
  FitQuestion question = FitQuestion::kMicroBatch;
  std::string model;
  Gpu gpu;
  double headroom = 0;
  int64_t limit_bytes = 0;  // usable × (1 − headroom)
  bool fits = false;        // some value fits
  int64_t value = 0;        // the largest (the smallest GPU count) that fits; 0 when none
  int64_t step = 1;         // the values searched are multiples of this
  int64_t up_to = 0;        // the cap searched to
  // What ends the answer: "memory" (the next value does not fit), "cap" (every value up to the cap
  // fits), "invalid" (the next value is no valid scenario), "nothing" (no value fits).
  std::string bounded_by;
  std::optional<FitPoint> at;    // the answer's estimate
  std::optional<FitPoint> next;  // the first value past it, which does not fit
  int64_t miss_bytes = 0;        // next's peak over the limit
  std::string limiting;          // what grows, in words
  std::string note;              // what governs the answer (global batch, GPU count)
  int64_t evaluated = 0;         // estimates computed (GPU count: planner searches)
  int64_t layouts = 0;           // GPU count: layouts the planner decided, over every count
  double seconds = 0;
  nlohmann::json scenario;  // settings reproducing `at` (null when nothing fits)
  // The global-batch question: the micro-batch and the microbatches per step of the answer.
  int64_t micro_batch = 0, microbatches = 0;
  // The GPU-count question: each count tried, in order, and the plan at the answer.
  std::vector<FitCount> counts;
  std::optional<PlanResult> plan;
};

// The planner's limit: floor(usable × (1 − headroom)).
int64_t fit_limit_bytes(const Gpu& gpu, double headroom);

// The largest sequence-length step the layout allows: lcm of seq_multiple, 2·cp (cp > 1) and
// tp·cp (tp > 1 with sequence parallelism).
int64_t seq_len_step(const Parallelism& p, int64_t seq_multiple);

// Estimates one value of the question (micro-batch, seq_len, or microbatches per step for the
// global batch at base's micro-batch) and decides whether it fits. Exposed for the tests.
FitPoint fit_point(const FitRequest& request, int64_t value);

// Answers the question. Errors: invalid request values (headroom, seq_multiple, up_to), the base
// scenario itself invalid, or the planner's errors (the GPU-count question).
Result<FitAnswer> fit(const FitRequest& request);

}  // namespace vramplan
