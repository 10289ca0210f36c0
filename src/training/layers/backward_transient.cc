// The gradients a layer's backward holds beside its saved activations as it starts (activations.h
// layer_backward_transient).
//
// PyTorch's autograd engine (torch/csrc/autograd/engine.cpp) keeps a node's input gradient until
// the node returns, and releases the node's saved tensors only after it returns
// (release_variables). A transformers decoder layer's backward starts in its MLP:
//  - the down projection's backward holds the layer's output gradient, its input gradient
//    (n·f) and its weight gradient; when the parameter's .grad already exists, AccumulateGrad
//    adds the new gradient in place and frees it (torch/csrc/autograd/functions/accumulate_grad.h),
//    a weight-sized temporary; when .grad does not exist the new tensor becomes .grad and is
//    counted with the gradients;
//  - a gated MLP's product act(gate)·up then holds the down projection's input gradient and makes
//    both its input gradients (2·n·f), the down projection's saved input being freed by then.
// Everything later in the layer's backward holds less, because saved tensors go as fast as new
// gradients come.
#include <fmt/format.h>

#include <algorithm>

#include "training/activations.h"
#include "training/layers/layer_terms.h"
#include "vramplan/model/precision.h"

namespace vramplan {

namespace {

// Where the model above applies: transformers' eager decoder layers with a dense MLP whose
// weights train. MoE layers run their experts' backward token group by token group; a LoRA
// layer's frozen base keeps other tensors; fp8 linears save fp8 casts.
bool transient_modelled(const Scenario& s) {
  return (s.conventions.model_code == ModelCode::kTransformers ||
          s.conventions.model_code == ModelCode::kTorchtune) &&
         !s.model.is_moe() && s.training.fp8 == Fp8Recipe::kNone;
}

}  // namespace

Term layer_backward_transient(const Scenario& s, bool weight_grad_exists, bool explain) {
  if (!transient_modelled(s)) return {};
  const Dims d = dims_of(s);
  const Wide f = s.model.ffn;
  const Wide output_grad = d.n * d.h * d.bytes / d.t_sp;
  const Wide input_grad = d.n * f * d.bytes / d.t;
  const Wide grad_bytes = bytes_of(1, s.training.param_dtype);
  const Wide weight_temp = weight_grad_exists ? d.h * f * grad_bytes / d.t : 0;
  const bool gated = s.model.mlp == MlpKind::kGated;
  const Wide down = input_grad + weight_temp;
  const Wide product = gated ? 2 * input_grad : 0;
  Term out{output_grad + std::max(down, product), ""};
  if (!explain) return out;
  const std::string down_text = fmt::format(
      "down projection's input gradient n·f·B/t ({}){}", short_bytes(input_grad),
      weight_temp > 0
          ? fmt::format(" + its weight gradient before it is added to .grad h·f·{}/t ({})",
                        grad_bytes, short_bytes(weight_temp))
          : std::string());
  const std::string mlp_text =
      gated ? fmt::format("max({}, act·up's two input gradients 2·n·f·B/t ({}))", down_text,
                          short_bytes(product))
            : down_text;
  out.formula = fmt::format("{}output gradient n·h·B/t_sp ({}) + {} = {}", preamble(s, d),
                            short_bytes(output_grad), mlp_text, short_bytes(out.bytes));
  return out;
}

}  // namespace vramplan
