// Activations of the state-space and linear-attention mixers (layer_terms.h).
#include <fmt/format.h>

#include "training/activations.h"
#include "training/layers/layer_terms.h"

namespace vramplan {
namespace {

// Mamba-2 through mamba_ssm's fused path (ssd_combined.py MambaSplitConv1dScanCombinedFn, which
// transformers' cuda_kernels_forward and Megatron's MambaMixer call): it saves the in_proj output
// zxbcdt, the scan output before the gated norm (out_x) and the norm's fp32 rstd per group;
// the conv output, the chunk states (n/chunk × H × P × N) and the out_proj input are recomputed
// in its backward (checkpoint_lvl 1). The in_proj keeps its input for the weight gradient.
// Jamba's Mamba-1 (transformers JambaMambaMixer.cuda_kernels_forward op by op, with mamba_ssm's
// SelectiveScanFn saving u, delta, B, C, z, its output and fp32 chunk states every 2048 tokens):
// conv input x, gate z and conv output u; x_proj output and the dt/B/C norm outputs; delta, the
// scan output and the gated out_proj input. The norms' fp32 intermediates are not counted.
void add_mamba1_mixer(const Scenario& s, const Dims& d, SumBuilder& sum) {
  const Mamba2Config& c = s.model.mamba;
  const Wide di = c.d_inner(), rn = c.dt_rank + 2 * c.state_size;
  add_linear_input(d, "in_proj input", sum);
  sum.add("conv input x, gate z, conv output u", "3·n·d_inner·B/t", 3 * d.n * di * d.bytes / d.t);
  sum.add("x_proj output, dt/B/C norm outputs", "2·n·(R+2N)·B/t", 2 * d.n * rn * d.bytes / d.t);
  sum.add("delta, scan output, gated output", "3·n·d_inner·B/t", 3 * d.n * di * d.bytes / d.t);
  sum.add("scan chunk states (fp32)", "⌈n/2048⌉·d_inner·2N·4/t",
          ceil_div(ceil_div(d.n, 2048) * di * 2 * c.state_size * 4, d.t));
}

}  // namespace

void add_mamba2_mixer(const Scenario& s, const Dims& d, SumBuilder& sum) {
  const Mamba2Config& c = s.model.mamba;
  if (c.dt_rank > 0) return add_mamba1_mixer(s, d, sum);
  add_linear_input(d, "in_proj input", sum);
  const Wide zxbcdt = 2 * c.d_inner() + 2 * c.n_groups * c.state_size + c.num_heads;
  sum.add("in_proj output zxbcdt", "n·(2·d_inner+2·G·N+H)·B/t", d.n * zxbcdt * d.bytes / d.t);
  sum.add("scan output out_x", "n·d_inner·B/t", d.n * c.d_inner() * d.bytes / d.t);
  if (c.gated_norm) sum.add("gated-norm rstd", "n·G·4/t", ceil_div(d.n * c.n_groups * 4, d.t));
}

// Qwen3-Next's gated DeltaNet through flash-linear-attention (chunk_gated_delta_rule, chunk 64):
// in_proj_qkvz|ba outputs, the causal conv's input and its SiLU output, the kernel's q, k, v
// (l2-normalised in the kernel), g and beta in fp32 and its WY matrix A (n × Hv × 64, fp32);
// chunk states are recomputed in backward. The gated RMSNorm keeps its input and gate, out_proj
// its input.
void add_deltanet_mixer(const Scenario& s, const Dims& d, SumBuilder& sum) {
  const GatedDeltaNetConfig& c = s.model.deltanet;
  add_linear_input(d, "in_proj input", sum);
  const Wide proj = 2 * c.key_dim() + 2 * c.value_dim() + 2 * c.num_v_heads;
  sum.add("in_proj_qkvz|ba output", "n·(2k+2v+2·Hv)·B/t", d.n * proj * d.bytes / d.t);
  sum.add("conv input + output", "2·n·(2k+v)·B/t", 2 * d.n * c.conv_dim() * d.bytes / d.t);
  sum.add("kernel q, k, v", "n·(2k+v)·B/t", d.n * c.conv_dim() * d.bytes / d.t);
  sum.add("g, beta (fp32)", "n·2·Hv·4/t", d.n * 2 * c.num_v_heads * 4 / d.t);
  sum.add("WY matrix A (fp32)", "n·Hv·64·4/t", d.n * c.num_v_heads * 64 * 4 / d.t);
  sum.add("norm input, gate, out_proj input", "3·n·v·B/t", 3 * d.n * c.value_dim() * d.bytes / d.t);
}

}  // namespace vramplan
