// The HLO text reader (tpuemu/hlo/hlo_parser.h): every construct into its fields, every error at
// its line and column.
#include <gtest/gtest.h>

#include "tpuemu/hlo/hlo_module.h"

namespace tpuemu::hlo {
namespace {

TEST(HloOpcodes, TableKnowsXlaNames) {
  ASSERT_TRUE(opcode_from_name("all-gather-start"));
  EXPECT_EQ(opcode_arity(*opcode_from_name("dot")), 2);
  EXPECT_EQ(opcode_arity(*opcode_from_name("tuple")), -1);
  EXPECT_FALSE(opcode_from_name("exp"));
}

}  // namespace
}  // namespace tpuemu::hlo
