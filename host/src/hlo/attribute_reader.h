// SPDX-License-Identifier: Apache-2.0
// Layer hlo, private: the reader's hook into hlo_attributes.cpp. The parser finds where an
// attribute's value ends; these read the values of the typed attributes (tpuemu/hlo/
// hlo_attributes.h) into their fields of the instruction, with the parser's error regime: one
// tpuemu::Error "SOURCE:LINE:COL: malformed NAME: cause" at the offending token of the value.
#pragma once

#include <string>

#include "tpuemu/hlo/hlo_module.h"

namespace tpuemu::hlo::detail {

// Reads `attribute` (its value written at value_pos of `source`) into its typed field of `inst`
// when it is one of the typed attributes, and returns true; returns false, with inst unchanged,
// for any other name. Called before the attribute joins inst.attributes, so a second attribute
// of one name is seen and refused; after the instruction's shape is read, so a slice's or a
// pad's ranges are checked one per dimension of it.
bool read_typed_attribute(Instruction& inst, const Attribute& attribute, SourcePos value_pos,
                          const std::string& source);

// The checks that take more than one attribute, once all are read: lhs and rhs with as many
// contracting (and batch) dimensions, a convolution's window with a dimension per spatial
// dimension of its dim_labels. Errors point at the attribute's name.
void check_typed_attributes(const Instruction& inst, const std::string& source);

}  // namespace tpuemu::hlo::detail
