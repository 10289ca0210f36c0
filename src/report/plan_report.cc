// A PlanResult as JSON (stable keys) and as a terminal table with the why paragraph.
#include "vramplan/report/plan_report.h"

#include <fmt/format.h>

#include <algorithm>

#include "plan/planner_search.h"

namespace vramplan {
namespace {

using nlohmann::json;

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

json step_time_json(const StepTime& t) {
  return {{"compute_s", t.compute_s},     {"recompute_s", t.recompute_s},
          {"tp_comm_s", t.tp_comm_s},     {"cp_comm_s", t.cp_comm_s},
          {"ep_comm_s", t.ep_comm_s},     {"cpu_bound_s", t.cpu_bound_s},
          {"pp_bubble_s", t.pp_bubble_s}, {"dp_comm_exposed_s", t.dp_comm_exposed_s},
          {"optimizer_s", t.optimizer_s}, {"offload_s", t.offload_s},
          {"step_time_s", t.step_time_s}};
}

json offload_json(const Offload& o) {
  return {{"optimizer", offload_tier_name(o.optimizer)},
          {"params", offload_tier_name(o.params)},
          {"optimizer_fraction", o.optimizer_fraction},
          {"activations", o.activations}};
}

json parallel_json(const PlanLayout& l) {
  return {{"tp", l.tp},
          {"sequence_parallel", l.sequence_parallel},
          {"pp", l.pp},
          {"vpp", l.vpp},
          {"schedule", schedule_name(l.schedule)},
          {"split", split_name(l.split.kind)},
          {"first_stage_layers", l.split.first_stage_layers},
          {"last_stage_layers", l.split.last_stage_layers},
          {"cp", l.cp},
          {"ep", l.ep},
          {"etp", l.etp},
          {"dp", l.dp},
          {"zero", l.sharding.zero},
          {"fsdp", fsdp_name(l.sharding.fsdp)},
          {"fsdp_shard_group", l.sharding.fsdp_shard_group},
          {"distributed_optimizer", l.sharding.distributed_optimizer}};
}

// The request's settings less every layout key: the part of a candidate's scenario that all
// layouts share.
json base_settings(const PlanResult& p) {
  json s = p.settings.is_object() ? p.settings : json::object();
  for (const char* key : kPlanLayoutKeys) s.erase(key);
  for (const char* key :
       {"offload_optimizer", "offload_params", "optimizer_offload_fraction", "offload_activations"})
    s.erase(key);
  s["gpus"] = p.gpus;
  s["global_batch"] = p.global_batch;
  s["seq_len"] = p.seq_len;
  return s;
}

// The layout's own keys, written over base_settings().
json layout_settings(const PlanLayout& l) {
  json s = json::object();
  const Offload& o = l.offload;
  if (o.optimizer != OffloadTier::kNone) s["offload_optimizer"] = offload_tier_name(o.optimizer);
  if (o.params != OffloadTier::kNone) s["offload_params"] = offload_tier_name(o.params);
  if (o.optimizer_fraction < 1.0) s["optimizer_offload_fraction"] = o.optimizer_fraction;
  if (o.activations) s["offload_activations"] = true;
  s["tp"] = l.tp;
  s["sequence_parallel"] = l.sequence_parallel;
  s["pp"] = l.pp;
  s["vpp"] = l.vpp;
  s["schedule"] = schedule_name(l.schedule);
  s["dp"] = l.dp;
  s["cp"] = l.cp;
  s["ep"] = l.ep;
  s["etp"] = l.etp;
  s["micro_batch"] = l.micro_batch;
  s["recompute"] = recompute_name(l.recompute);
  s["zero"] = l.sharding.zero;
  s["fsdp"] = fsdp_name(l.sharding.fsdp);
  if (l.sharding.fsdp == FsdpMode::kHybridShard)
    s["fsdp_shard_group"] = l.sharding.fsdp_shard_group;
  s["distributed_optimizer"] = l.sharding.distributed_optimizer;
  if (l.split.first_stage_layers > 0) s["first_stage_layers"] = l.split.first_stage_layers;
  if (l.split.last_stage_layers > 0) s["last_stage_layers"] = l.split.last_stage_layers;
  if (l.pp == 1) return s;  // no split: the framework's default one stays
  Parallelism split;
  set_split(l.split, split);
  s["embedding_stage"] = split.embedding_as_stage;
  s["loss_stage"] = split.loss_as_stage;
  s["pipeline_split"] = split.compute_balanced_split ? "compute"
                        : split.balanced_split       ? "balanced"
                                                     : "even";
  return s;
}

// Settings `vramplan estimate --scenario` reads back into this very layout.
json scenario_settings(const PlanResult& p, const PlanLayout& l) {
  json s = base_settings(p);
  s.update(layout_settings(l));
  return s;
}

json peak_json(const PlanCandidate& c) {
  return {{"stage", c.peak_stage},
          {"stage_index", c.peak_stage_index},
          {"allocated_bytes", c.allocated_bytes},
          {"reserved_bytes", c.reserved_bytes},
          {"device_bytes", c.device_bytes},
          {"host_bytes", c.host_bytes}};
}

// The layouts with the same step time and peak as the candidate, by name.
json equivalents_json(const PlanCandidate& c) {
  json out = json::array();
  for (const PlanLayout& l : c.equivalents) out.push_back(layout_name(l));
  return out;
}

json candidate_json(const PlanResult& p, const PlanCandidate& c) {
  return {{"layout", layout_name(c.layout)},
          {"equivalents", equivalents_json(c)},
          {"parallel", parallel_json(c.layout)},
          {"micro_batch", c.layout.micro_batch},
          {"recompute", recompute_name(c.layout.recompute)},
          {"offload", offload_json(c.layout.offload)},
          {"peak", peak_json(c)},
          {"used_fraction", static_cast<double>(c.device_bytes) / p.gpu.usable_bytes},
          {"tokens_per_s_per_gpu", c.time.tokens_per_s_per_gpu},
          {"mfu", c.time.mfu},
          {"step_time_s", c.time.step_time_s},
          {"step_time", step_time_json(c.time)},
          {"scenario", scenario_settings(p, c.layout)}};
}

json miss_json(const PlanResult& p, const PlanCandidate& c) {
  return {{"layout", layout_name(c.layout)},
          {"parallel", parallel_json(c.layout)},
          {"micro_batch", c.layout.micro_batch},
          {"recompute", recompute_name(c.layout.recompute)},
          {"peak", peak_json(c)},
          {"over_bytes", c.device_bytes - p.limit_bytes},
          {"scenario", scenario_settings(p, c.layout)}};
}

// One point of the space: its layout (name, the dimensions the Plan view filters on, and the
// scenario keys that, over space.base_scenario, reproduce it), its peak and its speed.
json space_point_json(const LayoutSpace::Point& point) {
  const PlanCandidate& c = point.candidate;
  const PlanLayout& l = c.layout;
  return {{"layout", layout_name(l)},
          {"sharding", sharding_name(l.sharding)},
          {"offload", offload_name(l.offload)},
          {"allocated_bytes", c.allocated_bytes},
          {"reserved_bytes", c.reserved_bytes},
          {"device_bytes", c.device_bytes},
          {"host_bytes", c.host_bytes},
          {"tokens_per_s_per_gpu", c.time.tokens_per_s_per_gpu},
          {"step_time_s", c.time.step_time_s},
          {"mfu", c.time.mfu},
          {"pareto", point.pareto},
          {"rank", point.rank},
          {"scenario", layout_settings(l)}};
}

json space_json(const PlanResult& p) {
  if (!p.space) return nullptr;
  const LayoutSpace& space = *p.space;
  json points = json::array();
  std::vector<std::pair<int64_t, size_t>> front;  // (peak, index) of the Pareto points
  for (size_t i = 0; i < space.points.size(); ++i) {
    points.push_back(space_point_json(space.points[i]));
    if (space.points[i].pareto) front.emplace_back(space.points[i].candidate.device_bytes, i);
  }
  std::sort(front.begin(), front.end());
  json pareto = json::array();
  for (const auto& [bytes, i] : front) pareto.push_back(i);
  return {
      {"fitting", space.fitting},
      {"shown", space.points.size()},
      {"cap", space.cap},
      {"thinned", space.thinned},
      {"grid",
       {{"memory_cells", space.memory_cells}, {"speed_cell_octaves", space.speed_cell_octaves}}},
      {"base_scenario", base_settings(p)},
      {"points", std::move(points)},
      {"pareto", std::move(pareto)}};
}

std::string with_commas(double value) {
  const std::string digits = fmt::format("{:.0f}", value);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0 && digits[i - 1] != '-') out += ',';
    out += digits[i];
  }
  return out;
}

}  // namespace

