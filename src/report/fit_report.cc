// A FitAnswer as JSON (stable keys) and as text for a terminal.
#include "vramplan/report/fit_report.h"

#include <fmt/format.h>

#include "vramplan/report/plan_report.h"

namespace vramplan {
namespace {

using nlohmann::json;

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

json point_json(const std::optional<FitPoint>& p) {
  if (!p) return nullptr;
  return {{"value", p->value},
          {"fits", p->fits},
          {"allocated_bytes", p->allocated_bytes},
          {"reserved_bytes", p->reserved_bytes},
          {"device_bytes", p->device_bytes},
          {"host_bytes", p->host_bytes},
          {"peak_stage", p->peak_stage},
          {"micro_batch", p->micro_batch},
          {"microbatches", p->microbatches},
          {"global_batch", p->global_batch},
          {"seq_len", p->seq_len},
          {"in_flight_microbatches", p->in_flight_microbatches},
          {"invalid", p->invalid}};
}

const char* question_words(FitQuestion q) {
  switch (q) {
    case FitQuestion::kMicroBatch:
      return "the largest micro-batch";
    case FitQuestion::kSeqLen:
      return "the largest sequence length";
    case FitQuestion::kGlobalBatch:
      return "the largest global batch";
    default:
      return "the smallest GPU count";
  }
}

}  // namespace

json fit_to_json(const FitAnswer& a) {
  json out = {
      {"question", fit_question_name(a.question)},
      {"model", a.model},
      {"gpu", {{"id", a.gpu.id}, {"name", a.gpu.name}, {"usable_bytes", a.gpu.usable_bytes}}},
      {"headroom", a.headroom},
      {"limit_bytes", a.limit_bytes},
      {"fits", a.fits},
      {"value", a.fits ? json(a.value) : json(nullptr)},
      {"unbounded", a.bounded_by == "schedule"},
      {"step", a.step},
      {"up_to", a.up_to},
      {"bounded_by", a.bounded_by},
      {"at", point_json(a.at)},
      {"next", point_json(a.next)},
      {"miss_bytes", a.next && a.next->invalid.empty() ? json(a.miss_bytes) : json(nullptr)},
      {"limiting", a.limiting},
      {"note", a.note},
      {"evaluated", a.evaluated},
      {"seconds", a.seconds},
      {"scenario", a.scenario.is_null() ? json(nullptr) : a.scenario},
      {"micro_batch", a.micro_batch},
      {"microbatches", a.microbatches}};
  if (a.question == FitQuestion::kGpus) {
    json counts = json::array();
    for (const FitCount& c : a.counts)
      counts.push_back({{"gpus", c.gpus},
                        {"fits", c.fits},
                        {"layouts", c.layouts},
                        {"layout", c.layout},
                        {"device_bytes", c.device_bytes},
                        {"reason", c.reason}});
    out["counts"] = std::move(counts);
    out["layouts"] = a.layouts;
    out["layout"] = nullptr;
    out["plan"] = nullptr;
    if (a.plan) {
      json plan = plan_to_json(*a.plan);
      if (!plan["candidates"].empty()) {
        out["layout"] = plan["candidates"][0]["layout"];
        out["scenario"] = plan["candidates"][0]["scenario"];
      }
      out["plan"] = std::move(plan);
    }
  }
  return out;
}

std::string render_fit(const FitAnswer& a) {
  std::string out =
      fmt::format("vramplan fit · {} · {} · {}\n", question_words(a.question), a.model, a.gpu.name);
  out += fmt::format("limit: {:.1f} GiB per GPU ({:.1f} GiB usable less {:.0f}% headroom)\n\n",
                     a.limit_bytes / kGiB, a.gpu.usable_bytes / kGiB, a.headroom * 100);
  const char* name = fit_question_name(a.question);
  if (!a.fits) {
    out += "Nothing fits.\n";
  } else if (a.bounded_by == "schedule") {
    out += fmt::format(
        "Answer: any multiple of {} from {} on (memory does not bound it at micro-batch {})\n",
        a.step, a.value, a.micro_batch);
  } else {
    out += fmt::format("Answer: {} = {}", name, a.value);
    if (a.question == FitQuestion::kGpus && a.plan && !a.plan->candidates.empty())
      out += fmt::format(" ({})", layout_name(a.plan->candidates.front().layout));
    out += "\n";
  }
  if (a.at)
    out += fmt::format("  peak at the answer:  {:.2f} GiB on {}\n", a.at->device_bytes / kGiB,
                       a.at->peak_stage);
  if (a.next && a.next->invalid.empty())
    out += fmt::format(
        "  {} = {} does not fit:  {:.2f} GiB{}, {} over the limit\n", name, a.next->value,
        a.next->device_bytes / kGiB, a.next->peak_stage.empty() ? "" : " on " + a.next->peak_stage,
        a.miss_bytes < kGiB / 100 ? fmt::format("{:.2f} MiB", a.miss_bytes / 1048576.0)
                                  : fmt::format("{:.2f} GiB", a.miss_bytes / kGiB));
  out += "\nWhy: " + a.limiting + "\n";
  if (!a.note.empty()) out += "Note: " + a.note + "\n";
  if (a.question == FitQuestion::kGpus && !a.counts.empty()) {
    out += fmt::format("\n{:>7}  {:<5}  {:>12}  {}\n", "GPUs", "fits", "peak GiB", "layout");
    for (const FitCount& c : a.counts)
      out += fmt::format("{:>7}  {:<5}  {:>12}  {}\n", c.gpus, c.fits ? "yes" : "no",
                         c.device_bytes > 0 ? fmt::format("{:.2f}", c.device_bytes / kGiB) : "-",
                         c.reason.empty() ? c.layout : c.reason);
  }
  out += fmt::format("\n{} {} in {:.3f} s (up to {}, on multiples of {})\n", a.evaluated,
                     a.question == FitQuestion::kGpus ? "planner searches" : "estimates", a.seconds,
                     a.up_to, a.step);
  if (!a.scenario.is_null())
    out +=
        "The answer's settings: --format json, key \"scenario\" (for vramplan estimate "
        "--scenario)\n";
  return out;
}

}  // namespace vramplan
