#include "interop/shell_words.h"

#include <gtest/gtest.h>

namespace vramplan::interop {
namespace {

using Words = std::vector<std::string>;

TEST(ShellWords, SplitsQuotesEscapesAndContinuations) {
  const ShellScript s = parse_shell(
      "python train.py --name 'a b' --path \"x y\" --esc a\\ b \\\n  --next 1 # a comment\n");
  ASSERT_EQ(s.commands.size(), 1u);
  EXPECT_EQ(s.commands[0].words, (Words{"python", "train.py", "--name", "a b", "--path", "x y",
                                        "--esc", "a b", "--next", "1"}));
}

TEST(ShellWords, ExpandsVariablesArraysAndArithmetic) {
  // The shape of Megatron-LM's examples/gpt3/train_gpt3_175b_distributed.sh.
  const ShellScript s = parse_shell(R"(#!/bin/bash
export CUDA_DEVICE_MAX_CONNECTIONS=1
GPUS_PER_NODE=8
NUM_NODES=2
WORLD_SIZE=$(($GPUS_PER_NODE*$NUM_NODES))
DISTRIBUTED_ARGS=(
    --nproc_per_node $GPUS_PER_NODE
    --nnodes ${NUM_NODES}
)
MODEL_ARGS=(
    --num-layers 96 # comment inside the array
    --seq-length ${SEQ:-2048}
)
torchrun ${DISTRIBUTED_ARGS[@]} pretrain_gpt.py \
    "${MODEL_ARGS[@]}" --world $WORLD_SIZE
)");
  ASSERT_EQ(s.commands.size(), 1u);
  EXPECT_EQ(s.commands[0].words,
            (Words{"torchrun", "--nproc_per_node", "8", "--nnodes", "2", "pretrain_gpt.py",
                   "--num-layers", "96", "--seq-length", "2048", "--world", "16"}));
  EXPECT_EQ(s.commands[0].line, 14);
  EXPECT_EQ(s.variables.at("WORLD_SIZE"), "16");
  EXPECT_EQ(s.variables.at("CUDA_DEVICE_MAX_CONNECTIONS"), "1");
}

TEST(ShellWords, KeepsWhatItCannotExpandAndSaysSo) {
  const ShellScript s =
      parse_shell("MASTER=$(hostname)\nrun --addr $MASTER --ckpt $1 --x $UNSET\n");
  ASSERT_EQ(s.commands.size(), 1u);
  EXPECT_EQ(s.commands[0].words, (Words{"run", "--addr", "$(hostname)", "--ckpt", "$1", "--x"}));
  ASSERT_EQ(s.unexpanded.size(), 3u);
  EXPECT_EQ(s.unexpanded[0], "$(hostname) on line 1");
  EXPECT_EQ(s.unexpanded[1], "$1 on line 2");
  EXPECT_EQ(s.unexpanded[2], "$UNSET on line 2 (not set)");
}

TEST(ShellWords, SeparatesCommandsAndSplitsUnquotedExpansions) {
  const ShellScript s = parse_shell("A='--x 1 --y 2'; cmd $A && other \"$A\" | tail\n");
  ASSERT_EQ(s.commands.size(), 3u);
  EXPECT_EQ(s.commands[0].words, (Words{"cmd", "--x", "1", "--y", "2"}));
  EXPECT_EQ(s.commands[1].words, (Words{"other", "--x 1 --y 2"}));
  EXPECT_EQ(s.commands[2].words, (Words{"tail"}));
}

TEST(ShellWords, DefaultsAndAlternatives) {
  const ShellScript s =
      parse_shell("B=set\necho ${A:-one} ${A:=two} $A ${B:+alt} ${B:-no} ${#B}\n");
  ASSERT_EQ(s.commands.size(), 1u);
  EXPECT_EQ(s.commands[0].words, (Words{"echo", "one", "two", "two", "alt", "set", "3"}));
}

TEST(ShellWords, HostileInputEndsWithoutCrashing) {
  for (const char* text : {"'unterminated", "\"open $((1/0)) ${", "$((", "A=(", "\\", "${#}",
                           "x=$(( 99999999999999999999 * 9 ))", "(((((", "`"}) {
    const ShellScript s = parse_shell(text);
    EXPECT_LE(s.commands.size(), 2u) << text;
  }
}

}  // namespace
}  // namespace vramplan::interop