json plan_to_json(const PlanResult& p) {
  json out = {{"model", p.model},
              {"gpus", p.gpus},
              {"gpu",
               {{"id", p.gpu.id},
                {"name", p.gpu.name},
                {"usable_bytes", p.gpu.usable_bytes},
                {"gpus_per_node", p.cluster.gpus_per_node}}},
              {"max_tp", p.max_tp},
              {"headroom", p.headroom},
              {"limit_bytes", p.limit_bytes},
              {"seq_len", p.seq_len},
              {"global_batch", p.global_batch},
              {"evaluated", p.stats.evaluated},
              {"stats",
               {{"evaluated", p.stats.evaluated},
                {"memory_computed", p.stats.memory_computed},
                {"memory_fallback", p.stats.memory_fallback},
                {"pruned", p.stats.pruned},
                {"fitting", p.stats.fitting},
                {"untimed", p.stats.untimed},
                {"host_over", p.stats.host_over},
                {"seconds", p.stats.seconds},
                {"threads", p.stats.threads}}},
              {"candidates", json::array()},
              {"families", json::array()},
              {"why", p.why},
              {"offload_search", {{"ran", p.offload_searched}, {"note", p.offload_note}}},
              {"closest_miss", nullptr},
              {"suggestions", p.suggestions},
              {"space", space_json(p)}};
  for (size_t i = 0; i < p.candidates.size(); ++i) {
    json c = candidate_json(p, p.candidates[i]);
    c["rank"] = i + 1;
    out["candidates"].push_back(std::move(c));
  }
  for (const FamilyOutcome& f : p.families) {
    json family = {
        {"name", family_name(f.family)},
        {"best", f.best ? candidate_json(p, *f.best) : json(nullptr)},
        {"closest_miss", f.closest_miss ? miss_json(p, *f.closest_miss) : json(nullptr)}};
    if (f.best && !p.candidates.empty())
      family["slower_pct"] =
          (1 - f.best->time.tokens_per_s_per_gpu / p.candidates.front().time.tokens_per_s_per_gpu) *
          100;
    out["families"].push_back(std::move(family));
  }
  if (p.closest_miss) out["closest_miss"] = miss_json(p, *p.closest_miss);
  if (!p.imported.is_null()) out["imported"] = p.imported;
  return out;
}

