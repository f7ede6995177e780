# SPDX-License-Identifier: Apache-2.0
"""The exceptions of tpuemu: the extension raises these classes (handed over at import)."""


class Error(Exception):
    """A tpuemu error: the one line the CLI prints (cause and place)."""


class OutOfMemory(Error):
    """The allocator could not place a buffer: requested, needed (as the policy rounds it) and
    whether the request would fit without fragmentation."""

    requested = 0
    needed = 0
    fits_without_fragmentation = False
    report = None  # analyze_hlo and replay: the whole report


# Tracebacks name them as users import them: tpuemu.Error, tpuemu.OutOfMemory.
Error.__module__ = OutOfMemory.__module__ = "tpuemu"
