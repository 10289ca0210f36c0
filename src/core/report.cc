#include "vramplan/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "vramplan/frameworks.h"
#include "vramplan/hardware.h"

namespace vramplan {
namespace {

using nlohmann::json;

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

std::string_view mlp_name(MlpKind m) { return m == MlpKind::kGated ? "gated" : "plain"; }
std::string_view norm_name(NormKind n) { return n == NormKind::kRmsNorm ? "rmsnorm" : "layernorm"; }
std::string_view attention_name(AttentionKind a) {
  return a == AttentionKind::kStandard ? "standard" : "mla";
}

const StageEstimate* peak_stage(const Estimate& e) {
  return e.peak.stage < e.stages.size() ? &e.stages[e.peak.stage] : nullptr;
}

// ---------------------------------------------------------------------------------------------
// JSON

json parameters_json(const ParamCounts& p) {
  json breakdown = json::array();
  for (const ParamComponent& c : p.breakdown) {
    breakdown.push_back({{"name", c.name}, {"count", c.count}});
  }
  return {{"total", p.total},     {"active", p.active}, {"embedding", p.embedding},
          {"lm_head", p.lm_head}, {"mtp", p.mtp_total}, {"breakdown", std::move(breakdown)}};
}

// Layer indices where pred holds: the MoE or sliding-window layers, compactly.
template <class T, class Pred>
json indices_where(const std::vector<T>& layers, Pred pred) {
  json ids = json::array();
  for (std::size_t i = 0; i < layers.size(); ++i) {
    if (pred(layers[i])) ids.push_back(i);
  }
  return ids;
}

json model_json(const ModelConfig& m) {
  const MlaConfig& mla = m.mla;
  const MoeConfig& moe = m.moe;
  return {
      {"name", m.name},
      {"model_type", m.model_type},
      {"hidden", m.hidden},
      {"num_layers", m.num_layers},
      {"num_heads", m.num_heads},
      {"num_kv_heads", m.num_kv_heads},
      {"head_dim", m.head_dim},
      {"ffn", m.ffn},
      {"vocab", m.vocab},
      {"max_position_embeddings", m.max_position_embeddings},
      {"tied_embeddings", m.tied_embeddings},
      {"mlp", mlp_name(m.mlp)},
      {"norm", norm_name(m.norm)},
      {"norms_per_layer", m.norms_per_layer},
      {"final_norm", m.final_norm},
      {"learned_position_embeddings", m.learned_position_embeddings},
      {"qkv_bias", m.qkv_bias},
      {"attn_out_bias", m.attn_out_bias},
      {"mlp_bias", m.mlp_bias},
      {"qk_norm", m.qk_norm},
      {"qk_norm_full_width", m.qk_norm_full_width},
      {"attention_sinks", m.attention_sinks},
      {"attention", attention_name(m.attention)},
      {"mla",
       {{"q_lora_rank", mla.q_lora_rank},
        {"kv_lora_rank", mla.kv_lora_rank},
        {"qk_nope_head_dim", mla.qk_nope_head_dim},
        {"qk_rope_head_dim", mla.qk_rope_head_dim},
        {"v_head_dim", mla.v_head_dim}}},
      {"moe",
       {{"num_experts", moe.num_experts},
        {"top_k", moe.top_k},
        {"expert_ffn", moe.expert_ffn},
        {"shared_experts", moe.shared_experts},
        {"shared_expert_ffn", moe.shared_expert_ffn},
        {"router_bias", moe.router_bias},
        {"expert_bias", moe.expert_bias},
        {"router_correction_bias", moe.router_correction_bias}}},
      {"moe_layers", indices_where(m.moe_layers, [](bool moe_layer) { return moe_layer; })},
      {"sliding_layers",
       indices_where(m.layer_attention,
                     [](LayerAttention a) { return a == LayerAttention::kSliding; })},
      {"sliding_window", m.sliding_window},
      {"mtp_layers", m.mtp_layers},
  };
}

json training_json(const Training& t) {
  return {
      {"seq_len", t.seq_len},
      {"micro_batch", t.micro_batch},
      {"global_batch", t.global_batch},
      {"param_dtype", dtype_name(t.param_dtype)},
      {"grad_dtype", dtype_name(t.grad_dtype)},
      {"fp32_grad_accumulation", t.fp32_grad_accumulation},
      {"reduce_dtype", dtype_name(t.reduce_dtype)},
      {"master_weights", t.master_weights},
      {"optimizer_state_dtype", dtype_name(t.optimizer_state_dtype)},
      {"activation_dtype", dtype_name(t.activation_dtype)},
      {"optimizer", optimizer_name(t.optimizer)},
      {"recompute", recompute_name(t.recompute)},
      {"recompute_layers", t.recompute_layers},
      {"flash_attention", t.flash_attention},
      {"dropout", t.dropout},
      {"moe_grouped_gemm", t.moe_grouped_gemm},
      {"fp8", fp8_recipe_name(t.fp8)},
      {"fp8_params", t.fp8_params},
  };
}

json parallel_json(const Parallelism& p) {
  return {
      {"tp", p.tp},
      {"sequence_parallel", p.sequence_parallel},
      {"pp", p.pp},
      {"vpp", p.vpp},
      {"schedule", schedule_name(p.schedule)},
      {"dp", p.dp},
      {"cp", p.cp},
      {"ep", p.ep},
      {"etp", p.etp},
      {"zero", p.zero},
      {"fsdp", fsdp_name(p.fsdp)},
      {"fsdp_shard_group", p.fsdp_shard_group},
      {"distributed_optimizer", p.distributed_optimizer},
      {"fsdp_prefetch", p.fsdp_prefetch},
      {"first_stage_layers", p.first_stage_layers},
      {"last_stage_layers", p.last_stage_layers},
      {"embedding_as_stage", p.embedding_as_stage},
      {"loss_as_stage", p.loss_as_stage},
      {"pipeline_split", p.compute_balanced_split ? "compute"
                         : p.balanced_split       ? "balanced"
                                                  : "even"},
      {"world_size", p.world_size()},
  };
}

json conventions_json(const Scenario& s) {
  const Conventions& c = s.conventions;
  return {{"framework", s.framework_id < 0 ? "none" : framework_name(Framework(s.framework_id))},
          {"vocab_pad_multiple", c.vocab_pad_multiple},
          {"gated_mlp_tensors", c.gated_mlp_tensors},
          {"loss_bytes_per_logit", c.loss_bytes_per_logit},
          {"sp_saves_gathered_inputs", c.sp_saves_gathered_inputs},
          {"ddp_bucket_copy", c.ddp_bucket_copy},
          {"zero3_live_params", c.zero3_live_params},
          {"autocast_weight_cache", c.autocast_weight_cache},
          {"comm_bucket_elements", c.comm_bucket_elements},
          {"optimizer_foreach_temporaries", c.optimizer_foreach_temporaries},
          {"lazy_gradients", c.lazy_gradients},
          {"fsdp_mixed_precision", c.fsdp_mixed_precision},
          {"pipeline_keeps_stage_outputs", c.pipeline_keeps_stage_outputs},
          {"mha_keeps_packed_qkv", c.mha_keeps_packed_qkv},
          {"tp_allgather_buffer", c.tp_allgather_buffer},
          {"pipeline_fsdp_unsharded", c.pipeline_fsdp_unsharded},
          {"attention_scores_buffer", c.attention_scores_buffer},
          {"fp32_grad_copy", c.fp32_grad_copy},
          {"compute_balanced_split", s.parallel.compute_balanced_split}};
}

json scenario_json(const Scenario& s) {
  const Overheads& o = s.overheads;
  return {{"model", model_json(s.model)},
          {"conventions", conventions_json(s)},
          {"training", training_json(s.training)},
          {"parallel", parallel_json(s.parallel)},
          {"overheads",
           {{"cuda_context_bytes", o.cuda_context_bytes},
            {"nccl_bytes_per_group", o.nccl_bytes_per_group},
            {"gemm_workspace_bytes", o.gemm_workspace_bytes},
            {"allocator_fraction", o.allocator_fraction},
            {"per_layer_cuda_graphs", o.per_layer_cuda_graphs}}}};
}

json phases_json(const StageEstimate& stage) {
  json phases = json::array();
  for (const Phase& p : stage.phases)
    phases.push_back({{"name", p.name}, {"allocated_bytes", p.allocated_bytes}});
  return phases;
}

json stage_json(const StageEstimate& stage) {
  json rows = json::array();
  for (const Row& r : stage.rows) {
    rows.push_back({{"component", r.component},
                    {"bytes", r.bytes},
                    {"counts_toward", counts_toward_name(r.counts_toward)},
                    {"bytes_low", r.bytes_low},
                    {"bytes_high", r.bytes_high},
                    {"formula", r.formula},
                    {"source", r.source}});
  }
  return {{"name", stage.name},
          {"ranks", stage.ranks},
          {"layers", stage.layers},
          {"layer_ids", stage.layer_ids},
          {"in_flight_microbatches", stage.in_flight_microbatches},
          {"rows", std::move(rows)},
          {"allocated_bytes", stage.allocated_bytes},
          {"reserved_bytes", stage.reserved_bytes},
          {"device_bytes", stage.device_bytes},
          {"allocated_bytes_low", stage.allocated_bytes_low},
          {"allocated_bytes_high", stage.allocated_bytes_high},
          {"reserved_bytes_low", stage.reserved_bytes_low},
          {"reserved_bytes_high", stage.reserved_bytes_high},
          {"device_bytes_low", stage.device_bytes_low},
          {"device_bytes_high", stage.device_bytes_high},
          {"phases", phases_json(stage)},
          {"peak_phase", stage.peak_phase}};
}

json peak_object(const Estimate& e) {
  const StageEstimate* stage = peak_stage(e);
  return {{"stage", stage ? stage->name : std::string()},
          {"stage_index", e.peak.stage},
          {"phase", stage ? stage->peak_phase : std::string()},
          {"allocated_bytes", e.peak.allocated_bytes},
          {"reserved_bytes", e.peak.reserved_bytes},
          {"device_bytes", e.peak.device_bytes},
          {"allocated_bytes_low", e.peak.allocated_bytes_low},
          {"allocated_bytes_high", e.peak.allocated_bytes_high},
          {"reserved_bytes_low", e.peak.reserved_bytes_low},
          {"reserved_bytes_high", e.peak.reserved_bytes_high},
          {"device_bytes_low", e.peak.device_bytes_low},
          {"device_bytes_high", e.peak.device_bytes_high}};
}

json fit_json(const Fit& f) {
  return {{"gpu", f.gpu},
          {"name", f.name},
          {"nominal_bytes", f.nominal_bytes},
          {"usable_bytes", f.usable_bytes},
          {"used_fraction", f.used_fraction},
          {"verdict", verdict_name(f.verdict)}};
}

// ---------------------------------------------------------------------------------------------
// Text shared by the table and the markdown.

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
  if (t.master_weights) text += ", fp32 master";
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

// What each stage total is measured by, so that a user compares like with like.
struct Total {
  std::string_view name;
  int64_t StageEstimate::*bytes;
  std::string_view measured_by;
};
constexpr Total kTotals[] = {
    {"allocated", &StageEstimate::allocated_bytes, "torch.cuda.max_memory_allocated()"},
    {"reserved", &StageEstimate::reserved_bytes, "+ allocator pool: max_memory_reserved()"},
    {"device", &StageEstimate::device_bytes, "+ CUDA context, NCCL: nvidia-smi used"},
};

// ---------------------------------------------------------------------------------------------
// Terminal layout

// Columns a string takes in a terminal: one per code point (the glyphs used here are narrow).
int display_width(std::string_view s) {
  return static_cast<int>(std::count_if(
      s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

std::string pad_right(std::string_view s, int width) {
  return std::string(s) + std::string(std::max(0, width - display_width(s)), ' ');
}

std::string pad_left(std::string_view s, int width) {
  return std::string(std::max(0, width - display_width(s)), ' ') + std::string(s);
}

std::string repeat(std::string_view s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

// Bytes taken by the first `columns` columns of s.
std::size_t prefix_bytes(std::string_view s, int columns) {
  std::size_t i = 0;
  for (int seen = 0; i < s.size(); ++i) {
    const bool starts_char = (static_cast<unsigned char>(s[i]) & 0xC0) != 0x80;
    if (starts_char && ++seen > columns) break;
  }
  return i;
}

// The first `width` columns of s, with "…" when cut.
std::string truncate(std::string_view s, int width) {
  if (display_width(s) <= width) return std::string(s);
  return std::string(s.substr(0, prefix_bytes(s, width - 1))) + "…";
}

// Breaks text into lines of at most `width` columns at spaces; words longer than a line are
// split. Formulas are long, and their numbers must survive.
std::vector<std::string> wrap(std::string_view text, int width) {
  width = std::max(width, 1);
  std::vector<std::string> lines;
  std::string line;
  auto flush = [&] {
    lines.push_back(line);
    line.clear();
  };
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find_first_of(" \t\r\n", pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view word = text.substr(pos, end - pos);
    pos = end + 1;
    if (word.empty()) continue;
    const int needed = display_width(line) + (line.empty() ? 0 : 1) + display_width(word);
    if (!line.empty() && needed > width) flush();
    while (display_width(word) > width) {  // a single word wider than the column
      const std::size_t head = prefix_bytes(word, width);
      lines.emplace_back(word.substr(0, head));
      word.remove_prefix(head);
    }
    if (!line.empty()) line += ' ';
    line += word;
  }
  if (!line.empty() || lines.empty()) flush();
  return lines;
}

class Style {
 public:
  explicit Style(bool color) : color_(color) {}
  std::string bold(std::string_view s) const { return paint(s, "1"); }
  std::string paint(std::string_view s, std::string_view code) const {
    if (!color_) return std::string(s);
    return fmt::format("\x1b[{}m{}\x1b[0m", code, s);
  }
  bool color() const { return color_; }

 private:
  bool color_;
};

// One glyph (or colour) per component, the same in every stage's bar and in the legend.
class Palette {
 public:
  Palette(const Estimate& e, const Style& style) : style_(style) {
    for (const StageEstimate& stage : e.stages) {
      for (const Row& row : stage.rows) {
        if (std::find(names_.begin(), names_.end(), row.component) == names_.end()) {
          names_.push_back(row.component);
        }
      }
    }
  }
  const std::vector<std::string>& names() const { return names_; }
  // n cells of the component's glyph.
  std::string cells(std::string_view component, int n) const {
    const std::size_t i = index(component);
    if (n <= 0) return "";
    if (!style_.color()) return repeat(kGlyphs[i % std::size(kGlyphs)], n);
    // Colours first; past 14 components fall back to shading so neighbours still differ.
    const char* glyph = i < std::size(kColors) ? "█" : kGlyphs[(i / std::size(kColors)) % 4 + 1];
    return style_.paint(repeat(glyph, n), kColors[i % std::size(kColors)]);
  }

 private:
  // Ordered so that neighbours in a bar (consecutive rows) contrast.
  static constexpr const char* kGlyphs[] = {"█", "░", "▓", "▚", "▒", "▄", "▞",
                                            "▀", "▙", "▐", "▜", "▌", "▟", "▛"};
  static constexpr const char* kColors[] = {"34", "32", "33", "35", "36", "31", "94",
                                            "92", "93", "95", "96", "91", "37", "90"};
  std::size_t index(std::string_view component) const {
    return static_cast<std::size_t>(std::find(names_.begin(), names_.end(), component) -
                                    names_.begin());
  }
  const Style& style_;
  std::vector<std::string> names_;
};

class TableWriter {
 public:
  TableWriter(const Scenario& s, const Estimate& e, const TableOptions& o)
      : scenario_(s),
        estimate_(e),
        width_(std::max(o.width, 60)),  // narrower leaves no room for the formula column
        style_(o.color),
        palette_(e, style_) {}

  std::string render() {
    header();
    for (const StageEstimate& stage : estimate_.stages) stage_table(stage);
    bars();
    peak();
    fits();
    warnings();
    return std::move(out_);
  }

 private:
  static constexpr int kIndent = 2;
  static constexpr int kGibWidth = 9;
  static constexpr int kCountsWidth = 13;
  static constexpr int kLabelWidth = 10;

  void line(std::string_view text = "") {
    out_ += text;
    out_ += '\n';
  }

  // A blank line, then the title in bold, wrapped with a hanging indent.
  void section(std::string_view title) {
    line();
    const std::vector<std::string> lines = wrap(title, width_ - kIndent);
    for (std::size_t i = 0; i < lines.size(); ++i) {
      line(style_.bold((i == 0 ? "" : std::string(kIndent, ' ')) + lines[i]));
    }
  }

  // "  label     value", the value wrapped under itself.
  void field(std::string_view label, std::string_view value) {
    const std::vector<std::string> lines = wrap(value, width_ - kIndent - kLabelWidth);
    for (std::size_t i = 0; i < lines.size(); ++i) {
      line(fmt::format("{}{}{}", std::string(kIndent, ' '),
                       pad_right(i == 0 ? label : "", kLabelWidth), lines[i]));
    }
  }

  void header() {
    line(style_.bold(
        fmt::format("vramplan · {} · training memory per GPU", model_title(scenario_.model))));
    field("params", parameters_text(estimate_.parameters));
    field("layout", layout_text(scenario_.parallel));
    field("sharding", sharding_text(scenario_.parallel));
    field("batch", batch_text(scenario_.training, scenario_.parallel, estimate_));
    field("training", training_text(scenario_.training));
  }

  int component_width() const {
    int w = display_width("total allocated");
    for (const StageEstimate& stage : estimate_.stages) {
      for (const Row& row : stage.rows) w = std::max(w, display_width(row.component));
    }
    return std::min(w, 28);
  }

  void table_row(int comp_w, std::string_view component, std::string_view gib_text,
                 std::string_view counts, std::string_view formula) {
    const int formula_col = kIndent + comp_w + 2 + kGibWidth + 2 + kCountsWidth + 2;
    const int formula_w = std::max(24, width_ - formula_col);
    const std::vector<std::string> lines = wrap(formula, formula_w);
    std::string first =
        fmt::format("{}{}  {}  {}  {}", std::string(kIndent, ' '),
                    pad_right(truncate(component, comp_w), comp_w), pad_left(gib_text, kGibWidth),
                    pad_right(counts, kCountsWidth), lines[0]);
    line(std::string_view(first).substr(0, first.find_last_not_of(' ') + 1));
    for (std::size_t i = 1; i < lines.size(); ++i) {
      line(std::string(formula_col, ' ') + lines[i]);
    }
  }

  void stage_table(const StageEstimate& stage) {
    // Name and details on one line when they fit, else the details below the name.
    const std::string details = stage_details(stage);
    const std::string title = fmt::format("{} · {}", stage.name, details);
    if (display_width(title) <= width_) {
      section(title);
    } else {
      section(stage.name);
      for (const std::string& l : wrap(details, width_ - kIndent)) {
        line(std::string(kIndent, ' ') + l);
      }
    }
    const int comp_w = component_width();
    table_row(comp_w, "component", "GiB", "counts toward", "formula");
    for (const Row& row : stage.rows) {
      const std::string amount = row.bytes > 0 && row.bytes < kGiB / 200 ? "<0.01" : gib(row.bytes);
      table_row(comp_w, row.component, amount, counts_toward_name(row.counts_toward), row.formula);
    }
    line(std::string(kIndent, ' ') + repeat("─", comp_w + 2 + kGibWidth));
    for (const Total& total : kTotals) {
      table_row(comp_w, fmt::format("total {}", total.name), gib(stage.*total.bytes), "",
                total.measured_by);
    }
  }

  int64_t bar_scale() const {
    int64_t scale = 1;
    for (const StageEstimate& stage : estimate_.stages) {
      int64_t sum = 0;
      for (const Row& row : stage.rows) sum += std::max<int64_t>(row.bytes, 0);
      scale = std::max({scale, sum, stage.device_bytes});
    }
    return scale;
  }

  // A stacked bar: each row a run of cells, placed by rounding the running total so the
  // cells always add up to the stage's share of the widest stage.
  std::string bar(const StageEstimate& stage, int cells, int64_t scale) const {
    std::string text;
    int64_t running = 0;
    int drawn = 0;
    for (const Row& row : stage.rows) {
      running += std::max<int64_t>(row.bytes, 0);
      const int end = static_cast<int>(static_cast<double>(running) * cells / scale + 0.5);
      text += palette_.cells(row.component, end - drawn);
      drawn = end;
    }
    return text + std::string(std::max(0, cells - drawn), ' ');
  }

  void bars() {
    if (estimate_.stages.empty()) return;
    int label_w = 0;
    for (const StageEstimate& stage : estimate_.stages) {
      label_w = std::max(label_w, display_width(stage.name));
    }
    label_w = std::min(label_w, 24);
    const int total_w = 11;  // " 123.45 GiB"
    const int cells = std::max(10, width_ - kIndent - label_w - 1 - total_w);
    const int64_t scale = bar_scale();
    section(fmt::format("memory by component (one cell ≈ {})",
                        format_bytes(scale / cells > 0 ? scale / cells : 1)));
    for (const StageEstimate& stage : estimate_.stages) {
      line(fmt::format("{}{} {}{}", std::string(kIndent, ' '),
                       pad_right(truncate(stage.name, label_w), label_w), bar(stage, cells, scale),
                       pad_left(gib(stage.device_bytes) + " GiB", total_w)));
    }
    legend();
  }

  void legend() {
    std::string current = std::string(kIndent, ' ');
    int used = kIndent;
    for (const std::string& name : palette_.names()) {
      const int w = 2 + display_width(name) + 2;
      if (used + w > width_ && used > kIndent) {
        line(current.substr(0, current.find_last_not_of(' ') + 1));
        current = std::string(kIndent, ' ');
        used = kIndent;
      }
      current += palette_.cells(name, 1) + " " + name + "  ";
      used += w;
    }
    line(current.substr(0, current.find_last_not_of(' ') + 1));
  }

  void peak() {
    const StageEstimate* stage = peak_stage(estimate_);
    section(fmt::format("peak · {}", stage ? stage->name : "(no stage)"));
    for (const std::string& l : wrap(peak_amounts(estimate_.peak), width_ - kIndent)) {
      line(std::string(kIndent, ' ') + l);
    }
    if (stage) {
      for (const std::string& l : wrap(phases_text(*stage), width_ - kIndent))
        line(std::string(kIndent, ' ') + l);
    }
    line(std::string(kIndent, ' ') +
         "likely: where 80% of validated runs fell (docs/accuracy.md#uncertainty)");
  }

  std::string verdict_text(Verdict v) const {
    const std::string_view name = verdict_name(v);
    switch (v) {
      case Verdict::kFits:
        return style_.paint(name, "32");
      case Verdict::kTight:
        return style_.paint(name, "33");
      case Verdict::kOom:
        return style_.paint(name, "1;31");
    }
    return std::string(name);
  }

  void fits() {
    if (estimate_.fit.empty()) return;
    section(
        fmt::format("GPU fit · {} GiB device memory vs. the driver's total; tight above {:.0f}%",
                    gib(estimate_.peak.device_bytes), kTightFraction * 100));
    int gpu_w = display_width("gpu");
    for (const Fit& f : estimate_.fit) gpu_w = std::max(gpu_w, display_width(f.gpu));
    const std::string indent(kIndent, ' ');
    const int name_w = width_ - (kIndent + gpu_w + 2 + 10 + 2 + 8 + 2 + 7 + 2);
    line(fmt::format("{}{}  {}  {}  {}{}", indent, pad_right("gpu", gpu_w),
                     pad_left("usable GiB", 10), pad_left("used", 8),
                     name_w > 0 ? "verdict  " : "verdict", name_w > 0 ? "name" : ""));
    for (const Fit& f : estimate_.fit) {
      // The verdict is padded before painting: escape codes take no columns.
      const int pad = 7 - display_width(verdict_name(f.verdict));
      line(fmt::format(
          "{}{}  {}  {}  {}{}", indent, pad_right(f.gpu, gpu_w), pad_left(gib(f.usable_bytes), 10),
          pad_left(fmt::format("{:.1f}%", f.used_fraction * 100), 8), verdict_text(f.verdict),
          name_w > 0 ? std::string(pad + 2, ' ') + truncate(f.name, name_w) : ""));
    }
  }

  void warnings() {
    if (estimate_.warnings.empty()) return;
    section("warnings");
    for (const std::string& warning : estimate_.warnings) {
      const std::vector<std::string> lines = wrap(warning, width_ - kIndent - 2);
      for (std::size_t i = 0; i < lines.size(); ++i) {
        line(fmt::format("{}{}{}", std::string(kIndent, ' '),
                         i == 0 ? style_.paint("!", "33") : " ", " " + lines[i]));
      }
    }
  }

  const Scenario& scenario_;
  const Estimate& estimate_;
  int width_;
  Style style_;
  Palette palette_;
  std::string out_;
};

// ---------------------------------------------------------------------------------------------
// Markdown

// A table cell: pipes escaped, line breaks flattened.
std::string md_cell(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '|') {
      out += "\\|";
    } else if (c == '\n' || c == '\r') {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

// Formulas as code spans, so that * and _ in them are not read as emphasis.
std::string md_code(std::string_view s) {
  if (s.empty()) return "";
  const bool has_tick = s.find('`') != std::string_view::npos;
  return has_tick ? fmt::format("`` {} ``", md_cell(s)) : fmt::format("`{}`", md_cell(s));
}

void md_stage(std::string& out, const StageEstimate& stage) {
  out += fmt::format("\n## {}\n\n{}\n\n", md_cell(stage.name), md_cell(stage_details(stage)));
  out += "| component | GiB | bytes | counts toward | formula | source |\n";
  out += "|---|--:|--:|---|---|---|\n";
  for (const Row& r : stage.rows) {
    out += fmt::format("| {} | {} | {} | {} | {} | {} |\n", md_cell(r.component), gib(r.bytes),
                       r.bytes, counts_toward_name(r.counts_toward), md_code(r.formula),
                       md_cell(r.source));
  }
  for (const Total& total : kTotals) {
    const int64_t bytes = stage.*total.bytes;
    out += fmt::format("| **total {}** | **{}** | {} | | {} | |\n", total.name, gib(bytes), bytes,
                       md_cell(total.measured_by));
  }
}

void md_fit(std::string& out, const Estimate& e) {
  if (e.fit.empty()) return;
  out += "\n## GPU fit\n\n| gpu | name | usable GiB | used | verdict |\n|---|---|--:|--:|---|\n";
  for (const Fit& f : e.fit) {
    out += fmt::format("| {} | {} | {} | {:.1f}% | {} |\n", md_cell(f.gpu), md_cell(f.name),
                       gib(f.usable_bytes), f.used_fraction * 100, verdict_name(f.verdict));
  }
}

// ---------------------------------------------------------------------------------------------
// CSV

// RFC 4180: a field holding a comma, quote or line break is quoted, its quotes doubled.
std::string csv_field(std::string_view s) {
  if (s.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(s);
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

}  // namespace

json peak_json(const Estimate& estimate) { return peak_object(estimate); }

nlohmann::json estimate_to_json(const Scenario& scenario, const Estimate& estimate) {
  json stages = json::array();
  for (const StageEstimate& stage : estimate.stages) stages.push_back(stage_json(stage));
  json fit = json::array();
  for (const Fit& f : estimate.fit) fit.push_back(fit_json(f));
  return {{"scenario", scenario_json(scenario)},
          {"parameters", parameters_json(estimate.parameters)},
          {"world_size", estimate.world_size},
          {"microbatches", estimate.microbatches},
          {"stages", std::move(stages)},
          {"peak", peak_object(estimate)},
          {"fit", std::move(fit)},
          {"warnings", estimate.warnings}};
}

std::string render_table(const Scenario& scenario, const Estimate& estimate,
                         const TableOptions& options) {
  return TableWriter(scenario, estimate, options).render();
}

std::string render_markdown(const Scenario& scenario, const Estimate& estimate) {
  std::string out = fmt::format("# vramplan: {}\n\n", md_cell(model_title(scenario.model)));
  out += fmt::format("- **Parameters:** {}\n", parameters_text(estimate.parameters));
  out += fmt::format("- **Layout:** {}\n", layout_text(scenario.parallel));
  out += fmt::format("- **Sharding:** {}\n", sharding_text(scenario.parallel));
  out +=
      fmt::format("- **Batch:** {}\n", batch_text(scenario.training, scenario.parallel, estimate));
  out += fmt::format("- **Training:** {}\n", training_text(scenario.training));
  for (const StageEstimate& stage : estimate.stages) md_stage(out, stage);
  out += fmt::format("\n## Peak\n\n{}\n", md_cell(peak_text(estimate)));
  md_fit(out, estimate);
  if (!estimate.warnings.empty()) {
    out += "\n## Warnings\n\n";
    for (const std::string& w : estimate.warnings) out += fmt::format("- {}\n", md_cell(w));
  }
  return out;
}

std::string render_csv(const Estimate& estimate) {
  std::string out = "stage,component,bytes,gib,counts_toward,formula,source\n";
  for (const StageEstimate& stage : estimate.stages) {
    for (const Row& r : stage.rows) {
      out += fmt::format("{},{},{},{:.4f},{},{},{}\n", csv_field(stage.name),
                         csv_field(r.component), r.bytes, static_cast<double>(r.bytes) / kGiB,
                         counts_toward_name(r.counts_toward), csv_field(r.formula),
                         csv_field(r.source));
    }
  }
  return out;
}

std::string format_bytes(int64_t bytes) {
  // The magnitude in uint64, so that INT64_MIN does not overflow when negated.
  const uint64_t magnitude = bytes < 0 ? 0 - static_cast<uint64_t>(bytes) : bytes;
  const std::string_view sign = bytes < 0 ? "-" : "";
  if (magnitude < 1024) return fmt::format("{}{} B", sign, magnitude);
  static constexpr std::string_view kUnits[] = {"KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(magnitude) / 1024;
  std::size_t unit = 0;
  // Promote when the value would print as 1024.0 of this unit.
  while (unit + 1 < std::size(kUnits) && value >= 1023.95) {
    value /= 1024;
    ++unit;
  }
  // Three or four significant digits: 1.50 GiB, 79.65 GiB, 512.0 MiB.
  if (value < 99.995) return fmt::format("{}{:.2f} {}", sign, value, kUnits[unit]);
  return fmt::format("{}{:.1f} {}", sign, value, kUnits[unit]);
}

}  // namespace vramplan
