#include "report/estimate_text.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "vramplan/training/frameworks.h"

namespace vramplan::estimate_text {

const StageEstimate* peak_stage(const Estimate& e) {
  return e.peak.stage < e.stages.size() ? &e.stages[e.peak.stage] : nullptr;
}

std::string gib(int64_t bytes) { return fmt::format("{:.2f}", static_cast<double>(bytes) / kGiB); }

// 8.03 B, 124.4 M: parameter counts at a glance.
std::string count_text(int64_t n) {
  const double v = static_cast<double>(n);
  if (v >= 1e9) return fmt::format("{:.2f} B", v / 1e9);
  if (v >= 1e6) return fmt::format("{:.1f} M", v / 1e6);
  if (v >= 1e3) return fmt::format("{:.1f} K", v / 1e3);
  return fmt::format("{}", n);
}

// "0–7, 16–23": consecutive runs collapsed, for rank and layer lists.
std::string ranges(const std::vector<int64_t>& ids) {
  std::string text;
  for (std::size_t i = 0; i < ids.size();) {
    std::size_t j = i;
    while (j + 1 < ids.size() && ids[j + 1] == ids[j] + 1) ++j;
    if (!text.empty()) text += ", ";
    text += j == i ? fmt::format("{}", ids[i]) : fmt::format("{}–{}", ids[i], ids[j]);
    i = j + 1;
  }
  return text;
}

std::string model_title(const ModelConfig& m) {
  if (m.name.empty()) return m.model_type.empty() ? "model" : m.model_type;
  return m.model_type.empty() ? m.name : fmt::format("{} ({})", m.name, m.model_type);
}

std::string parameters_text(const ParamCounts& p) {
  std::string text = fmt::format("{} total, {} active", count_text(p.total), count_text(p.active));
  if (p.mtp_total > 0) text += fmt::format(", plus {} in MTP modules", count_text(p.mtp_total));
  return text;
}

std::string layout_text(const Parallelism& p) {
  std::string text = fmt::format("tp {}", p.tp);
  if (p.tp > 1 && p.sequence_parallel) text += " (sequence parallel)";
  text += fmt::format(" · pp {}", p.pp);
  if (p.vpp > 1) text += fmt::format(" × vpp {}", p.vpp);
  if (p.pp > 1) text += fmt::format(" ({})", schedule_name(p.schedule));
  text += fmt::format(" · dp {}", p.dp);
  if (p.cp > 1) text += fmt::format(" · cp {}", p.cp);
  if (p.ep > 1) text += fmt::format(" · ep {}", p.ep);
  if (p.etp > 1) text += fmt::format(" · etp {}", p.etp);
  text += fmt::format(" = {} GPUs", p.world_size());
  return text;
}

std::string sharding_text(const Parallelism& p) {
  std::vector<std::string> parts;
  if (p.zero > 0) parts.push_back(fmt::format("ZeRO-{}", p.zero));
  if (p.fsdp != FsdpMode::kNone) parts.push_back(fmt::format("FSDP {}", fsdp_name(p.fsdp)));
  if (p.distributed_optimizer) parts.push_back("distributed optimizer");
  return parts.empty() ? "none (replicated model states)"
                       : fmt::format("{}", fmt::join(parts, ", "));
}

std::string batch_text(const Training& t, const Parallelism& p, const Estimate& e) {
  // global_batch 0 stands for one microbatch per data-parallel rank.
  const int64_t global = t.global_batch > 0 ? t.global_batch : t.micro_batch * p.dp;
  return fmt::format("seq {} · micro-batch {} · global batch {} · {} microbatches per step",
                     t.seq_len, t.micro_batch, global, e.microbatches);
}

std::string training_text(const Training& t) {
  std::string text = fmt::format("{} · {} params, {} grads", optimizer_name(t.optimizer),
                                 dtype_name(t.param_dtype), dtype_name(t.grad_dtype));
  if (t.fp32_grad_accumulation) text += " (fp32 accumulation)";
  if (keeps_master_weights(t)) text += ", fp32 master";
  text += fmt::format(", {} optimizer states", dtype_name(t.optimizer_state_dtype));
  text += fmt::format(" · recompute {}", recompute_name(t.recompute));
  if (!t.flash_attention) text += " · no flash attention";
  if (t.dropout) text += " · dropout";
  if (t.fp8 != Fp8Recipe::kNone)
    text +=
        fmt::format(" · fp8 {}{}", fp8_recipe_name(t.fp8), t.fp8_params ? " (fp8 weights)" : "");
  return text;
}

std::string stage_details(const StageEstimate& s) {
  std::string text =
      fmt::format("pipeline rank{} {}", s.ranks.size() == 1 ? "" : "s", ranges(s.ranks));
  text += fmt::format(" · {} layer{}", s.layers, s.layers == 1 ? "" : "s");
  if (!s.layer_ids.empty()) text += fmt::format(" ({})", ranges(s.layer_ids));
  text += fmt::format(" · {} microbatch{} in flight", s.in_flight_microbatches,
                      s.in_flight_microbatches == 1 ? "" : "es");
  return text;
}

// "12.34 GiB allocated (likely 11.90–13.10)": the estimate and its 80% band.
std::string amount_with_band(int64_t bytes, int64_t low, int64_t high, const char* what) {
  return fmt::format("{} GiB {} (likely {}–{})", gib(bytes), what, gib(low), gib(high));
}

std::string peak_amounts(const Peak& p) {
  return amount_with_band(p.allocated_bytes, p.allocated_bytes_low, p.allocated_bytes_high,
                          "allocated") +
         " · " +
         amount_with_band(p.reserved_bytes, p.reserved_bytes_low, p.reserved_bytes_high,
                          "reserved") +
         " · " +
         amount_with_band(p.device_bytes, p.device_bytes_low, p.device_bytes_high, "device");
}

// "during forward/backward; optimizer step 38.10 GiB, first step forward/backward 30.00 GiB"
std::string phases_text(const StageEstimate& st) {
  std::string text = "during " + st.peak_phase;
  std::string others;
  for (const Phase& p : st.phases) {
    if (p.name == st.peak_phase) continue;
    others +=
        fmt::format("{}{} {} GiB", others.empty() ? "" : ", ", p.name, gib(p.allocated_bytes));
  }
  return others.empty() ? text : text + "; allocated at other phases: " + others;
}

std::string peak_text(const Estimate& e) {
  const StageEstimate* stage = peak_stage(e);
  return fmt::format("{}: {}", stage ? stage->name : "(no stage)", peak_amounts(e.peak));
}

}  // namespace vramplan::estimate_text
