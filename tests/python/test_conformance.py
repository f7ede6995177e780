# SPDX-License-Identifier: Apache-2.0
"""The conformance suite's core checks (tests/e2e/test_conformance.cpp) from Python, on the
suite's backend (--tpuemu-backend, $TPUEMU_BOARD): what any device must do, seen through the
module a lab's pytest suite uses."""

import numpy as np
import pytest

import tpuemu


@pytest.fixture(scope="module")
def preset():
    return next(p for p in tpuemu.info()["presets"] if p["name"] == "default")


def test_info_matches_the_preset(device, preset):
    assert device.dim == preset["dim"]
    assert device.hbm_capacity == preset["hbm"]["capacity_bytes"]


def test_ping_echoes_the_payload(device):
    payload = bytes((i * 13 + 5) % 256 for i in range(300))
    assert device.ping(payload) == payload
    assert device.ping() == b""


def test_smem_round_trips(device, preset):
    words = (np.arange(preset["smem_words"], dtype=np.uint64) * 2654435761 % (1 << 32)).astype(np.uint32)
    device.write_smem(0, words)
    assert np.array_equal(device.read_smem(0, words.size), words)
    device.write_smem(5, np.array([-1, 7], dtype=np.int32))
    assert device.read_smem(5, 2).tolist() == [0xFFFFFFFF, 7]
    with pytest.raises(tpuemu.Error, match="uint32 or int32"):
        device.write_smem(0, np.zeros(4, np.float32))


def test_a_program_moves_data_and_is_counted(device):
    src = (np.arange(64 * device.dim) * 7 + 1).astype(np.uint8)  # 64 VMEM rows of dim bytes
    device.write_hbm(0x1000, src)
    device.load_program(tpuemu.assemble("dma hbm=0x1000 local=0 len=64 path=hbm2vmem signal=s0\n"
                                        "dma hbm=0x8000 local=0 len=64 path=vmem2hbm wait=s0>=1\n"
                                        "end\n"), 0x100000)
    result = device.run()
    assert result["status"] == "done"
    assert np.array_equal(device.read_hbm(0x8000, src.size), src)
    c = result["counters"]
    assert (c["bytes_hbm_to_vmem"], c["bytes_vmem_to_hbm"], c["instructions_fetched"]) == (src.size, src.size, 2)
    assert c["cycles"] > 64


def test_deadlock_is_reported_with_queue_states_and_reset_recovers(device):
    device.load_program(tpuemu.assemble("nop.mxu wait=s5>=2\nend\n"))
    result = device.run()
    assert result["status"] == "deadlock" and not result["ok"]
    assert result["queues"]["mxu"] == {"entries": 1, "head_waits": True, "wait_sem": 5}
    assert "s5>=2" in result["describe"]
    device.reset()
    assert device.state()["status"] == "idle"
    device.load_program(tpuemu.assemble("end\n"))
    assert device.run()["status"] == "done"


def test_the_watchdog_stops_a_runaway_program(device):
    device.load_program(tpuemu.assemble("dma hbm=0x0 local=0 len=1000 path=hbm2vmem\n" * 40 + "end\n"), 0x200000)
    assert device.run(max_cycles=2000)["status"] == "watchdog timeout"
    assert device.state()["status"] == "busy"
    device.reset()


def test_semaphores_are_set_read_and_waited_on(device):
    device.set_semaphore(7, 5)
    device.set_semaphore(3, 2)
    assert device.state()["semaphores"][7] == 5
    # The DMA waits for s3 >= 2 (and takes 2), then signals s9 twice through two NOPs.
    device.load_program(tpuemu.assemble("nop.dma wait=s3>=2 signal=s9\nnop.dma signal=s9\nend\n"), 0x4000)
    result = device.run()
    assert result["status"] == "done"
    assert [result["semaphores"][i] for i in (3, 9, 7)] == [0, 2, 5]
    with pytest.raises(tpuemu.Error):
        device.set_semaphore(32, 1)
    with pytest.raises(tpuemu.Error):
        device.set_semaphore(0, 0x10000)


def test_a_dma_beyond_vmem_is_an_address_error_at_its_instruction(device, preset):
    local = preset["vmem_rows"] - 4
    device.load_program(tpuemu.assemble(f"nop.dma\ndma hbm=0x0 local={local} len=8 path=hbm2vmem\nend\n"))
    result = device.run()
    assert (result["status"], result["error"], result["error_pc"]) == ("error", "address out of range", 1)
