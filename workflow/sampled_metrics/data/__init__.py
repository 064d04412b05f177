"""Data sets: download, readers, the leave-last-out split, and their facts.

* :mod:`.download`  fetch an archive atomically, with retries and an md5 check
* :mod:`.readers`   raw file -> events frame (``user``, ``item``, ``time``,
  optional ``rating``), binarization, a data set of config.yaml
* :mod:`.formats`   one loader per file format (MovieLens .dat, delimited)
* :mod:`.compressed` opening .gz files and .zip members within the decompressed-size limit
* :mod:`.synthetic` generated events of any size (``format: synthetic``): long-tailed
  item popularity and user activity
* :mod:`.split`     events -> :class:`Split` (section 9's leave-last-out), and its file
* :mod:`.facts`     assert known numbers of a data set or a split

Every problem with the input raises :class:`DataError` with one message that
names the file (and the line where it applies).
"""

from .download import check_md5, download, md5sum
from .errors import DataError
from .facts import check_facts
from .formats import load_delimited, load_movielens_dat
from .readers import as_interactions, binarize, load_events, read_events
from .split import (
    Split,
    SplitUsers,
    leave_last_out_split,
    load_split,
    save_split,
    split_users,
)
from .synthetic import check_synthetic, synthetic_events

__all__ = [
    "DataError",
    "Split",
    "SplitUsers",
    "as_interactions",
    "binarize",
    "check_facts",
    "check_md5",
    "check_synthetic",
    "download",
    "leave_last_out_split",
    "load_delimited",
    "load_events",
    "load_movielens_dat",
    "load_split",
    "md5sum",
    "read_events",
    "save_split",
    "split_users",
    "synthetic_events",
]
