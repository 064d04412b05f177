"""glibc's allocator set to keep the memory numpy frees for its next arrays.

By default glibc serves an allocation above its mmap threshold (128 KiB at start,
raised to the largest block freed since) with a fresh mapping, and returns the top
of its heap to the kernel once more than twice that lies free there. A loop that
makes and frees arrays of a few MB (a repetition's draws, a chunk of scores) then
pays a page fault for every 4 KiB page of every array, each page zeroed by the
kernel. With the settings below the freed memory serves the next arrays without those
faults, and the outputs are the same bytes. The cost is memory kept after a peak:
up to :data:`TRIM_THRESHOLD` of freed heap per process.
"""

from __future__ import annotations

import ctypes

__all__ = ["MMAP_THRESHOLD", "TRIM_THRESHOLD", "reuse_freed_memory"]

# mallopt's parameters (glibc's malloc.h)
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
# Blocks above this still get their own mapping (returned whole when freed): glibc's
# largest default threshold on 64-bit systems.
MMAP_THRESHOLD = 32 * 2**20
# Freed memory kept at the top of the heap before it goes back to the kernel.
TRIM_THRESHOLD = 256 * 2**20


def reuse_freed_memory() -> bool:
    """Set glibc's mmap and trim thresholds to :data:`MMAP_THRESHOLD` and
    :data:`TRIM_THRESHOLD` for the rest of this process and the processes it forks
    (see the module docstring). Elsewhere than glibc (macOS, musl) nothing changes.

    Returns
    -------
    bool
        Whether the allocator took both settings.

    Examples
    --------
    >>> import platform
    >>> reuse_freed_memory() or platform.libc_ver()[0] != "glibc"
    True
    """
    try:
        mallopt = ctypes.CDLL(None).mallopt  # the process's own C library
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    return bool(
        mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD) and mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD)
    )
