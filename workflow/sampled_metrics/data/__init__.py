"""Data sets: download, readers, the leave-last-out split, and their facts.

* :mod:`.download`  fetch an archive atomically, with retries and an md5 check
* :mod:`.readers`   raw file -> events frame (``user``, ``item``, ``time``,
  optional ``rating``), binarization, a data set of config.yaml
* :mod:`.split`     events -> :class:`Split` (section 9's leave-last-out), and its file
* :mod:`.facts`     assert known numbers of a data set or a split

Every problem with the input raises :class:`DataError` with one message that
names the file (and the line where it applies).
"""

from .download import check_md5, download, md5sum
from .errors import DataError
from .facts import check_facts
from .readers import binarize, load_delimited, load_events, load_movielens_dat
from .split import Split, leave_last_out_split, load_split, save_split

__all__ = [
    "DataError",
    "Split",
    "binarize",
    "check_facts",
    "check_md5",
    "download",
    "leave_last_out_split",
    "load_delimited",
    "load_events",
    "load_movielens_dat",
    "load_split",
    "md5sum",
    "save_split",
]
