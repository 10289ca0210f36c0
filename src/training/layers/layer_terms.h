// The building blocks of a layer's activation formula (activations.cc and the layer kinds in
// this folder): the dimensions every term is written in, a sum that renders its parts with their
// values, and the saved inputs of linears and of the attention output.
#pragma once

#include <string>

#include "base/term.h"
#include "vramplan/training/scenario.h"

namespace vramplan {

// Accumulates named parts of a sum; renders "label expr (bytes) + ..." when explaining.
class SumBuilder {
 public:
  explicit SumBuilder(bool explain) : explain_(explain) {}
  void add(const char* label, const char* expression, Wide bytes);
  Term finish(const std::string& preamble) const;
  Wide total() const { return total_; }

 private:
  bool explain_;
  Wide total_ = 0;
  std::string text_;
};

struct Dims {
  bool fp8;  // linear layers save their inputs in fp8 (Training::fp8)
  Fp8Recipe recipe;
  Wide n;  // tokens of a microbatch on this CP rank
  Wide h;
  Wide t;               // tensor-parallel degree
  Wide t_sp;            // divisor of hidden-wide tensors outside the TP region: t with SP, else 1
  Wide t_in;            // divisor of a column-parallel linear's saved input: t_sp, or 1 when the
                        // framework saves the all-gathered input (Conventions)
  Wide bytes;           // activation dtype bytes
  const char* in_expr;  // "n·h·B/t_sp" or "n·h·B (all-gathered)"
  const char* bytes_expr = "B";  // how formulas write `bytes` ("4" where autocast leaves fp32)
};

Dims dims_of(const Scenario& s);
// "n = s·b/c = … tokens, h = …, t = …, B = …, G = …: ", the start of every layer formula.
std::string preamble(const Scenario& s, const Dims& d);

// The input a linear layer saves for its weight gradient: the activation dtype, or its fp8 cast
// (Transformer Engine quantises the input and keeps only the fp8 copy).
void add_linear_input(const Dims& d, const char* label, SumBuilder& sum);
// Attention's output, kept by the attention kernel; with fp8 the output projection also keeps
// its own fp8 cast of it.
void add_attention_output(const Dims& d, Wide width, const char* width_expr, SumBuilder& sum);

// Multi-head latent attention (DeepSeek-V2/V3); `frozen`: under LoRA's frozen base
// (lora_frozen_layer), what the frozen projections and norms keep for no weight gradient is left
// out (mla_attention.cc).
void add_mla_attention(const Scenario& s, const Dims& d, bool frozen, SumBuilder& sum);
// State-space and linear-attention mixers (ssm_mixers.cc): Mamba-1/2 through mamba_ssm's kernels,
// gated DeltaNet through flash-linear-attention.
void add_mamba2_mixer(const Scenario& s, const Dims& d, SumBuilder& sum);
void add_deltanet_mixer(const Scenario& s, const Dims& d, SumBuilder& sum);

}  // namespace vramplan
