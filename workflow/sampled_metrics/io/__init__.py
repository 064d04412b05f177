"""Files written atomically, each with its SHA-256 recorded beside it, work spread
over forked processes, the optional dependencies; the bottom layer.

* :mod:`.atomic`  atomic writes (csv, text, npy, npz), checksums and their check
* :mod:`.forked`  a map over forked processes that inherit the arrays they read
* :mod:`.allocator`  glibc's allocator set to reuse freed memory (no page fault per array)
* :mod:`.optional`  an optional dependency imported, or one error naming the extra to install
"""
