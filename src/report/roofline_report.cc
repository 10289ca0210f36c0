#include "vramplan/report/roofline_report.h"

#include <fmt/format.h>

#include <string>

#include "report/text_layout.h"
#include "training/scenario_checks.h"
#include "vramplan/perf/roofline.h"

namespace vramplan {
namespace {

using textfmt::csv_field;

// 1234567 -> "1.23 M": FLOPs and bytes span twelve orders of magnitude.
std::string si(double value) {
  static const char* kPrefixes[] = {"", "k", "M", "G", "T", "P", "E"};
  int i = 0;
  while (value >= 1000 && i < 6) {
    value /= 1000;
    ++i;
  }
  return fmt::format("{:.3g} {}", value, kPrefixes[i]);
}

std::string seconds(double s) {
  if (s >= 1) return fmt::format("{:.3g} s", s);
  if (s >= 1e-3) return fmt::format("{:.3g} ms", s * 1e3);
  return fmt::format("{:.3g} µs", s * 1e6);
}

std::string layout_line(const Scenario& s) {
  const Parallelism& p = s.parallel;
  return fmt::format(
      "Layout: tp {}{} · cp {} · pp {}{} · dp {} · ep {} · etp {}, micro-batch {} × {} "
      "microbatches per step, seq {}, recompute {}",
      p.tp, p.tp > 1 && p.sequence_parallel ? " (SP)" : "", p.cp, p.pp,
      p.vpp > 1 ? fmt::format(" × vpp {}", p.vpp) : "", p.dp, p.ep, p.etp, s.training.micro_batch,
      microbatches_of(s), s.training.seq_len, recompute_name(s.training.recompute));
}

void append_section(std::string& out, const RooflineSection& section) {
  out += fmt::format("\n{} (×{})\n", section.name, section.layers);
  out += fmt::format("  {:<34} {:<8} {:>10} {:>10} {:>9} {:>8} {:>10}  {}\n", "operation", "pass",
                     "FLOPs", "bytes", "FLOP/B", "bound", "roofline", "forward FLOPs");
  for (const RooflineOp& op : section.ops) {
    out += fmt::format("  {:<34} {:<8} {:>10} {:>10} {:>9.1f} {:>8} {:>10}  {}\n", op.op, op.pass,
                       si(op.flops), si(op.bytes) + "B", op.intensity, bound_name(op.bound),
                       seconds(op.roofline_s), op.pass == "forward" ? op.formula : "");
  }
  out += fmt::format("  {:<34} {:<8} {:>10} {:>10} {:>9.1f} {:>8} {:>10}\n", "total", "both",
                     si(section.flops), si(section.bytes) + "B",
                     section.bytes > 0 ? section.flops / section.bytes : 0, "",
                     seconds(section.roofline_s));
}

void append_step_time(std::string& out, const StepTime& t, const Cluster& c) {
  out += fmt::format(
      "\nStep time ({} GPUs per node, {:g} GB/s NVLink and {:g} GB/s network per GPU)\n",
      c.gpus_per_node, c.intra_node_gbps, c.inter_node_gbps);
  const std::pair<const char*, double> parts[] = {
      {"compute (forward + backward)", t.compute_s},
      {"recomputation", t.recompute_s},
      {"TP/SP communication", t.tp_comm_s},
      {"CP communication (exposed)", t.cp_comm_s},
      {"EP all-to-all", t.ep_comm_s},
      {"waiting for the CPU", t.cpu_bound_s},
      {"pipeline bubble and sends", t.pp_bubble_s},
      {"DP communication (exposed)", t.dp_comm_exposed_s},
      {"optimizer step", t.optimizer_s},
      {"offload (exposed, CPU step)", t.offload_s},
  };
  for (const auto& [name, value] : parts)
    out += fmt::format("  {:<30} {:>10}  {:>5.1f}%\n", name, seconds(value),
                       t.step_time_s > 0 ? 100 * value / t.step_time_s : 0);
  out += fmt::format("  {:<30} {:>10}\n", "step", seconds(t.step_time_s));
  out += fmt::format("  {:<30} {:>10.0f}\n", "tokens/s per GPU", t.tokens_per_s_per_gpu);
  out += fmt::format("  {:<30} {:>9.1f}%\n", "MFU", 100 * t.mfu);
}

}  // namespace

nlohmann::json step_time_to_json(const StepTime& t) {
  return {{"compute_s", t.compute_s},
          {"recompute_s", t.recompute_s},
          {"tp_comm_s", t.tp_comm_s},
          {"cp_comm_s", t.cp_comm_s},
          {"ep_comm_s", t.ep_comm_s},
          {"cpu_bound_s", t.cpu_bound_s},
          {"pp_bubble_s", t.pp_bubble_s},
          {"dp_comm_exposed_s", t.dp_comm_exposed_s},
          {"optimizer_s", t.optimizer_s},
          {"offload_s", t.offload_s},
          {"step_time_s", t.step_time_s},
          {"tokens_per_s_per_gpu", t.tokens_per_s_per_gpu},
          {"mfu", t.mfu}};
}

nlohmann::json roofline_to_json(const Roofline& r, const StepTime& step, const Cluster& cluster) {
  nlohmann::json out;
  out["gpu"] = {{"id", r.gpu},
                {"compute_dtype", std::string(dtype_name(r.compute_dtype))},
                {"matmul_tflops", r.matmul_tflops},
                {"attention_tflops", r.attention_tflops},
                {"vector_tflops", r.vector_tflops},
                {"hbm_gbps", r.hbm_gbps},
                {"matmul_ridge", r.matmul_ridge},
                {"attention_ridge", r.attention_ridge},
                {"vector_ridge", r.vector_ridge}};
  out["cluster"] = {
      {"gpus_per_node", cluster.gpus_per_node},       {"intra_node_gbps", cluster.intra_node_gbps},
      {"inter_node_gbps", cluster.inter_node_gbps},   {"host_link_gbps", cluster.host_link_gbps},
      {"host_memory_gbps", cluster.host_memory_gbps}, {"nvme_gbps", cluster.nvme_gbps}};
  out["tokens_per_microbatch"] = r.tokens;
  out["sections"] = nlohmann::json::array();
  for (const RooflineSection& section : r.sections) {
    nlohmann::json ops = nlohmann::json::array();
    for (const RooflineOp& op : section.ops)
      ops.push_back({{"op", op.op},
                     {"kind", op.kind},
                     {"pass", op.pass},
                     {"formula", op.formula},
                     {"flops", op.flops},
                     {"bytes", op.bytes},
                     {"intensity", op.intensity},
                     {"ridge", op.ridge},
                     {"bound", std::string(bound_name(op.bound))},
                     {"roofline_s", op.roofline_s}});
    out["sections"].push_back({{"name", section.name},
                               {"layers", section.layers},
                               {"flops", section.flops},
                               {"bytes", section.bytes},
                               {"roofline_s", section.roofline_s},
                               {"ops", ops}});
  }
  out["step_time"] = step_time_to_json(step);
  return out;
}

nlohmann::json settings_roofline_to_json(const SettingsRoofline& result) {
  nlohmann::json out = roofline_to_json(result.roofline, result.step, result.cluster);
  out["warnings"] = result.resolved.warnings;
  return out;
}

std::string render_roofline_table(const Scenario& s, const Roofline& r, const StepTime& step,
                                  const Cluster& cluster) {
  std::string out = fmt::format(
      "Roofline on {} ({}): {:g} TFLOP/s matmul, {:g} TFLOP/s element-wise, {:g} GB/s HBM; "
      "ridge {:.0f} FLOP/B (matmul), {:.1f} FLOP/B (element-wise)\n",
      r.gpu, dtype_name(r.compute_dtype), r.matmul_tflops, r.vector_tflops, r.hbm_gbps,
      r.matmul_ridge, r.vector_ridge);
  out += layout_line(s) + "\n";
  out += fmt::format(
      "Per GPU, one microbatch: n = s·b/cp = {:.0f} tokens; attention FLOPs count the causal "
      "mask (half of 4·s²·h)\n",
      r.tokens);
  for (const RooflineSection& section : r.sections) append_section(out, section);
  append_step_time(out, step, cluster);
  return out;
}

std::string render_roofline_csv(const Roofline& r) {
  std::string out =
      "section,layers,op,kind,pass,flops,bytes,intensity,ridge,bound,roofline_s,formula\n";
  for (const RooflineSection& section : r.sections)
    for (const RooflineOp& op : section.ops)
      out += fmt::format("{},{},{},{},{},{:.6g},{:.6g},{:.6g},{:.6g},{},{:.6g},{}\n",
                         csv_field(section.name), section.layers, csv_field(op.op), op.kind,
                         op.pass, op.flops, op.bytes, op.intensity, op.ridge, bound_name(op.bound),
                         op.roofline_s, csv_field(op.formula));
  return out;
}

}  // namespace vramplan
