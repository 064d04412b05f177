"""Files written atomically, each with its SHA-256 recorded beside it; the bottom layer.

* :mod:`.atomic`  atomic writes (csv, text, npy, npz), checksums and their check
"""
