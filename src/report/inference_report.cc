// Reports of an inference estimate: JSON with stable keys, a terminal table, markdown and CSV.
#include "vramplan/report/inference_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "report/text_layout.h"
#include "vramplan/perf/hardware.h"
#include "vramplan/report/report.h"
#include "vramplan/serving/inference.h"

namespace vramplan {
namespace {

nlohmann::json decode_reads_json(const InferenceEstimate& e) {
  if (!e.decode_weight_reads) return nullptr;
  const InferenceEstimate::DecodeReads& r = *e.decode_weight_reads;
  return {{"gpu", r.gpu}, {"hbm_s", r.hbm_s}, {"host_link_s", r.host_link_s}};
}

using namespace textfmt;

using nlohmann::json;

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

std::string gib(int64_t bytes) { return fmt::format("{:.2f}", static_cast<double>(bytes) / kGiB); }

json weights_json(const ModuleFormats& f) {
  json out = {{"base", dtype_name(f.base)}};
  for (size_t i = 0; i < kModuleClassNames.size(); ++i) {
    const WeightQuant& q = f.by_class[i];
    json one = {{"format", weight_format_name(q.format)}, {"bits_per_weight", bits_per_weight(q)}};
    if (q.format == WeightFormat::kInt4) one["group_size"] = q.group_size;
    if (q.format == WeightFormat::kNf4) one["double_quant"] = q.double_quant;
    out[kModuleClassNames[i]] = std::move(one);
  }
  return out;
}

json optional_number(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

json offload_json(const ServingOffload& o) {
  return {{"cpu_offload_bytes", o.cpu_offload_bytes}, {"swap_space_bytes", o.swap_space_bytes},
          {"kv_offload_bytes", o.kv_offload_bytes},   {"hierarchical_cache", o.hierarchical_cache},
          {"hicache_ratio", o.hicache_ratio},         {"hicache_bytes", o.hicache_bytes}};
}

json scenario_json(const InferenceScenario& s, const InferenceEstimate& e) {
  const InferenceOverheads& o = s.overheads;
  json out = {{"model", {{"name", s.model.name}, {"model_type", s.model.model_type}}},
              {"context", e.context},
              {"batch", s.batch},
              {"kv_dtype", kv_dtype_name(s.kv_dtype)},
              {"block_size", s.block_size},
              {"weights", weights_json(s.weights)},
              {"tp", s.tp},
              {"pp", s.pp},
              {"ep", s.ep},
              {"dp", s.dp},
              {"world_size", s.world_size()},
              {"engine", engine_name(s.engine)},
              {"gpu_memory_utilization", optional_number(s.gpu_memory_utilization)},
              {"mem_fraction_static", optional_number(s.mem_fraction_static)},
              {"gpu_total_bytes", s.gpu_total_bytes},
              {"max_num_batched_tokens", s.max_num_batched_tokens},
              {"max_num_seqs", s.max_num_seqs},
              {"sampler_bytes_per_logit", s.sampler_bytes_per_logit},
              {"cuda_graphs", s.cuda_graphs},
              {"cuda_graph_in_budget", s.cuda_graph_in_budget},
              {"overheads",
               {{"cuda_context_bytes", o.cuda_context_bytes},
                {"nccl_bytes_per_group", o.nccl_bytes_per_group},
                {"non_torch_bytes", o.non_torch_bytes},
                {"cuda_graph_bytes", o.cuda_graph_bytes}}},
              {"offload", offload_json(s.offload)}};
  if (s.images.count > 0)
    out["images"] = {
        {"count", s.images.count}, {"width", s.images.width}, {"height", s.images.height}};
  return out;
}

json tiers_json(const std::vector<KvTier>& tiers) {
  json out = json::array();
  for (const KvTier& t : tiers)
    out.push_back({{"tier", t.tier},
                   {"bytes", t.bytes},
                   {"tokens", t.tokens},
                   {"formula", t.formula},
                   {"source", t.source}});
  return out;
}

std::string tier_text(const KvTier& t) {
  return fmt::format("{}: {} tokens in {} GiB", t.tier, t.tokens, gib(t.bytes));
}

json capacity_json(const Capacity& c) {
  return {{"engine", engine_name(c.engine)},
          {"fraction", c.fraction},
          {"total_bytes", c.total_bytes},
          {"requested_bytes", c.requested_bytes},
          {"kv_budget_bytes", c.kv_budget_bytes},
          {"shortfall_bytes", c.shortfall_bytes},
          {"num_blocks", c.num_blocks},
          {"max_kv_tokens", c.max_kv_tokens},
          {"max_sequences", c.max_sequences},
          {"formula", c.formula},
          {"source", c.source}};
}

std::string rank_name(const InferenceScenario& s, int64_t rank) {
  if (s.pp == 1) return "all layers";
  std::string name = fmt::format("pipeline rank {} of {}", rank, s.pp);
  if (rank == 0) name += " (first)";
  if (rank == s.pp - 1) name += " (last)";
  return name;
}

std::string weights_text(const ModuleFormats& f) {
  std::string text = fmt::format("base {}", dtype_name(f.base));
  for (size_t i = 0; i < kModuleClassNames.size(); ++i) {
    const WeightQuant& q = f.by_class[i];
    text += fmt::format(" · {} {}", kModuleClassNames[i], weight_format_name(q.format));
    if (q.format == WeightFormat::kInt4) text += fmt::format(" (group {})", q.group_size);
  }
  return text;
}

std::string layout_text(const InferenceScenario& s) {
  std::string text = fmt::format("tp {} · pp {}", s.tp, s.pp);
  if (s.ep > 1) text += fmt::format(" · ep {}", s.ep);
  if (s.dp > 1) text += fmt::format(" · dp {}", s.dp);
  return text + fmt::format(" = {} GPUs", s.world_size());
}

std::string serving_text(const InferenceScenario& s, const InferenceEstimate& e) {
  return fmt::format("context {} · batch {} · KV {} · blocks of {} tokens", e.context, s.batch,
                     kv_dtype_name(s.kv_dtype), s.block_size);
}

std::string engine_text(const InferenceScenario& s) {
  std::string text = fmt::format("{} · profile: {} batched tokens, {} sequences",
                                 engine_name(s.engine), s.max_num_batched_tokens, s.max_num_seqs);
  text += s.cuda_graphs ? " · CUDA graphs" : " · eager (no CUDA graphs)";
  return text;
}

std::string kv_text(const InferenceEstimate& e) {
  return fmt::format("{} B per token · {} per sequence of {} tokens · {} for the batch",
                     e.kv_bytes_per_token, format_bytes(e.kv_bytes_per_sequence), e.context,
                     format_bytes(e.kv_cache_bytes));
}

std::string capacity_text(const Capacity& c, int64_t context) {
  return fmt::format("{} KV tokens ({} blocks) · {} sequences of {} tokens", c.max_kv_tokens,
                     c.num_blocks, c.max_sequences, context);
}

struct Header {
  std::string label, value;
};

std::vector<Header> header_fields(const InferenceScenario& s, const InferenceEstimate& e) {
  std::vector<Header> fields = {
      {"params",
       fmt::format("{:.2f} B total, {:.2f} B active", static_cast<double>(e.parameters.total) / 1e9,
                   static_cast<double>(e.parameters.active) / 1e9)},
      {"weights", weights_text(s.weights)},
      {"layout", layout_text(s)},
      {"serving", serving_text(s, e)},
      {"engine", engine_text(s)},
      {"KV cache", kv_text(e)},
  };
  return fields;
}

}  // namespace

json inference_to_json(const InferenceScenario& s, const InferenceEstimate& e) {
  json rows = json::array();
  for (const Row& r : e.rows)
    rows.push_back({{"component", r.component},
                    {"bytes", r.bytes},
                    {"counts_toward", counts_toward_name(r.counts_toward)},
                    {"formula", r.formula},
                    {"source", r.source}});
  json ranks = json::array();
  for (const InferenceRank& r : e.ranks)
    ranks.push_back({{"rank", r.rank},
                     {"name", rank_name(s, r.rank)},
                     {"layers", r.layers},
                     {"weights_bytes", r.weights_bytes},
                     {"kv_bytes_per_token", r.kv_bytes_per_token},
                     {"kv_bytes_per_sequence", r.kv_bytes_per_sequence},
                     {"activation_bytes", r.activation_bytes},
                     {"device_bytes", r.device_bytes},
                     {"host_bytes", r.host_bytes},
                     {"max_kv_tokens", r.max_kv_tokens >= 0 ? json(r.max_kv_tokens) : json()}});
  json fit = json::array();
  for (const Fit& f : e.fit) fit.push_back(fit_json(f));
  return {{"scenario", scenario_json(s, e)},
          {"parameters", {{"total", e.parameters.total}, {"active", e.parameters.active}}},
          {"weights_bytes", e.weights_bytes},
          {"kv_bytes_per_token", e.kv_bytes_per_token},
          {"kv_bytes_per_sequence", e.kv_bytes_per_sequence},
          {"kv_cache_bytes", e.kv_cache_bytes},
          {"activation_bytes", e.activation_bytes},
          {"allocated_bytes", e.allocated_bytes},
          {"reserved_bytes", e.reserved_bytes},
          {"device_bytes", e.device_bytes},
          {"host_bytes", e.host_bytes},
          {"kv_tiers", tiers_json(e.kv_tiers)},
          {"decode_weight_reads", decode_reads_json(e)},
          {"max_kv_tokens", e.capacity ? json(e.capacity->max_kv_tokens) : json()},
          {"max_sequences", e.capacity ? json(e.capacity->max_sequences) : json()},
          {"capacity", e.capacity ? capacity_json(*e.capacity) : json()},
          {"binding_rank", e.binding_rank},
          {"rows", std::move(rows)},
          {"ranks", std::move(ranks)},
          {"fit", std::move(fit)},
          {"warnings", e.warnings}};
}

std::string render_inference_table(const InferenceScenario& s, const InferenceEstimate& e,
                                   const TableOptions& options) {
  const int width = std::max(options.width, 60);
  auto bold = [&](std::string_view t) {
    return options.color ? fmt::format("\x1b[1m{}\x1b[0m", t) : std::string(t);
  };
  std::string out;
  auto line = [&](std::string_view t = "") {
    out += t;
    out += '\n';
  };
  auto field = [&](const std::string& label, const std::string& value) {
    const std::vector<std::string> lines = wrap_at_spaces(value, width - 12);
    for (size_t i = 0; i < lines.size(); ++i)
      line(fmt::format("  {}{}", pad_right(i == 0 ? label : "", 10), lines[i]));
  };
  const std::string title = s.model.model_type.empty()
                                ? s.model.name
                                : fmt::format("{} ({})", s.model.name, s.model.model_type);
  line(bold(fmt::format("vramplan · {} · serving memory per GPU", title)));
  for (const Header& h : header_fields(s, e)) field(h.label, h.value);

  int comp_w = display_width("total allocated");
  for (const Row& r : e.rows) comp_w = std::min(34, std::max(comp_w, display_width(r.component)));
  const int formula_col = 2 + comp_w + 2 + 9 + 2 + 10 + 2;
  const int formula_w = std::max(24, width - formula_col);
  auto table_row = [&](std::string_view component, std::string_view amount, std::string_view toward,
                       std::string_view formula) {
    const std::vector<std::string> lines = wrap_at_spaces(formula, formula_w);
    std::string first = fmt::format("  {}  {}  {}  {}", pad_right(component, comp_w),
                                    pad_left(amount, 9), pad_right(toward, 10), lines[0]);
    line(first.substr(0, first.find_last_not_of(' ') + 1));
    for (size_t i = 1; i < lines.size(); ++i) line(std::string(formula_col, ' ') + lines[i]);
  };
  line();
  line(bold(fmt::format("{} · one GPU", rank_name(s, e.binding_rank))));
  table_row("component", "GiB", "counts to", "formula");
  for (const Row& r : e.rows) {
    const std::string amount =
        r.bytes > 0 && static_cast<double>(r.bytes) < kGiB / 200 ? "<0.01" : gib(r.bytes);
    table_row(r.component, amount, counts_toward_name(r.counts_toward), r.formula);
  }
  line("  " + std::string(static_cast<size_t>(comp_w + 11), '-'));
  table_row("total allocated", gib(e.allocated_bytes), "", "torch.cuda.max_memory_allocated()");
  table_row("total reserved", gib(e.reserved_bytes), "", "+ CUDA graph pool: memory_reserved()");
  table_row("total device", gib(e.device_bytes), "", "+ context, NCCL, non-torch: nvidia-smi");
  if (e.host_bytes > 0)
    table_row("total host", gib(e.host_bytes), "",
              "the rows counting toward host: one GPU's process (docs/offload.md)");

  if (e.capacity) {
    const Capacity& c = *e.capacity;
    line();
    line(bold(fmt::format("capacity · {} at {:.2f}", engine_name(c.engine), c.fraction)));
    for (const std::string& l : wrap_at_spaces(capacity_text(c, e.context), width - 2))
      line("  " + l);
    for (const std::string& l : wrap_at_spaces(c.formula, width - 2)) line("  " + l);
  }
  if (e.kv_tiers.size() > 1) {
    line();
    line(bold("KV cache tiers · one GPU"));
    for (const KvTier& t : e.kv_tiers) line("  " + tier_text(t));
  }
  if (e.host_bytes > 0) {
    line();
    line(bold(fmt::format("host memory · {} GiB per GPU", gib(e.host_bytes))));
    if (e.fit.empty() || !e.fit.front().host_checked) {
      line("  node RAM not known: pass --host-memory-gib to check it");
    } else {
      const Fit& f = e.fit.front();
      line(fmt::format("  {} GPUs × {} GiB = {} GiB of {} GiB node RAM ({}): {:.1f}%  {}",
                       f.gpus_per_node, gib(e.host_bytes), gib(f.host_node_bytes),
                       gib(f.host_memory_bytes), f.gpu, f.host_used_fraction * 100,
                       verdict_name(f.host_verdict)));
    }
  }
  if (!e.fit.empty()) {
    line();
    line(bold(fmt::format("GPU fit · {} GiB device memory; tight above {:.0f}%",
                          gib(e.device_bytes), kTightFraction * 100)));
    line(fmt::format("  {}  {}  {}  {}", pad_right("gpu", 16), pad_left("usable GiB", 10),
                     pad_left("used", 7), "verdict"));
    for (const Fit& f : e.fit)
      line(fmt::format("  {}  {}  {}  {}", pad_right(f.gpu, 16), pad_left(gib(f.usable_bytes), 10),
                       pad_left(fmt::format("{:.1f}%", f.used_fraction * 100), 7),
                       verdict_name(f.verdict)));
  }
  if (!e.warnings.empty()) {
    line();
    line(bold("warnings"));
    for (const std::string& w : e.warnings) {
      const std::vector<std::string> lines = wrap_at_spaces(w, width - 4);
      for (size_t i = 0; i < lines.size(); ++i) line((i == 0 ? "  ! " : "    ") + lines[i]);
    }
  }
  return out;
}

std::string render_inference_markdown(const InferenceScenario& s, const InferenceEstimate& e) {
  auto cell = [](std::string_view t) {
    std::string o;
    for (char c : t) o += c == '|' ? std::string("\\|") : std::string(1, c == '\n' ? ' ' : c);
    return o;
  };
  std::string out = fmt::format("# vramplan: serving {}\n\n", cell(s.model.name));
  for (const Header& h : header_fields(s, e))
    out += fmt::format("- **{}:** {}\n", h.label, cell(h.value));
  out += fmt::format("\n## {} (one GPU)\n\n", cell(rank_name(s, e.binding_rank)));
  out += "| component | GiB | bytes | counts toward | formula | source |\n";
  out += "|---|--:|--:|---|---|---|\n";
  for (const Row& r : e.rows)
    out += fmt::format("| {} | {} | {} | {} | {} | {} |\n", cell(r.component), gib(r.bytes),
                       r.bytes, counts_toward_name(r.counts_toward),
                       r.formula.empty() ? "" : "`" + cell(r.formula) + "`", cell(r.source));
  out += fmt::format("| **total allocated** | **{}** | {} | | | |\n", gib(e.allocated_bytes),
                     e.allocated_bytes);
  out += fmt::format("| **total reserved** | **{}** | {} | | | |\n", gib(e.reserved_bytes),
                     e.reserved_bytes);
  out += fmt::format("| **total device** | **{}** | {} | | | |\n", gib(e.device_bytes),
                     e.device_bytes);
  if (e.host_bytes > 0)
    out += fmt::format("| **total host** | **{}** | {} | | | |\n", gib(e.host_bytes), e.host_bytes);
  if (e.kv_tiers.size() > 1) {
    out += "\n## KV cache tiers (one GPU)\n\n";
    for (const KvTier& t : e.kv_tiers) out += fmt::format("- {}\n", cell(tier_text(t)));
  }
  if (e.capacity) {
    const Capacity& c = *e.capacity;
    out += fmt::format("\n## Capacity ({} at {:.2f})\n\n{}\n\n`{}`\n", engine_name(c.engine),
                       c.fraction, cell(capacity_text(c, e.context)), cell(c.formula));
  }
  if (!e.fit.empty()) {
    out += "\n## GPU fit\n\n| gpu | name | usable GiB | used | verdict |\n|---|---|--:|--:|---|\n";
    for (const Fit& f : e.fit)
      out += fmt::format("| {} | {} | {} | {:.1f}% | {} |\n", cell(f.gpu), cell(f.name),
                         gib(f.usable_bytes), f.used_fraction * 100, verdict_name(f.verdict));
  }
  if (!e.warnings.empty()) {
    out += "\n## Warnings\n\n";
    for (const std::string& w : e.warnings) out += fmt::format("- {}\n", cell(w));
  }
  return out;
}

std::string render_inference_csv(const InferenceEstimate& e) {
  auto field = [](std::string_view t) {
    if (t.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(t);
    std::string o = "\"";
    for (char c : t) o += c == '"' ? std::string("\"\"") : std::string(1, c);
    return o + "\"";
  };
  std::string out = "component,bytes,gib,counts_toward,formula,source\n";
  for (const Row& r : e.rows)
    out += fmt::format("{},{},{:.4f},{},{},{}\n", field(r.component), r.bytes,
                       static_cast<double>(r.bytes) / kGiB, counts_toward_name(r.counts_toward),
                       field(r.formula), field(r.source));
  return out;
}

}  // namespace vramplan
