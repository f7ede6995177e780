/* SPDX-License-Identifier: Apache-2.0 */
/* Reset entry of the board firmware (rv32): global and stack pointers, .bss cleared, main(). */
  .section .text.start, "ax"
  .global _start
_start:
  .option push
  .option norelax
  la gp, __global_pointer$
  .option pop
  la sp, __stack_top
  la t0, __bss_start
  la t1, __bss_end
1:
  bgeu t0, t1, 2f
  sw zero, 0(t0)
  addi t0, t0, 4
  j 1b
2:
  call main
3:
  wfi
  j 3b
