// The estimate as a terminal table: a bar per stage, the rows with their formulas, the peak and
// the fit on each GPU.
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "report/estimate_text.h"
#include "report/text_layout.h"
#include "vramplan/perf/hardware.h"
#include "vramplan/report/report.h"
#include "vramplan/training/frameworks.h"

namespace vramplan {
namespace {

using namespace estimate_text;
using namespace textfmt;

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
    host_fit();
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
    if (stage.host_bytes > 0)
      table_row(comp_w, "total host", gib(stage.host_bytes), "",
                "one rank's host memory: the rows counting toward host (docs/offload.md)");
    if (stage.disk_bytes > 0)
      table_row(comp_w, "total disk", gib(stage.disk_bytes), "",
                "one rank's NVMe swap: the rows counting toward disk");
  }

  int64_t bar_scale() const {
    int64_t scale = 1;
    for (const StageEstimate& stage : estimate_.stages) {
      int64_t sum = 0;
      for (const Row& row : stage.rows)
        if (on_gpu(row.counts_toward)) sum += std::max<int64_t>(row.bytes, 0);
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
      if (!on_gpu(row.counts_toward)) continue;  // the bar is GPU memory
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

  // The node's host memory (offload, docs/offload.md) against the chosen GPU's node.
  void host_fit() {
    if (estimate_.peak.host_bytes == 0 && estimate_.peak.disk_bytes == 0) return;
    section(fmt::format("host memory · {} GiB per rank{}", gib(estimate_.peak.host_bytes),
                        estimate_.peak.disk_bytes > 0 ? fmt::format(", {} GiB NVMe swap per rank",
                                                                    gib(estimate_.peak.disk_bytes))
                                                      : ""));
    if (estimate_.fit.empty() || !estimate_.fit.front().host_checked) {
      line(std::string(kIndent, ' ') + "node RAM not known: pass --host-memory-gib to check it");
      return;
    }
    const Fit& f = estimate_.fit.front();
    line(fmt::format("{}{} ranks × {} GiB = {} GiB of {} GiB node RAM ({}): {:.1f}%  {}",
                     std::string(kIndent, ' '), f.gpus_per_node, gib(estimate_.peak.host_bytes),
                     gib(f.host_node_bytes), gib(f.host_memory_bytes), f.gpu,
                     f.host_used_fraction * 100, verdict_text(f.host_verdict)));
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

}  // namespace

std::string render_table(const Scenario& scenario, const Estimate& estimate,
                         const TableOptions& options) {
  return TableWriter(scenario, estimate, options).render();
}

}  // namespace vramplan
