#include "plan/planner_search.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <numeric>
#include <thread>
#include <tuple>

#include "plan/search_space.h"
#include "plan/search_worker.h"

namespace vramplan {
namespace {

using namespace plan_space;
using plan_search::Branch;
using plan_search::join_equivalent;
using plan_search::layout_key;
using plan_search::PipeOption;
using plan_search::Worker;

std::vector<PipeOption> pipe_options(const PlanRequest& r, const FastMemoryModel& memory) {
  std::vector<PipeOption> out;
  const int64_t layers = r.base.model.num_layers;
  for (int64_t pp : divisors(r.gpus)) {
    if (pp > kMaxDegree || !allowed(r.space.pp, pp)) continue;
    for (int64_t vpp = 1; vpp <= std::max<int64_t>(1, layers / pp); ++vpp) {
      if (vpp > 1 && pp == 1) break;
      if (!allowed(r.space.vpp, vpp)) continue;
      const std::vector<Schedule> schedules = schedules_for(r, pp, vpp);
      if (schedules.empty()) continue;
      for (const PipelineSplit& split : splits_for(r, pp, vpp)) {
        PipeOption o{pp, vpp, split, schedules, {}};
        Parallelism p;
        p.pp = pp;
        p.vpp = vpp;
        set_split(split, p);
        o.shape = memory.shape(p);
        out.push_back(std::move(o));
      }
    }
  }
  return out;
}

std::vector<Branch> branches_of(const PlanRequest& r, const std::vector<PipeOption>& pipes) {
  std::vector<Branch> out;
  const ModelConfig& m = r.base.model;
  const int64_t seq = r.base.training.seq_len;
  std::vector<int64_t> eps = {1}, etps = {1};
  if (m.is_moe()) {
    eps = divisors(m.moe.num_experts);
    etps.clear();
    for (int64_t etp : divisors(m.moe.expert_ffn))
      if (etp <= max_tp_of(r)) etps.push_back(etp);
  }
  for (int64_t tp : tps_for(r)) {
    for (size_t pi = 0; pi < pipes.size(); ++pi) {
      const int64_t pp = pipes[pi].pp;
      if ((r.gpus / tp) % pp != 0) continue;
      for (int64_t cp : divisors(r.gpus / (tp * pp))) {
        if (cp > kMaxDegree || !allowed(r.space.cp, cp) || !cp_divides_sequence(seq, cp)) continue;
        const int64_t dp = r.gpus / (tp * pp * cp);
        if (dp > kMaxDegree || !allowed(r.space.dp, dp)) continue;
        for (int64_t ep : eps) {
          if (ep > kMaxDegree || !allowed(r.space.ep, ep)) continue;
          for (int64_t etp : etps) {
            if (etp > kMaxDegree || !allowed(r.space.etp, etp)) continue;
            if (!experts_fit(m, tp, cp, dp, ep, etp)) continue;
            out.push_back({tp, cp, dp, ep, etp, pi});
          }
        }
      }
    }
  }
  return out;
}

}  // namespace

void merge_search(SearchResult& total, SearchResult& part, int top_k) {
  for (const PlanCandidate& c : part.top)
    if (!join_equivalent(total.top, c)) total.top.push_back(c);
  std::sort(total.top.begin(), total.top.end(), better_candidate);
  if (static_cast<int>(total.top.size()) > top_k) total.top.resize(top_k);
  for (int f = 0; f < kFamilies; ++f) {
    if (part.family_best[f] &&
        (!total.family_best[f] || better_candidate(*part.family_best[f], *total.family_best[f])))
      total.family_best[f] = part.family_best[f];
    if (part.family_miss[f] &&
        (!total.family_miss[f] || closer_miss(*part.family_miss[f], *total.family_miss[f])))
      total.family_miss[f] = part.family_miss[f];
  }
  if (part.closest_miss &&
      (!total.closest_miss || closer_miss(*part.closest_miss, *total.closest_miss)))
    total.closest_miss = part.closest_miss;
  if (part.space && total.space)
    total.space->merge(*part.space);
  else if (part.space)
    total.space = std::move(part.space);
  add_stats(total.stats, part.stats);
}

void add_stats(PlanStats& total, const PlanStats& part) {
  total.evaluated += part.evaluated;
  total.memory_computed += part.memory_computed;
  total.memory_fallback += part.memory_fallback;
  total.pruned += part.pruned;
  total.fitting += part.fitting;
  total.untimed += part.untimed;
  total.host_over += part.host_over;
}

void settle_misses(SearchResult& total) {
  // A closest miss matters only when nothing fits; a family's only when none of it fits.
  if (!total.top.empty()) total.closest_miss.reset();
  for (int f = 0; f < kFamilies; ++f)
    if (total.family_best[f]) total.family_miss[f].reset();
}

bool better_candidate(const PlanCandidate& a, const PlanCandidate& b) {
  if (a.time.tokens_per_s_per_gpu != b.time.tokens_per_s_per_gpu)
    return a.time.tokens_per_s_per_gpu > b.time.tokens_per_s_per_gpu;
  if (a.device_bytes != b.device_bytes) return a.device_bytes < b.device_bytes;
  return layout_key(a.layout) < layout_key(b.layout);
}

bool same_trade_off(const PlanCandidate& a, const PlanCandidate& b) {
  return a.time.tokens_per_s_per_gpu == b.time.tokens_per_s_per_gpu &&
         a.time.step_time_s == b.time.step_time_s && a.device_bytes == b.device_bytes;
}

bool closer_miss(const PlanCandidate& a, const PlanCandidate& b) {
  if (a.device_bytes != b.device_bytes) return a.device_bytes < b.device_bytes;
  return layout_key(a.layout) < layout_key(b.layout);
}

SearchResult search_layouts(const PlanRequest& r, const FastMemoryModel& memory,
                            const LayoutTimer& timer, int64_t limit_bytes) {
  const std::vector<PipeOption> pipes = pipe_options(r, memory);
  const std::vector<Branch> branches = branches_of(r, pipes);
  int threads = r.threads > 0 ? r.threads : static_cast<int>(std::thread::hardware_concurrency());
  threads = std::clamp<int>(threads, 1, std::max<int>(1, static_cast<int>(branches.size())));
  std::vector<Worker> workers;
  workers.reserve(threads);
  for (int t = 0; t < threads; ++t) workers.emplace_back(r, memory, timer, limit_bytes, pipes);
  std::atomic<size_t> next{0};
  std::atomic<bool> stopped{false};
  auto work = [&](Worker& w) {
    for (size_t i = next++; i < branches.size(); i = next++) {
      if (stopped.load(std::memory_order_relaxed)) return;
      if (r.should_stop && r.should_stop()) {
        stopped = true;
        return;
      }
      w.run(branches[i]);
    }
  };
  if (threads == 1) {
    work(workers[0]);
  } else {
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) pool.emplace_back(work, std::ref(workers[t]));
    for (std::thread& th : pool) th.join();
  }
  SearchResult total;
  for (Worker& w : workers) merge_search(total, w.result(), r.top_k);
  settle_misses(total);
  total.stats.threads = threads;
  total.stopped = stopped;
  return total;
}

}  // namespace vramplan
