#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Tests of the contract generator (spec/gen_spec.py): one edit of spec/tpuemu.json changes the
SystemVerilog, C and C++ views together; the generated views compile/lint; a bad spec is refused
with one line naming the place; docs/isa.md's tables are the spec's.

    test_gen_spec.py SOURCE_DIR        (run by ctest; needs python3, verilator, gcc, g++)
"""
import copy
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

SRC = os.path.abspath(sys.argv.pop(1) if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "../.."))
GEN = os.path.join(SRC, "spec", "gen_spec.py")
SPEC = os.path.join(SRC, "spec", "tpuemu.json")


def tool(name):
    path = shutil.which(name)
    if path is None:  # the setup installs every one of them: a missing tool is a failure
        raise AssertionError(f"{name} is not installed (scripts/setup.sh installs it)")
    return path


class Generated:
    """The four views generated from one spec dictionary, in a temporary directory."""

    def __init__(self, spec, tmp):
        self.dir = tmp
        path = os.path.join(tmp, "spec.json")
        with open(path, "w") as f:
            json.dump(spec, f)
        self.paths = {k: os.path.join(tmp, n) for k, n in
                      (("sv", "tpu_pkg.sv"), ("hbm", "hbm_spec_pkg.sv"), ("c", "csr.h"), ("cpp", "contract.h"))}
        r = subprocess.run([sys.executable, GEN, path, "--sv-core", self.paths["sv"], "--sv-hbm",
                            self.paths["hbm"], "--c", self.paths["c"], "--cpp", self.paths["cpp"]],
                           capture_output=True, text=True)
        self.returncode, self.stderr = r.returncode, r.stderr
        self.text = {}
        if r.returncode == 0:
            for k, p in self.paths.items():
                with open(p) as f:
                    self.text[k] = f.read()


class GeneratorCase(unittest.TestCase):
    """A scratch directory and the generator run on a spec; the timing sets the HBM tests use."""
    def setUp(self):
        with open(SPEC) as f:
            self.spec = json.load(f)
        self.tmp = tempfile.mkdtemp(prefix="spec-test-")

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def gen(self, spec):
        sub = tempfile.mkdtemp(dir=self.tmp)
        return Generated(spec, sub)

    def csr(self, spec, name):
        return next(c for c in spec["csrs"] if c["name"] == name)

    HBM2_2000 = {"CL": 14, "CWL": 4, "tRCD": 14, "tRP": 14, "tRAS": 34, "tRC": 48, "tRRD_S": 4, "tRRD_L": 6,
                 "tFAW": 30, "tCCD_S": 1, "tCCD_L": 2, "tWTR_S": 6, "tWTR_L": 8, "tWR": 16, "tRTP": 6,
                 "tRFC": 260, "tREFI": 3900, "BL": 4}
    LATE_WRITE = dict(HBM2_2000, CL=2, CWL=10, BL=2, tCCD_S=3)


class GeneratorTest(GeneratorCase):
    def test_moving_a_csr_changes_every_view(self):
        spec = copy.deepcopy(self.spec)
        self.csr(spec, "STATUS")["addr"] = "0x030"
        g = self.gen(spec)
        self.assertEqual(g.returncode, 0, g.stderr)
        self.assertIn("CsrStatus = 12'h030", g.text["sv"])
        self.assertIn("#define FW_CSR_STATUS 0x030u", g.text["c"])
        self.assertIn("inline constexpr std::uint32_t kStatus = 0x030u;", g.text["cpp"])

    def test_adding_a_counter_changes_every_view(self):
        spec = copy.deepcopy(self.spec)
        n = len(spec["counters"])
        spec["counters"].append({"name": "new_event", "doc": "a new counter"})
        g = self.gen(spec)
        self.assertEqual(g.returncode, 0, g.stderr)
        self.assertIn(f"localparam int unsigned NumCounters = {n + 1};", g.text["sv"])
        self.assertIn(f"CntNewEvent = {n}", g.text["sv"])
        self.assertIn(f"#define FW_NUM_COUNTERS {n + 1}u", g.text["c"])
        self.assertIn(f"inline constexpr std::uint32_t kNumCounters = {n + 1}u;", g.text["cpp"])
        self.assertIn(f'X({n}, new_event, "a new counter")', g.text["cpp"])

    def test_instruction_field_moves_into_sv_struct_and_cpp_table(self):
        spec = copy.deepcopy(self.spec)
        dma = next(o for o in spec["opcodes"] if o["name"] == "dma")
        path = next(f for f in dma["fields"] if f["name"] == "path")
        path["word"], path["lsb"] = 6, 4
        g = self.gen(spec)
        self.assertEqual(g.returncode, 0, g.stderr)
        self.assertRegex(g.text["sv"], r"logic \[3:0\] path;  // \[199:196\]")
        self.assertIn('inline constexpr InstrField path{"path", 6, {4, 4}};', g.text["cpp"])

    def test_views_compile_and_lint(self):
        g = self.gen(self.spec)
        self.assertEqual(g.returncode, 0, g.stderr)
        main_c = os.path.join(self.tmp, "main.c")
        with open(main_c, "w") as f:
            f.write('#include "csr.h"\nint main(void) { return (int)(FW_CSR_STATUS + FW_NUM_SEMS); }\n')
        subprocess.run([tool("gcc"), "-std=c99", "-Wall", "-Wextra", "-Werror", "-ffreestanding",
                        "-fsyntax-only", "-I", g.dir, main_c], check=True)
        main_cpp = os.path.join(self.tmp, "main.cpp")
        with open(main_cpp, "w") as f:
            f.write('#include "contract.h"\n'
                    'static_assert(tpuemu::spec::csr::status::error_code.get(0x0300u) == 3);\n'
                    'static_assert(tpuemu::spec::csr::counter_hi(1) == tpuemu::spec::csr::kCounter + 12);\n'
                    'int main() {}\n')
        subprocess.run([tool("g++"), "-std=c++20", "-Wall", "-Wextra", "-Werror", "-fsyntax-only",
                        "-I", g.dir, main_cpp], check=True)
        # hbm_spec_pkg ends with the controller's own items, included from rtl/include
        incdir = "+incdir+" + os.path.join(SRC, "rtl", "include")
        for sv in (g.paths["sv"], g.paths["hbm"]):
            subprocess.run([tool("verilator"), "--lint-only", "-Wall", incdir, sv], check=True,
                           capture_output=True)

    def expect_error(self, spec, pattern):
        g = self.gen(spec)
        self.assertEqual(g.returncode, 1)
        lines = g.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, g.stderr)
        self.assertRegex(lines[0], pattern)
        self.assertFalse(any(os.path.exists(p) for p in g.paths.values()), "partial output written")

    def test_overlapping_instruction_fields_are_refused(self):
        spec = copy.deepcopy(self.spec)
        dma = next(o for o in spec["opcodes"] if o["name"] == "dma")
        next(f for f in dma["fields"] if f["name"] == "count")["lsb"] = 8
        self.expect_error(spec, r"^gen_spec: .*: /opcodes/1/fields/3: field count overlaps len at word 3 bit 8$")

    def test_overlapping_csrs_are_refused(self):
        spec = copy.deepcopy(self.spec)
        self.csr(spec, "PC")["addr"] = "0x010"
        self.expect_error(spec, r"^gen_spec: .*: /csrs/8: PC overlaps PROG_BASE$")

    def test_opcode_in_the_wrong_queue_is_refused(self):
        spec = copy.deepcopy(self.spec)
        next(o for o in spec["opcodes"] if o["name"] == "matmul")["code"] = "0x12"
        self.expect_error(spec, r"/opcodes/4/code: high nibble must select queue mxu$")

    def test_error_code_wider_than_status_field_is_refused(self):
        spec = copy.deepcopy(self.spec)
        spec["errors"][1]["code"] = 300
        self.expect_error(spec, r"/errors/1/code: does not fit STATUS.error_code$")

    def test_malformed_json_names_line_and_column(self):
        path = os.path.join(self.tmp, "bad.json")
        with open(path, "w") as f:
            f.write('{\n  "core": {,\n}\n')
        r = subprocess.run([sys.executable, GEN, path, "--c", os.path.join(self.tmp, "x.h")],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 1)
        self.assertRegex(r.stderr.strip(), r"^gen_spec: .*bad\.json:2:12: ")
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "x.h")))

    def test_isa_doc_tables_are_the_specs(self):
        r = subprocess.run([sys.executable, GEN, SPEC, "--docs", os.path.join(SRC, "docs", "isa.md"),
                            "--check"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_a_stale_doc_table_is_caught(self):
        doc = os.path.join(self.tmp, "isa.md")
        with open(os.path.join(SRC, "docs", "isa.md")) as f:
            text = f.read()
        with open(doc, "w") as f:
            f.write(text.replace("| 2 | deadlock |", "| 2 | stuck |"))
        r = subprocess.run([sys.executable, GEN, SPEC, "--docs", doc, "--check"],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 1)
        self.assertRegex(r.stderr, r"isa\.md:\d+: table differs from spec/tpuemu.json")

    # hbm2-2000 (configs/hbm/hbm2-2000.json) and a set whose CWL covers the read-to-write turnaround.
    def test_derived_distances_are_the_protocols(self):
        # Worked by hand from the formulas of docs/hbm.md, so a changed table fails here.
        spec_mod = load_generator()
        s = spec_mod.Spec(SPEC)
        self.assertEqual(spec_mod.derived_values(s, self.HBM2_2000),
                         {"tBURST": 2, "tRTW": 14, "wtr_s": 12, "wtr_l": 14, "wr2pre": 22, "rd_data": 16,
                          "ccd_s": 2, "ccd_l": 2, "rd2wr_s": 14, "rd2wr_l": 14, "wr2rd_s": 12, "wr2rd_l": 14})
        late = spec_mod.derived_values(s, self.LATE_WRITE)
        self.assertEqual((late["tRTW"], late["ccd_s"], late["rd2wr_s"]), (0, 3, 3))

    def test_editing_a_derived_distance_changes_every_view(self):
        spec = copy.deepcopy(self.spec)
        rtw = next(d for d in spec["hbm"]["derived_timings"] if d["name"] == "tRTW")
        rtw["expr"] = "CL + tBURST + 3 - CWL"
        g = self.gen(spec)
        self.assertEqual(g.returncode, 0, g.stderr)
        self.assertIn("d.t_rtw = (t.cl + d.t_burst + hbm_spec_pkg::TimW'(3) > t.cwl)", g.text["hbm"])
        self.assertIn("d.tRTW = sub(static_cast<std::uint32_t>(t.CL) + d.tBURST + 3u, "
                      "static_cast<std::uint32_t>(t.CWL));", g.text["cpp"])
        self.assertIn('{"tRTW", "CL + tBURST + 3 - CWL", ', g.text["cpp"])

    def test_a_derived_distance_naming_an_unknown_or_later_name_is_refused(self):
        spec = copy.deepcopy(self.spec)
        spec["hbm"]["derived_timings"][1]["expr"] = "CL + tBURST + 2 - tCWL"
        self.expect_error(spec, r"/hbm/derived_timings/1/expr: unknown name tCWL in ")
        spec = copy.deepcopy(self.spec)
        spec["hbm"]["derived_timings"][0]["expr"] = "ccd_s / 2"  # defined later in the table
        self.expect_error(spec, r"/hbm/derived_timings/0/expr: unknown name ccd_s in ")
        spec = copy.deepcopy(self.spec)
        spec["hbm"]["derived_timings"][0]["expr"] = "BL / 3"
        self.expect_error(spec, r"/hbm/derived_timings/0/expr: a division is by a power of two in ")

    def test_hbm_doc_table_is_the_specs(self):
        r = subprocess.run([sys.executable, GEN, SPEC, "--docs", os.path.join(SRC, "docs", "hbm.md"),
                            "--check"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(SRC, "docs", "hbm.md")) as f:
            self.assertIn("<!-- spec:hbm_derived -->", f.read())


    def test_a_core_parameter_constraint_changes_every_view(self):
        spec = copy.deepcopy(self.spec)
        dim = next(p for p in spec["core_params"]["params"] if p["name"] == "dim")
        dim["min"] = 16
        g = self.gen(spec)
        self.assertEqual(g.returncode, 0, g.stderr)
        self.assertIn("    if (!(dim >= 32'd16 &&\n          dim <= 32'd256 &&\n", g.text["sv"])
        self.assertIn('{"dim", "Dim", true, {16u, -1, 0u, "16"}, {256u, -1, 0u, "256"}',
                      g.text["cpp"])

    def test_a_bad_core_parameter_bound_is_refused(self):
        cases = [
            (1, "min", "acc_rows", r"1/min: acc_rows is no earlier parameter in 'acc_rows'$"),
            (4, "multiple_of", "dim/3", r"4/multiple_of: a division is by a power of two in "),
            (0, "min", -1, r"0/min: a bound is a 32-bit unsigned number, got -1$"),
            (0, "min", 512, r"0: min 512 is above max 256$"),
            (5, "max", 256, r"5/max: 256 does not fit QUEUE_STATE.dma_entries \(8 bits\)$"),
            (2, "parameter", "Dim", r"2/name: 'Dim' repeats /core_params/params/0$"),
        ]
        for i, key, value, error in cases:
            spec = copy.deepcopy(self.spec)
            spec["core_params"]["params"][i][key] = value
            with self.subTest(key=key, value=value):
                self.expect_error(spec, "/core_params/params/" + error)

    def test_core_cache_doc_table_is_the_specs(self):
        doc = os.path.join(SRC, "docs", "core-cache.md")
        r = subprocess.run([sys.executable, GEN, SPEC, "--docs", doc, "--check"],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(doc) as f:
            self.assertIn("<!-- spec:core_params -->", f.read())


class VerilatedViewTest(GeneratorCase):
    """The generated SV run by Verilator (ctest spec_generator_verilated, label rtl: it compiles a
    model, which the quick label leaves out)."""

    def test_derived_distances_agree_in_sv_and_cpp(self):
        """derive_timings() of the C++ view (static_assert) and of the SV package (run by Verilator)
        give the generator's values for two timing sets."""
        spec_mod = load_generator()
        s = spec_mod.Spec(SPEC)
        g = self.gen(self.spec)
        self.assertEqual(g.returncode, 0, g.stderr)
        names = [t["name"] for t in self.spec["hbm"]["timings"]]
        cpp = ['#include "contract.h"', "struct T { unsigned " + ", ".join(names) + "; };"]
        sv = ["module tb;", "  hbm_spec_pkg::timing_t t;", "  hbm_spec_pkg::derived_t d;", "  initial begin"]
        for k, values in enumerate((self.HBM2_2000, self.LATE_WRITE)):
            expect = spec_mod.derived_values(s, values)
            init = ", ".join(str(values[n]) for n in names)
            cpp.append(f"constexpr auto d{k} = tpuemu::spec::hbm::derive_timings(T{{{init}}}, {values['BL']}u);")
            cpp += [f"static_assert(d{k}.{n} == {v}u);" for n, v in expect.items()]
            sv.append("    t = '0;")
            sv += [f"    t.{spec_mod.sv_timing_name(n)} = 16'd{values[n]};" for n in names + ["BL"]]
            sv.append("    d = hbm_spec_pkg::derive_timings(t);")
            sv += [f"    if (d.{spec_mod.sv_timing_name(n)} != 16'd{v}) $fatal(1, \"set {k}: {n} is %0d, not {v}\", "
                   f"d.{spec_mod.sv_timing_name(n)});" for n, v in expect.items()]
        cpp.append("int main() {}")
        sv += ["    $display(\"derived: ok\");", "    $finish;", "  end", "endmodule"]
        main_cpp = os.path.join(self.tmp, "derived.cpp")
        with open(main_cpp, "w") as f:
            f.write("\n".join(cpp) + "\n")
        subprocess.run([tool("g++"), "-std=c++20", "-Wall", "-Wextra", "-Werror", "-fsyntax-only",
                        "-I", g.dir, main_cpp], check=True)
        tb = os.path.join(self.tmp, "tb.sv")
        with open(tb, "w") as f:
            f.write("\n".join(sv) + "\n")
        obj = os.path.join(self.tmp, "obj")
        subprocess.run([tool("verilator"), "--binary", "-Wno-fatal", "+incdir+" + os.path.join(SRC, "rtl", "include"),
                        "--Mdir", obj, "--top-module", "tb", g.paths["hbm"], tb], check=True, capture_output=True)
        r = subprocess.run([os.path.join(obj, "Vtb")], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("derived: ok", r.stdout)

    def test_core_parameter_checks_agree_in_sv_and_cpp(self):
        """tpu_pkg::core_param_violation (run by Verilator) and kParams' holds() (static_assert)
        find the generator's first broken constraint in the small preset and in a variant that
        breaks each parameter in turn."""
        spec_mod = load_generator()
        s = spec_mod.Spec(SPEC)
        g = self.gen(self.spec)
        self.assertEqual(g.returncode, 0, g.stderr)
        with open(os.path.join(SRC, "configs", "presets", "small.json")) as f:
            small = json.load(f)
        names = [p["name"] for p in s.core_params]
        base = [small[n] for n in names]
        cases = [base]
        for i, broken in enumerate([4, 4, 3, 1, 7, 3, 24]):  # outside each parameter's values
            cases.append(base[:i] + [broken] + base[i + 1:])
        cpp = ['#include "contract.h"', "#include <array>", "#include <cstdint>", "#include <span>",
               "namespace cp = tpuemu::spec::core_params;",
               f"constexpr unsigned first(std::array<std::uint64_t, {len(names)}> v) {{",
               "  for (std::size_t i = 0; i < cp::kParams.size(); ++i)",
               "    if (!cp::kParams[i].holds(v[i], std::span<const std::uint64_t>(v.data(), i)))",
               "      return i + 1;",
               "  return 0;", "}"]
        sv = ["module tb;", "  initial begin"]
        expected = []
        for k, values in enumerate(cases):
            expect = spec_mod.core_param_violation(s, values)
            expected.append(expect)
            args = ", ".join(str(v) for v in values)
            cpp.append(f"static_assert(first({{{args}}}) == {expect});")
            call = f"tpu_pkg::core_param_violation({args})"
            sv.append(f"    if ({call} != {expect})")
            sv.append(f"      $fatal(1, \"case {k}: %0d, not {expect}\", {call});")
        # The small preset holds; case i breaks parameter i.
        self.assertEqual(expected, list(range(len(cases))))
        cpp.append("int main() {}")
        sv += ["    $display(\"core params: ok\");", "    $finish;", "  end", "endmodule"]
        main_cpp = os.path.join(self.tmp, "params.cpp")
        with open(main_cpp, "w") as f:
            f.write("\n".join(cpp) + "\n")
        subprocess.run([tool("g++"), "-std=c++20", "-Wall", "-Wextra", "-Werror", "-fsyntax-only",
                        "-I", g.dir, main_cpp], check=True)
        tb = os.path.join(self.tmp, "tb_params.sv")
        with open(tb, "w") as f:
            f.write("\n".join(sv) + "\n")
        obj = os.path.join(self.tmp, "obj_params")
        subprocess.run([tool("verilator"), "--binary", "-Wno-fatal", "--Mdir", obj, "--top-module",
                        "tb", g.paths["sv"], tb], check=True, capture_output=True)
        r = subprocess.run([os.path.join(obj, "Vtb")], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("core params: ok", r.stdout)


def load_generator():
    import importlib.util
    spec = importlib.util.spec_from_file_location("gen_spec", GEN)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


if __name__ == "__main__":
    unittest.main(verbosity=1)
