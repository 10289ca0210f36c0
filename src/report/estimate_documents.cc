// The estimate as documents: markdown for a pull request or wiki, CSV for spreadsheets.
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

namespace vramplan {
namespace {

using namespace estimate_text;
using namespace textfmt;

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

}  // namespace

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

}  // namespace vramplan