std::string render_plan(const PlanResult& p) {
  std::string out =
      fmt::format("vramplan plan · {} · {} × {} ({} per node) · seq {} · global batch {}\n",
                  p.model, p.gpus, p.gpu.name, p.cluster.gpus_per_node, p.seq_len, p.global_batch);
  out += fmt::format("limit: {:.1f} GiB per GPU ({:.1f} GiB usable less {:.0f}% headroom)\n",
                     p.limit_bytes / kGiB, p.gpu.usable_bytes / kGiB, p.headroom * 100);
  const PlanStats& s = p.stats;
  out += fmt::format(
      "searched {} layouts in {:.3f} s on {} thread(s): {} peaks computed, {} ruled out by a "
      "model-state bound, {} fit\n\n",
      with_commas(static_cast<double>(s.evaluated)), s.seconds, s.threads,
      with_commas(static_cast<double>(s.memory_computed)),
      with_commas(static_cast<double>(s.pruned)), with_commas(static_cast<double>(s.fitting)));
  if (p.candidates.empty()) {
    out += "No layout fits.\n";
    if (p.offload_searched) out += p.offload_note + "\n";
    if (p.closest_miss) {
      const PlanCandidate& m = *p.closest_miss;
      out += fmt::format("The closest, {}, needs {:.1f} GiB per GPU: {:.1f} GiB over the limit.\n",
                         layout_name(m.layout), m.device_bytes / kGiB,
                         (m.device_bytes - p.limit_bytes) / kGiB);
    }
    if (!p.suggestions.empty()) out += "Try:\n";
    for (const std::string& tip : p.suggestions) out += "  - " + tip + "\n";
    return out;
  }
  size_t width = 6;
  for (const PlanCandidate& c : p.candidates) width = std::max(width, layout_name(c.layout).size());
  out += fmt::format("{:>3}  {:<{}}  {:>15}  {:>9}  {:>10}  {:>6}\n", "#", "layout", width,
                     "peak GiB/limit", "step s", "tok/s/GPU", "MFU");
  for (size_t i = 0; i < p.candidates.size(); ++i) {
    const PlanCandidate& c = p.candidates[i];
    out += fmt::format(
        "{:>3}  {:<{}}  {:>15}  {:>9.3f}  {:>10}  {:>5.1f}%\n", i + 1, layout_name(c.layout), width,
        fmt::format("{:.1f}/{:.1f}", c.device_bytes / kGiB, p.limit_bytes / kGiB),
        c.time.step_time_s, with_commas(c.time.tokens_per_s_per_gpu), c.time.mfu * 100);
    for (const PlanLayout& e : c.equivalents)
      out += fmt::format("{:>3}  = {} (same step time and peak)\n", "", layout_name(e));
  }
  if (p.space)
    out += fmt::format(
        "\nspace: {} of {} fitting layouts as points in --format json ({} on the Pareto front)\n",
        with_commas(static_cast<double>(p.space->points.size())),
        with_commas(static_cast<double>(p.space->fitting)), p.space->pareto_count);
  out += "\nWhy: " + p.why + "\n";
  return out;
}

}  // namespace vramplan
