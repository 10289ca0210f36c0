#include "training/layers/layer_terms.h"

#include <fmt/format.h>

#include "training/activations.h"
#include "vramplan/model/precision.h"

namespace vramplan {
void SumBuilder::add(const char* label, const char* expression, Wide bytes) {
  total_ += bytes;
  if (!explain_ || bytes == 0) return;
  if (!text_.empty()) text_ += " + ";
  text_ += fmt::format("{} {} ({})", label, expression, short_bytes(bytes));
}

Term SumBuilder::finish(const std::string& preamble) const {
  Term term{total_, ""};
  if (explain_) term.formula = preamble + text_ + " = " + short_bytes(total_);
  return term;
}

Dims dims_of(const Scenario& s) {
  const Parallelism& par = s.parallel;
  const Wide t = par.tp;
  const Wide t_sp = (par.sequence_parallel && par.tp > 1) ? t : Wide{1};
  const Wide t_in = column_input_divisor(par, s.conventions);
  const bool gathered = t_in != t_sp;
  return Dims{s.training.fp8 != Fp8Recipe::kNone,
              s.training.fp8,
              tokens_per_rank(s),
              s.model.hidden,
              t,
              t_sp,
              t_in,
              bytes_of(1, s.training.activation_dtype),
              gathered ? "n·h·B (all-gathered)" : "n·h·B/t_sp"};
}

std::string preamble(const Scenario& s, const Dims& d) {
  std::string fp8;
  if (d.fp8) {
    fp8 = fmt::format(", q = {} ({})", has_block_scales(d.recipe) ? "1+1/32" : "1",
                      fp8_recipe_name(d.recipe));
  }
  return fmt::format("n = s·b/c = {}·{}/{} = {} tokens, h = {}, t = {}, B = {}, G = {}{}: ",
                     s.training.seq_len, s.training.micro_batch, s.parallel.cp, group_digits(d.n),
                     group_digits(d.h), static_cast<int64_t>(d.t), static_cast<int64_t>(d.bytes),
                     s.conventions.gated_mlp_tensors, fp8);
}

void add_linear_input(const Dims& d, const char* label, SumBuilder& sum) {
  if (!d.fp8) {
    sum.add(label, d.in_expr, d.n * d.h * d.bytes / d.t_in);
    return;
  }
  const bool gathered = d.t_in != d.t_sp;
  const std::string fp8_label = std::string(label) + " (fp8)";
  sum.add(fp8_label.c_str(), gathered ? "n·h·q (all-gathered)" : "n·h·q/t_sp",
          fp8_activation_bytes(d.n * d.h / d.t_in, d.recipe));
}

void add_attention_output(const Dims& d, Wide width, const char* width_expr, SumBuilder& sum) {
  const std::string expr = std::string(width_expr) + "·B/t";
  sum.add("attention output", expr.c_str(), d.n * width * d.bytes / d.t);
  if (!d.fp8) return;
  const std::string fp8_expr = std::string(width_expr) + "·q/t";
  sum.add("attention output (fp8 copy)", fp8_expr.c_str(),
          fp8_activation_bytes(d.n * width / d.t, d.recipe));
}

}  // namespace vramplan
