/* CSR map of the tpuemu core as the firmware sees it (docs/isa.md, "CSR map"). */
#ifndef TPUEMU_FW_CSR_H
#define TPUEMU_FW_CSR_H

#define FW_CSR_ID 0x000u
#define FW_CSR_CONFIG 0x004u
#define FW_CSR_CTRL 0x008u
#define FW_CSR_STATUS 0x00Cu
#define FW_CSR_PROG_BASE 0x010u
#define FW_CSR_ERROR_INFO 0x014u
#define FW_CSR_QUEUE_STATE 0x018u
#define FW_CSR_HEAD_WAIT 0x01Cu
#define FW_CSR_PC 0x020u
#define FW_CSR_SMEM_ADDR 0x024u
#define FW_CSR_SMEM_DATA 0x028u
#define FW_CSR_SEM(i) (0x080u + 4u * (i))
#define FW_CSR_COUNTER_LO(j) (0x100u + 8u * (j))
#define FW_CSR_COUNTER_HI(j) (0x104u + 8u * (j))

#define FW_ID_VALUE 0x54505545u /* "TPUE" */

#define FW_CTRL_START 0x1u
#define FW_CTRL_SOFT_RESET 0x2u

#define FW_STATUS_BUSY 0x1u
#define FW_STATUS_DONE 0x2u
#define FW_STATUS_ERROR 0x4u
#define FW_STATUS_ERROR_CODE(s) (((s) >> 8) & 0xFFu)

#define FW_ERR_ILLEGAL_OPCODE 1u
#define FW_ERR_DEADLOCK 2u
#define FW_ERR_ADDRESS 3u
#define FW_ERR_SEM_OVERFLOW 4u

#define FW_NUM_SEMS 32u
#define FW_NUM_COUNTERS 22u
#define FW_PROG_ALIGN 32u

#endif /* TPUEMU_FW_CSR_H */
