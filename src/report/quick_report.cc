// Reports of the quick calculator: JSON with stable keys, a terminal table and CSV.
#include "vramplan/report/quick_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "base/term.h"
#include "report/estimate_text.h"
#include "report/text_layout.h"
#include "vramplan/io/options.h"

namespace vramplan {
namespace {

using namespace textfmt;
using nlohmann::json;

using estimate_text::gib;
using estimate_text::kGiB;

json inputs_json(const QuickInputs& in) {
  return {{"params", in.params},
          {"layers", in.layers},
          {"hidden", in.hidden},
          {"batch", in.batch},
          {"seq_len", in.seq_len},
          {"mode", quick_mode_name(in.mode)},
          {"weight_dtype", weight_format_name(in.weights.format)},
          {"grad_dtype", dtype_name(in.grad_dtype)},
          {"activation_dtype", dtype_name(in.activation_dtype)},
          {"optimizer_dtype", dtype_name(in.optimizer_dtype)},
          {"master_weights", in.master_weights},
          {"optimizer", optimizer_name(in.optimizer)},
          {"checkpoint_factor", in.checkpoint_factor},
          {"kv_cache", in.kv_cache},
          {"cache_tokens", in.cache_tokens > 0 ? in.cache_tokens : in.seq_len},
          {"kv_dtype", dtype_name(in.kv_dtype)},
          {"overhead_bytes", in.overhead_bytes},
          {"allocator_overhead", in.allocator_overhead}};
}

}  // namespace

json quick_to_json(const QuickAnswer& a) {
  json rows = json::array();
  for (const Row& r : a.estimate.rows)
    rows.push_back({{"component", r.component},
                    {"bytes", r.bytes},
                    {"counts_toward", counts_toward_name(r.counts_toward)},
                    {"formula", r.formula},
                    {"source", r.source}});
  json full = nullptr;
  if (a.full) {
    json full_rows = json::array();
    for (const Row& r : a.full->rows)
      full_rows.push_back({{"component", r.component},
                           {"bytes", r.bytes},
                           {"counts_toward", counts_toward_name(r.counts_toward)}});
    full = {{"model", a.full->model},
            {"command", a.full->command},
            {"parameters", a.full->parameters},
            {"total_bytes", a.full->total_bytes},
            {"allocated_bytes", a.full->allocated_bytes},
            {"rows", std::move(full_rows)},
            {"settings", a.full->settings}};
  }
  return {{"example", a.example.empty() ? json() : json(a.example)},
          {"inputs", inputs_json(a.inputs)},
          {"activation_multiplier",
           {{"value", a.estimate.activation_multiplier}, {"source", a.estimate.multiplier_source}}},
          {"rows", std::move(rows)},
          {"total_bytes", a.estimate.total_bytes},
          {"calculator_gib", a.calculator_gib ? json(*a.calculator_gib) : json()},
          {"full_estimate", std::move(full)},
          {"notes", a.notes}};
}

std::string render_quick_table(const QuickAnswer& a, const TableOptions& options) {
  const int width = std::max(options.width, 60);
  auto bold = [&](std::string_view t) {
    return options.color ? fmt::format("\x1b[1m{}\x1b[0m", t) : std::string(t);
  };
  std::string out;
  auto line = [&](std::string_view t = "") {
    out += t;
    out += '\n';
  };
  const QuickInputs& in = a.inputs;
  line(bold(fmt::format("vramplan quick · {} · {} parameters, {} layers × {}{}",
                        quick_mode_name(in.mode), group_digits(in.params), in.layers, in.hidden,
                        a.example.empty() ? "" : " · example " + a.example)));
  const std::string kv =
      in.kv_cache
          ? fmt::format("KV cache {} tokens in {}",
                        in.cache_tokens > 0 ? in.cache_tokens : in.seq_len, dtype_name(in.kv_dtype))
          : std::string("KV cache off");
  // Inference has no gradients, optimizer or master weights: its line leaves them out.
  const std::string settings =
      in.mode == QuickMode::kTraining
          ? fmt::format(
                "batch {}, seq_len {}, weights {}, grads {}, activations {}, optimizer {} "
                "({}), master weights {}, checkpoint factor {:g}, {}",
                in.batch, in.seq_len, weight_format_name(in.weights.format),
                dtype_name(in.grad_dtype), dtype_name(in.activation_dtype),
                optimizer_name(in.optimizer), dtype_name(in.optimizer_dtype),
                in.master_weights ? "on" : "off", in.checkpoint_factor, kv)
          : fmt::format(
                "batch {}, seq_len {}, weights {}, activations {}, checkpoint factor {:g}, "
                "{}",
                in.batch, in.seq_len, weight_format_name(in.weights.format),
                dtype_name(in.activation_dtype), in.checkpoint_factor, kv);
  for (const std::string& l : wrap_at_spaces(settings, width - 2)) line("  " + l);
  for (const std::string& l :
       wrap_at_spaces(fmt::format("activation multiplier m = {:.4g} ({})",
                                  a.estimate.activation_multiplier, a.estimate.multiplier_source),
                      width - 2))
    line("  " + l);

  int comp_w = display_width("full estimate");
  for (const Row& r : a.estimate.rows) comp_w = std::max(comp_w, display_width(r.component));
  const int formula_col = 2 + comp_w + 2 + 9 + 2;
  const int formula_w = std::max(24, width - formula_col);
  auto table_row = [&](std::string_view component, std::string_view amount,
                       std::string_view formula) {
    const std::vector<std::string> lines = wrap_at_spaces(formula, formula_w);
    std::string first = fmt::format("  {}  {}  {}", pad_right(component, comp_w),
                                    pad_left(amount, 9), lines.empty() ? "" : lines[0]);
    line(first.substr(0, first.find_last_not_of(' ') + 1));
    for (size_t i = 1; i < lines.size(); ++i) line(std::string(formula_col, ' ') + lines[i]);
  };
  line();
  table_row("component", "GiB", "formula");
  for (const Row& r : a.estimate.rows) table_row(r.component, gib(r.bytes), r.formula);
  line("  " + std::string(static_cast<size_t>(comp_w + 11), '-'));
  table_row("total", gib(a.estimate.total_bytes), "the coarse formula's sum");
  if (a.calculator_gib)
    table_row("calculator", fmt::format("{:.2f}", *a.calculator_gib),
              "what the calculator this example comes from reports (docs/quick.md)");
  if (a.full)
    table_row("full estimate", gib(a.full->total_bytes),
              fmt::format("`vramplan {}` of the matching architecture ({}, {} parameters): peak "
                          "per GPU as nvidia-smi shows it",
                          a.full->command, a.full->model, group_digits(a.full->parameters)));
  line();
  line(bold("sources"));
  for (const Row& r : a.estimate.rows) {
    const std::vector<std::string> lines =
        wrap_at_spaces(fmt::format("{}: {}", r.component, r.source), width - 4);
    for (size_t i = 0; i < lines.size(); ++i) line((i == 0 ? "  " : "    ") + lines[i]);
  }
  if (!a.notes.empty()) {
    line();
    line(bold("notes"));
    for (const std::string& n : a.notes) {
      const std::vector<std::string> lines = wrap_at_spaces(n, width - 4);
      for (size_t i = 0; i < lines.size(); ++i) line((i == 0 ? "  ! " : "    ") + lines[i]);
    }
  }
  return out;
}

std::string render_quick_csv(const QuickAnswer& a) {
  std::string out = "component,bytes,gib,counts_toward,formula,source\n";
  for (const Row& r : a.estimate.rows)
    out += fmt::format("{},{},{:.4f},{},{},{}\n", csv_field(r.component), r.bytes,
                       static_cast<double>(r.bytes) / kGiB, counts_toward_name(r.counts_toward),
                       csv_field(r.formula), csv_field(r.source));
  out += fmt::format("total,{},{:.4f},,,\n", a.estimate.total_bytes,
                     static_cast<double>(a.estimate.total_bytes) / kGiB);
  return out;
}

json quick_examples_json() {
  json out = json::array();
  for (const QuickExample& e : quick_examples())
    out.push_back({{"name", e.name},
                   {"title", e.title},
                   {"settings", json::parse(e.settings)},
                   {"calculator_gib", e.calculator_gib}});
  return out;
}

std::string render_quick_examples() {
  std::string out;
  for (const QuickExample& e : quick_examples()) {
    std::string settings;
    const json parsed = json::parse(e.settings);  // kept alive: items() refers to it
    for (const auto& [key, value] : parsed.items())
      settings += fmt::format(" {} {}", flag_name(key),
                              value.is_string() ? value.get<std::string>() : value.dump());
    out += fmt::format("{}  {} (calculator: {:.2f} GiB)\n    vramplan quick --example {}  # ={}\n",
                       pad_right(e.name, 16), e.title, e.calculator_gib, e.name, settings);
  }
  return out;
}

}  // namespace vramplan
