// The search's ActivationTerms by (tp, sp, cp, etp, micro-batch, recompute): the terms it gives
// back for any layout, whatever its other degrees, are FastMemoryModel::activations' own.
#include "plan/activation_cache.h"

#include <gtest/gtest.h>

#include "model/test_models.h"

namespace vramplan {
namespace {

void expect_same(const ActivationTerms& a, const ActivationTerms& b) {
  EXPECT_TRUE(a.dense_layer == b.dense_layer && a.moe_layer == b.moe_layer &&
              a.layer_input == b.layer_input && a.embedding == b.embedding && a.head == b.head &&
              a.logits == b.logits && a.loss_transient == b.loss_transient &&
              a.last_output == b.last_output);
}

TEST(ActivationCache, GivesTheModelsTermsForEveryLayout) {
  Scenario s;
  s.model = testing::tiny_moe();
  s.training.seq_len = 1024;
  Result<FastMemoryModel> memory = FastMemoryModel::prepare(s);
  ASSERT_TRUE(memory.ok());
  ActivationCache cache(*memory);
  int compared = 0;
  for (int round = 0; round < 2; ++round)  // the second round reads them back
    for (int64_t tp : {1, 2, 4})
      for (bool sp : {true, false})
        for (int64_t cp : {1, 2})
          for (int64_t pp : {1, 2, 4})
            for (int64_t ep : {1, 4})
              for (int64_t etp : {1, 2})
                for (int64_t mb : {1, 3})
                  for (Recompute rc : {Recompute::kNone, Recompute::kSelective, Recompute::kFull}) {
                    Parallelism par;
                    par.tp = tp;
                    par.sequence_parallel = sp;
                    par.cp = cp;
                    par.pp = pp;
                    par.dp = 8 / (cp * pp) > 0 ? 8 / (cp * pp) : 1;
                    par.ep = ep;
                    par.etp = etp;
                    expect_same(cache.terms(par, mb, rc), memory->activations(par, mb, rc));
                    ++compared;
                  }
  EXPECT_EQ(compared, 2 * 3 * 2 * 2 * 3 * 2 * 2 * 2 * 3);
}

}  // namespace
}  // namespace vramplan
