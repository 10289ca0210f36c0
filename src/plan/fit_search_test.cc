// The "what fits" searches against brute force: estimate() on every value of small ranges (which
// also checks that peak memory never falls as the value grows, the searches' assumption), and
// plan() on every GPU count.
#include "vramplan/plan/fit_search.h"

#include <gtest/gtest.h>

#include "vramplan/io/estimate_request.h"
#include "vramplan/io/fit_settings.h"
#include "vramplan/io/plan_settings.h"
#include "vramplan/report/fit_report.h"

namespace vramplan {
namespace {

using nlohmann::json;

const FileReader kNoFiles;

FitAnswer answer_of(const json& settings) {
  Result<FitAnswer> a = fit_from_settings(settings, kNoFiles);
  EXPECT_TRUE(a.ok()) << a.error().message();
  return a.ok() ? *a : FitAnswer{};
}

std::string error_field(const json& settings) {
  Result<FitAnswer> a = fit_from_settings(settings, kNoFiles);
  return a.ok() ? "" : a.error().field;
}

// The peak device bytes `vramplan estimate` gives for these settings; -1 when they are invalid.
int64_t peak_of(const json& settings) {
  json s = settings;
  s["formulas"] = false;
  Result<SettingsEstimate> e = estimate_settings(s, kNoFiles);
  return e.ok() ? e->estimate.peak.device_bytes : -1;
}

// Brute force: the largest of values[] whose peak is within the limit, checking on the way that
// the peaks never fall (so that the fitting values are a prefix).
int64_t largest_by_scan(const json& base, const char* key, const std::vector<int64_t>& values,
                        int64_t limit, const std::function<void(json&, int64_t)>& also = {}) {
  int64_t best = 0, previous = 0;
  bool missed = false;
  for (int64_t v : values) {
    json s = base;
    s[key] = v;
    if (also) also(s, v);
    const int64_t peak = peak_of(s);
    EXPECT_GE(peak, previous) << key << " " << v << " in " << base.dump();
    previous = peak;
    if (peak >= 0 && peak <= limit) {
      EXPECT_FALSE(missed) << key << " " << v << " fits again after a miss in " << base.dump();
      best = v;
    } else {
      missed = true;
    }
  }
  return best;
}

std::vector<int64_t> range(int64_t first, int64_t last, int64_t step = 1) {
  std::vector<int64_t> out;
  for (int64_t v = first; v <= last; v += step) out.push_back(v);
  return out;
}

// Layouts of an 8B model on an 80 GiB card, each schedule and sharding kind.
std::vector<json> layouts() {
  const json base = {{"model", "Llama-3.1-8B"}, {"gpu_memory_gib", 80}, {"seq_len", 4096}};
  std::vector<json> out;
  out.push_back(base);
  out.back().update({{"dp", 8}, {"zero", 3}, {"recompute", "full"}});
  out.push_back(base);
  out.back().update({{"tp", 2}, {"pp", 2}, {"dp", 2}, {"schedule", "1f1b"}, {"zero", 1}});
  out.push_back(base);
  out.back().update({{"tp", 2},
                     {"sequence_parallel", true},
                     {"pp", 2},
                     {"vpp", 2},
                     {"schedule", "interleaved"},
                     {"dp", 2},
                     {"distributed_optimizer", true},
                     {"recompute", "full"}});
  out.push_back(base);
  out.back().update(
      {{"tp", 2}, {"pp", 4}, {"schedule", "gpipe"}, {"dp", 1}, {"recompute", "full"}});
  out.push_back(base);
  out.back().update({{"cp", 2}, {"dp", 4}, {"fsdp", "full_shard"}, {"recompute", "selective"}});
  return out;
}

TEST(FitSearch, LargestMicroBatchEqualsBruteForce) {
  for (const json& layout : layouts()) {
    json q = layout;
    q["question"] = "micro_batch";
    q["up_to"] = 24;
    const FitAnswer a = answer_of(q);
    // The micro-batch question keeps the base's microbatches per step.
    const int64_t m = a.at ? a.at->microbatches : 1;
    const int64_t dp = layout["dp"].get<int64_t>();
    const int64_t want =
        largest_by_scan(layout, "micro_batch", range(1, 24), a.limit_bytes,
                        [&](json& s, int64_t v) { s["global_batch"] = v * dp * m; });
    EXPECT_EQ(a.fits ? a.value : 0, want) << layout.dump();
    EXPECT_GT(want, 0) << layout.dump();
    EXPECT_LT(want, 24) << layout.dump();  // memory ends it, not the cap
    EXPECT_EQ(a.bounded_by, "memory");
    EXPECT_LT(a.evaluated, 16) << layout.dump();
    if (a.bounded_by == "memory") {
      ASSERT_TRUE(a.next.has_value());
      EXPECT_EQ(a.next->value, a.value + 1);
      EXPECT_GT(a.miss_bytes, 0);
      EXPECT_NE(a.limiting.find("per micro-batch"), std::string::npos) << a.limiting;
      // The answer's scenario is reproduced by estimate.
      EXPECT_EQ(peak_of(a.scenario), a.at->device_bytes);
    }
  }
}

TEST(FitSearch, LargestSeqLenEqualsBruteForceOnTheLayoutsStep) {
  for (const json& layout : layouts()) {
    json q = layout;
    q.erase("seq_len");
    q["question"] = "seq_len";
    q["seq_multiple"] = 1024;
    q["up_to"] = 131072;
    const FitAnswer a = answer_of(q);
    EXPECT_EQ(a.step % 1024, 0);
    const int64_t want =
        largest_by_scan(layout, "seq_len", range(a.step, 131072, a.step), a.limit_bytes);
    EXPECT_EQ(a.fits ? a.value : 0, want) << layout.dump();
    EXPECT_GT(want, 0) << layout.dump();
    EXPECT_LT(want, 131072) << layout.dump();
    EXPECT_LT(a.evaluated, 20);
    if (a.fits) {
      EXPECT_EQ(peak_of(a.scenario), a.at->device_bytes);
    }
  }
}

TEST(FitSearch, SeqLenStepIsWhatTheLayoutRequires) {
  Parallelism p;
  EXPECT_EQ(seq_len_step(p, 1), 1);
  p.cp = 4;
  EXPECT_EQ(seq_len_step(p, 1), 8);  // 2·cp for causal load balancing
  p.tp = 8;
  p.sequence_parallel = true;
  EXPECT_EQ(seq_len_step(p, 1), 32);  // tp·cp with sequence parallelism
  EXPECT_EQ(seq_len_step(p, 1000), 4000);
}

TEST(FitSearch, GlobalBatchUnderGPipeIsBoundedByMemory) {
  json layout = layouts()[3];  // GPipe: every microbatch's activations are kept
  layout["micro_batch"] = 2;
  json q = layout;
  q["question"] = "global_batch";
  const FitAnswer a = answer_of(q);
  ASSERT_TRUE(a.fits);
  EXPECT_EQ(a.bounded_by, "memory");
  const int64_t per = 2 * layout["dp"].get<int64_t>();  // micro-batch × dp
  const int64_t want =
      largest_by_scan(layout, "global_batch", range(per, 64 * per, per), a.limit_bytes);
  EXPECT_EQ(a.value, want);
  EXPECT_EQ(a.step, per);
  EXPECT_EQ(a.next->value, a.value + per);
}

TEST(FitSearch, GlobalBatchUnder1F1BIsNotBoundedByMemory) {
  json layout = layouts()[1];  // 1F1B keeps at most pp microbatches in flight
  json q = layout;
  q["question"] = "global_batch";
  const FitAnswer a = answer_of(q);
  ASSERT_TRUE(a.fits);
  EXPECT_EQ(a.bounded_by, "schedule");
  EXPECT_NE(a.note.find("any multiple"), std::string::npos) << a.note;
  // From the answer on, the peak stays; below it, it is lower.
  json s = layout;
  s["micro_batch"] = a.micro_batch;
  const int64_t per = a.micro_batch * 2;
  s["global_batch"] = a.value;
  const int64_t at = peak_of(s);
  s["global_batch"] = a.value * 64;
  EXPECT_EQ(peak_of(s), at);
  if (a.value > per) {
    s["global_batch"] = a.value - per;
    EXPECT_LT(peak_of(s), at);
  }
  // The micro-batch is the largest that fits.
  json mb = layout;
  mb["question"] = "micro_batch";
  mb["global_batch"] = a.value;
  EXPECT_GE(a.micro_batch, 1);
  // With a cap, the answer is the largest multiple under it.
  q["up_to"] = 1000;
  const FitAnswer capped = answer_of(q);
  EXPECT_EQ(capped.bounded_by, "cap");
  EXPECT_LE(capped.value, 1000);
  EXPECT_GT(capped.value, 1000 - capped.step);
}

TEST(FitSearch, NothingFitsSaysWhatTheSmallestNeeds) {
  const FitAnswer a =
      answer_of({{"model", "Llama-3.1-70B"}, {"gpu", "h100-80gb"}, {"question", "micro_batch"}});
  EXPECT_FALSE(a.fits);
  EXPECT_EQ(a.bounded_by, "nothing");
  ASSERT_TRUE(a.next.has_value());
  EXPECT_EQ(a.next->value, 1);
  EXPECT_GT(a.miss_bytes, 0);
  EXPECT_EQ(a.limiting.rfind("nothing fits: micro-batch 1 needs", 0), 0u) << a.limiting;
  const json j = fit_to_json(a);
  EXPECT_TRUE(j["value"].is_null());
  EXPECT_TRUE(j["scenario"].is_null());
  EXPECT_FALSE(j["fits"].get<bool>());
}

TEST(FitSearch, SmallestGpuCountEqualsAScanOfThePlanner) {
  // An 8B model on 8 GiB cards needs about three nodes: the probe (8, 16, 32) and the scan
  // between (24) both matter.
  const json base = {{"model", "Llama-3.1-8B"}, {"gpu_memory_gib", 8}, {"seq_len", 2048},
                     {"global_batch", 96},      {"threads", 1},        {"offload_search", "never"}};
  json q = base;
  q["question"] = "gpus";
  const FitAnswer a = answer_of(q);
  int64_t want = 0;
  for (int64_t g : {1, 2, 4, 8, 16, 24, 32, 40, 48}) {
    json s = base;
    s["gpus"] = g;
    Result<PlanResult> p = plan_from_settings(s, kNoFiles);
    if (p.ok() && !p->candidates.empty()) {
      want = g;
      break;
    }
  }
  ASSERT_GT(want, 8);
  EXPECT_EQ(a.value, want);
  ASSERT_TRUE(a.plan.has_value());
  EXPECT_LE(a.at->device_bytes, a.limit_bytes);
  const json j = fit_to_json(a);
  EXPECT_EQ(j["scenario"]["gpus"].get<int64_t>(), want);
  EXPECT_EQ(peak_of(j["scenario"]), a.at->device_bytes);
  EXPECT_FALSE(a.limiting.empty());
}

TEST(FitSearch, BadInputNamesTheField) {
  const json base = {{"model", "Llama-3.1-8B"}, {"question", "micro_batch"}};
  auto with = [&](const char* key, json value) {
    json s = base;
    s[key] = std::move(value);
    return error_field(s);
  };
  EXPECT_EQ(with("question", "batch"), "question");
  EXPECT_EQ(with("question", 3), "question");
  EXPECT_EQ(error_field({{"model", "Llama-3.1-8B"}}), "question");
  EXPECT_EQ(with("micro_batch", 2), "micro_batch");
  EXPECT_EQ(with("up_to", 0), "up_to");
  EXPECT_EQ(with("up_to", "many"), "up_to");
  EXPECT_EQ(with("headroom", 1.5), "headroom");
  EXPECT_EQ(with("max_tp", 2), "max_tp");
  EXPECT_EQ(with("seq_multiple", 128), "seq_multiple");
  EXPECT_EQ(with("tp", 3), "tp");
  json seq = base;
  seq["question"] = "seq_len";
  seq["seq_multiple"] = 0;
  EXPECT_EQ(error_field(seq), "seq_multiple");
  seq["seq_multiple"] = 128;
  seq["seq_len"] = 4096;
  EXPECT_EQ(error_field(seq), "seq_len");
  json gpus = base;
  gpus["question"] = "gpus";
  EXPECT_EQ(error_field(gpus), "global_batch");
  gpus["global_batch"] = 64;
  gpus["gpus"] = 8;
  EXPECT_EQ(error_field(gpus), "gpus");
  json global = base;
  global["question"] = "global_batch";
  global["grad_accum"] = 4;
  EXPECT_EQ(error_field(global), "grad_accum");
}

}  // namespace
}  // namespace vramplan
