"""A rank file's sidecar: the small JSON file beside a file of ranks that says how the
ranks were made, so that ``sampled-metrics correct FILE`` needs no further option.

Every writer of rank files writes one (the adapters, :mod:`.rank_files`'s
:func:`~.rank_files.write_rank_files`, the pipeline's ``results/<dataset>/ranks/``),
computed by :func:`rank_meta` alone; :func:`read_rank_meta` reads and checks it. The
sidecar of ``ranks/BPR-recbole-uni100.csv`` is ``ranks/BPR-recbole-uni100.csv.meta.json``
(:func:`sidecar_path`)::

    {
     "sampled_metrics_rank_file": 1,
     "protocol": "recbole-uni100",
     "law": "hypergeometric",
     "m_column": "m",
     "n_column": "n",
     "rank_base": 1,
     "rank_columns": {"BPR": "BPR"},
     "ties": {"order": "framework", "detail": "torch.topk ..."},
     "produced_by": {"writer": "sampled-metrics recbole", "framework": "recbole 1.2.1",
                     "sampled_metrics": "0.1.0"}
    }

Keys: ``protocol`` (a name of :func:`~.registry.protocol_by_name`, ``full`` for a full
ranking), ``law`` (the law that reads the sampled ranks exactly,
:meth:`~.registry.Protocol.file_law`; null when none does; absent for ``full``), ``m``
(one m for every row) or ``m_column`` (absent for ``full``), ``n_column``, ``rank_base``
(1: the best rank is 1), ``rank_columns`` (rank column -> the model it ranks),
``ties`` (the order among tied scores: ``order`` one of :data:`TIE_ORDERS`, ``seed``
for ``random``, ``detail`` where more needs saying: the framework's own sort, or the
order within a framework's top k), optionally ``column_ties`` (rank column
-> its order, where it is not the file's), optionally ``users`` (the file holds only
some users' ranks: ``{"file": "chosen.csv", "count": 300}``, the file that chose them
and how many; absent: every user of the evaluation), optionally ``source`` (what the
ranks came from: ``{"from": "checkpoint saved/BPR.pth", "sha256": ...}``, a description
and the SHA-256 of the checkpoint's bytes, or of a command's data and options), and
``produced_by`` (the writer, the framework and its version, this package's version).

A sidecar must agree with its protocol: an ``m`` or ``law`` that is not the one the
protocol implies is an error naming both (:func:`read_rank_meta`). A writer replaces a
rank file only when the file's sidecar records the same source and users
(:func:`check_overwrite`): two checkpoints of one class written under one name stop
with one line instead of the second silently replacing the first.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import pandas as pd

from ..estimation.laws import LAWS
from ..io.atomic import write_csv, write_text
from .registry import FULL, Protocol, protocol_by_name

__all__ = [
    "SIDECAR_SUFFIX",
    "TIE_ORDERS",
    "RankMeta",
    "RankMetaError",
    "check_overwrite",
    "rank_meta",
    "read_rank_meta",
    "sidecar_path",
    "write_rank_file",
    "write_rank_meta",
]

SIDECAR_SUFFIX = ".meta.json"
FORMAT_KEY, FORMAT = "sampled_metrics_rank_file", 1
# The orders among tied scores a file can have: the pipeline's tie policies
# (passes.ties), and "framework": the framework's own sort, whatever it does with ties.
TIE_ORDERS = ("random", "pessimistic", "optimistic", "index", "framework")


class RankMetaError(ValueError):
    """A damaged sidecar: one line naming it."""


def sidecar_path(path: str | Path) -> Path:
    """The sidecar of a rank file: its name + ``.meta.json``.

    Examples
    --------
    >>> str(sidecar_path("ranks/BPR-full.csv"))
    'ranks/BPR-full.csv.meta.json'
    """
    path = Path(path)
    return path.with_name(path.name + SIDECAR_SUFFIX)


def _package_version() -> str | None:
    try:
        return version("sampled-metrics")
    except PackageNotFoundError:
        return None


def rank_meta(
    protocol: str,
    *,
    rank_columns: dict[str, str] | Iterable[str],
    n_column: str = "n",
    m_column: str | None = "m",
    distinct_m: bool = False,
    ties: str = "random",
    tie_seed: int | None = None,
    ties_detail: str | None = None,
    column_ties: dict | None = None,
    framework_top_k: int | None = None,
    users: dict | None = None,
    source: dict | None = None,
    writer: str,
    framework: str | None = None,
) -> dict:
    """The sidecar of a rank file (the module's docstring has the format).

    Parameters
    ----------
    protocol : str
        ``full`` or a protocol name (:func:`~.registry.protocol_by_name`).
    rank_columns : dict or list
        Rank column -> model; a list names each column after its model.
    n_column : str, default "n"
    m_column : str or None, default "m"
        The column of m (sampled files); None: the protocol's m for every row.
    distinct_m : bool, default False
        The m column counts each row's distinct items drawn (RecBole's adapter), not
        the draws: with a protocol that ranks a repeated item once, that is what
        makes the hypergeometric law exact (:meth:`~.registry.Protocol.file_law`).
    ties : str, default "random"
        The order among tied scores, one of :data:`TIE_ORDERS`.
    tie_seed : int, optional
        The seed of the ``random`` order.
    ties_detail : str, optional
        What the ``framework`` order is.
    column_ties : dict, optional
        Rank column -> its order, for columns whose order is not ``ties``.
    framework_top_k : int, optional
        Ranks up to this one are in the framework's own order among tied scores, which
        a full and a sampled evaluation need not share (RecBole's torch.topk).
    users : dict, optional
        The file ranks only some users: ``{"file": name, "count": N}``, the file that
        chose them (``sampled-metrics plan``'s) and their number.
    source : dict, optional
        What the ranks came from: ``{"from": description, "sha256": digest}``; a file
        is replaced only by ranks of the same digest (:func:`check_overwrite`).
    writer : str
        What wrote the file (``sampled-metrics recbole``, a module, a rule).
    framework : str, optional
        The framework and its version (``recbole 1.2.1``).

    Returns
    -------
    dict

    Examples
    --------
    >>> meta = rank_meta("recbole-uni20", rank_columns=["BPR"], distinct_m=True,
    ...                  ties="framework", ties_detail="torch.topk", writer="test")
    >>> meta["protocol"], meta["law"], meta["m_column"], meta["rank_columns"]
    ('recbole-uni20', 'hypergeometric', 'm', {'BPR': 'BPR'})
    >>> meta = rank_meta("ncf", rank_columns={"rank": "iALS"}, m_column=None, tie_seed=3,
    ...                  writer="test")
    >>> meta["m"], meta["law"], meta["ties"]
    (99, 'hypergeometric', {'order': 'random', 'seed': 3})
    >>> sorted(rank_meta("full", rank_columns=["A"], writer="test"))[:4]
    ['n_column', 'produced_by', 'protocol', 'rank_base']
    >>> rank_meta("full", rank_columns=["A"], users={"file": "chosen.csv", "count": 30},
    ...           writer="test")["users"]
    {'file': 'chosen.csv', 'count': 30}
    """
    columns = dict(rank_columns) if isinstance(rank_columns, dict) else {c: c for c in rank_columns}
    meta = {FORMAT_KEY: FORMAT, "protocol": protocol}
    sampled = protocol_by_name(protocol)  # None for a full ranking
    if sampled is not None:
        meta["law"] = sampled.file_law(distinct_m and m_column is not None)[0]
        meta.update({"m_column": m_column} if m_column is not None else {"m": sampled.m})
    meta.update({"n_column": n_column, "rank_base": 1, "rank_columns": columns})
    tie_order = _ties(ties, tie_seed, ties_detail)
    if framework_top_k is not None:
        tie_order["framework_top_k"] = int(framework_top_k)
    meta["ties"] = tie_order
    if column_ties:
        for order in column_ties.values():
            _ties(order, tie_seed, ties_detail)
        meta["column_ties"] = dict(column_ties)
    if users is not None:
        meta["users"] = {"file": str(users["file"]), "count": int(users["count"])}
    if source is not None:
        meta["source"] = {"from": str(source["from"]), "sha256": str(source["sha256"])}
    produced = {"writer": writer, "framework": framework, "sampled_metrics": _package_version()}
    meta["produced_by"] = {key: value for key, value in produced.items() if value is not None}
    return meta


def _ties(order: str, seed: int | None, detail: str | None) -> dict:
    if order not in TIE_ORDERS:
        raise ValueError(f"tie order {order!r} is not one of {', '.join(TIE_ORDERS)}")
    ties: dict[str, str | int] = {"order": order}
    if order == "random" and seed is not None:
        ties["seed"] = int(seed)
    if detail:
        ties["detail"] = detail
    return ties


def write_rank_meta(path: str | Path, meta: dict) -> Path:
    """Write the sidecar of the rank file ``path`` (atomically); returns its path."""
    sidecar = sidecar_path(path)
    write_text(json.dumps(meta, indent=1) + "\n", sidecar)
    return sidecar


def write_rank_file(
    frame: pd.DataFrame, path: str | Path, meta: dict, *, force: bool = False
) -> Path:
    """A rank file (csv, atomically) and its sidecar; returns the file's path.

    The sidecar's columns must be the frame's (a ``ValueError`` otherwise); an existing
    file of other ranks is replaced only with ``force`` (:func:`check_overwrite`)."""
    missing = [c for c in _named_columns(meta) if c not in frame.columns]
    if missing:
        raise ValueError(f"{path}: the sidecar names columns the frame lacks: {missing}")
    check_overwrite(path, meta, force=force)
    write_csv(frame, path)
    write_rank_meta(path, meta)
    return Path(path)


def check_overwrite(
    path: str | Path, meta: dict, *, force: bool = False, fix: str = "pass force=True to replace it"
) -> None:
    """Stop before writing ranks over a file of other ranks.

    ``path`` may be written when it does not exist, with ``force``, or when its sidecar
    records the same source (``source``'s ``sha256``, none on both sides for a writer
    that records none) and the same users (every user, or those of the same design
    file) as ``meta``: rewriting one's own file is fine; a file of another checkpoint,
    other data or options, other users, or one with no sidecar, is not.

    Parameters
    ----------
    path : str or pathlib.Path
        The rank file about to be written.
    meta : dict
        Its new sidecar (:func:`rank_meta`); only ``source`` and ``users`` are read.
    force : bool, default False
        Replace whatever is there.
    fix : str
        The end of the message: how to write beside the file, or replace it.

    Raises
    ------
    FileExistsError
        "<path>: exists, holding <what it holds>, not <what meta describes>; <fix>".

    Examples
    --------
    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "BPR-full.csv"
    >>> five = {"from": "checkpoint saved/BPR.pth", "sha256": "5" * 64}
    >>> meta = rank_meta("full", rank_columns=["BPR"], source=five, writer="t")
    >>> _ = path.write_text("user,BPR,n\\n1,1,9\\n"), write_rank_meta(path, meta)
    >>> check_overwrite(path, meta)  # the same checkpoint: fine
    >>> twenty = {"from": "checkpoint saved/BPR.pth", "sha256": "2" * 64}
    >>> check_overwrite(path, {"source": twenty}, fix="give --name")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    FileExistsError: ...BPR-full.csv: exists, holding the ranks of checkpoint saved/BPR.pth
    (SHA-256 555555555555), not of checkpoint saved/BPR.pth (SHA-256 222222222222); give --name
    >>> check_overwrite(path, {**meta, "users": {"file": "chosen.csv", "count": 3}})
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    FileExistsError: ...: exists, holding every user's ranks, not the ranks of the 3 users of
    chosen.csv; pass force=True to replace it
    """
    path = Path(path)
    if force or not path.exists():
        return
    try:
        old = json.loads(sidecar_path(path).read_text())
    except (OSError, UnicodeDecodeError, ValueError):
        old = None
    if not isinstance(old, dict) or old.get(FORMAT_KEY) != FORMAT:
        raise FileExistsError(f"{path}: exists, and no sidecar says what wrote it; {fix}")
    before, after = old.get("source") or {}, meta.get("source") or {}
    if before.get("sha256") != after.get("sha256"):
        same = before.get("from") == after.get("from")
        holds = f"the ranks of {_origin(old, same)}, not of {_origin(meta, same)}"
    elif (old.get("users") or {}).get("file") != (meta.get("users") or {}).get("file"):
        holds = f"{_users(old)}, not {_users(meta)}"
    else:
        return
    raise FileExistsError(f"{path}: exists, holding {holds}; {fix}")


def _origin(meta: dict, with_digest: bool) -> str:
    """What a sidecar's ranks came from, for messages."""
    source = meta.get("source")
    if source is None:
        writer = meta.get("produced_by", {}).get("writer", "an unknown writer")
        return f"a source not recorded (written by {writer})"
    return source["from"] + (f" (SHA-256 {source['sha256'][:12]})" if with_digest else "")


def _users(meta: dict) -> str:
    users = meta.get("users")
    if users is None:
        return "every user's ranks"
    plural = "" if users["count"] == 1 else "s"
    return f"the ranks of the {users['count']} user{plural} of {users['file']}"


def _named_columns(meta: dict) -> list:
    named = [*meta["rank_columns"], meta["n_column"]]
    return named + ([meta["m_column"]] if meta.get("m_column") else [])


@dataclass(frozen=True)
class RankMeta:
    """A sidecar read and checked (:func:`read_rank_meta`).

    Attributes
    ----------
    path : str
        The sidecar.
    protocol : str
    law : str or None
        None: a full ranking, or no law holds (``law_reason`` says why).
    m : int or None
    m_column : str or None
    n_column : str
    rank_columns : dict
        Rank column -> model.
    law_reason : str
    largest_m : int or None
        The most items a row's m may count: the protocol's m (None for a full ranking).
    framework_top_k : int or None
        Ranks up to this one are in the framework's own order among ties.
    """

    path: str
    protocol: str
    law: str | None
    m: int | None
    m_column: str | None
    n_column: str
    rank_columns: dict = field(default_factory=dict)
    law_reason: str = ""
    largest_m: int | None = None
    framework_top_k: int | None = None

    @property
    def full(self) -> bool:
        """A full ranking's exact ranks."""
        return self.protocol == FULL

    def check_columns(self, header: Sequence[str]) -> None:
        """A ValueError when a column the sidecar names is not in ``header``."""
        named = [(c, "rank_columns") for c in self.rank_columns] + [(self.n_column, "n_column")]
        named += [(self.m_column, "m_column")] if self.m_column else []
        for column, key in named:
            if column not in header:
                raise ValueError(
                    f"names column {column!r} ({key}), which the file does not have; "
                    f"it has: {', '.join(map(str, header))}"
                )


def read_rank_meta(path: str | Path, header: Sequence[str] | None = None) -> RankMeta | None:
    """The sidecar of the rank file ``path``, read and checked; None when it has none.

    Parameters
    ----------
    path : str or pathlib.Path
        The rank file.
    header : list of str, optional
        The file's columns: every column the sidecar names must be one of them.

    Raises
    ------
    RankMetaError
        Bad JSON, an unknown protocol, law or tie order, a missing key, an m or law
        that contradicts the protocol, or a column that is not in the file: one line
        naming the sidecar.

    Examples
    --------
    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "r.csv"
    >>> read_rank_meta(path) is None
    True
    >>> _ = write_rank_meta(path, rank_meta("elliot-50", rank_columns=["A"], writer="t"))
    >>> meta = read_rank_meta(path, header=["user", "A", "m", "n"])
    >>> meta.protocol, meta.law, meta.m_column, meta.rank_columns
    ('elliot-50', 'hypergeometric', 'm', {'A': 'A'})
    >>> try:
    ...     read_rank_meta(path, header=["user", "B", "m", "n"])
    ... except RankMetaError as error:
    ...     print(str(error).split("r.csv.meta.json: ")[1])
    names column 'A' (rank_columns), which the file does not have; it has: user, B, m, n
    """
    sidecar = sidecar_path(path)
    if not sidecar.exists():
        return None
    try:
        meta = json.loads(sidecar.read_text())
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise RankMetaError(f"{sidecar}: not a JSON sidecar: {_one_line(error)}") from None
    if not isinstance(meta, dict) or meta.get(FORMAT_KEY) != FORMAT:
        raise RankMetaError(f"{sidecar}: not a rank file's sidecar (no {FORMAT_KEY}: {FORMAT})")
    try:
        return _checked(meta, str(sidecar), header)
    except (KeyError, TypeError, ValueError) as error:
        text = f"missing key {error}" if isinstance(error, KeyError) else _one_line(error)
        raise RankMetaError(f"{sidecar}: {text}") from None


def _checked(meta: dict, sidecar: str, header: Sequence[str] | None) -> RankMeta:
    protocol = str(meta["protocol"])
    sampled = protocol_by_name(protocol)  # a ValueError names the protocols
    if meta.get("rank_base", 1) != 1:
        raise ValueError(f"rank_base {meta['rank_base']!r}: only 1-based ranks are read")
    _ties(meta["ties"]["order"], None, None)
    for order in meta.get("column_ties", {}).values():
        _ties(order, None, None)
    top_k = meta["ties"].get("framework_top_k")
    if top_k is not None and (not isinstance(top_k, int) or top_k < 1):
        raise ValueError(f"ties.framework_top_k {top_k!r} is not a positive integer")
    columns = meta["rank_columns"]
    if not isinstance(columns, dict) or not columns:
        raise ValueError("rank_columns must map each rank column to its model")
    law, reason, m, m_column = None, "", None, None
    if sampled is None:
        for key in ("law", "m", "m_column"):
            if meta.get(key) is not None:
                raise ValueError(f"{key} {meta[key]} contradicts protocol {FULL}, which ranks "
                                 f"every item: a full ranking has no {key}")  # fmt: skip
    else:
        law = meta["law"]
        if law is not None and law not in LAWS:
            raise ValueError(f"law {law!r} is not one of {', '.join(LAWS)}")
        m_column = meta.get("m_column")
        m = meta.get("m")
        if (m is None) == (m_column is None):
            raise ValueError("give one of m and m_column")
        if m is not None and (not isinstance(m, int) or m < 1):
            raise ValueError(f"m {m!r} is not a positive integer")
        _agrees_with(protocol, sampled, law, m, m_column is not None)
        if law is None:
            reason = sampled.file_law(distinct_m=False)[1]
    largest = None if sampled is None else sampled.m
    found = RankMeta(sidecar, protocol, law, m, m_column, str(meta["n_column"]), columns, reason,
                     largest, top_k)  # fmt: skip
    if header is not None:
        found.check_columns(header)
    return found


def _agrees_with(
    name: str, protocol: Protocol, law: str | None, m: int | None, m_column: bool
) -> None:
    """A ValueError naming the key, its value and what the protocol ``name`` implies,
    when the sidecar's m or law is not the protocol's (:meth:`~.registry.Protocol.file_law`:
    a column of m may count a collapsing protocol's distinct items drawn, or its draws)."""
    if m is not None and m != protocol.m:
        other = f" ({protocol.sized.format(N=m)} draws {m})" if protocol.sized else ""
        raise ValueError(
            f"m {m} contradicts protocol {name}, which draws m = {protocol.m} items "
            f"per held-out item{other}; correct the sidecar's m or protocol"
        )
    laws = {protocol.file_law(distinct_m=False)[0]}
    laws |= {protocol.file_law(distinct_m=True)[0]} if m_column else set()
    if law in laws:
        return
    expected, reason = protocol.file_law(distinct_m=m_column)
    said = f"law {'null' if law is None else law} contradicts protocol {name}"
    if expected is None:
        raise ValueError(f"{said}, which no law reads exactly ({reason}); write law null "
                         "(correct --law then reads the file as uniform draws)")  # fmt: skip
    raise ValueError(f"{said}, which the {expected} law reads ({_draws(protocol)}); correct "
                     "the sidecar's law or protocol")  # fmt: skip


def _draws(protocol: Protocol) -> str:
    """How ``protocol`` draws, in the words that decide its law."""
    if not protocol.replacement:
        return f"{protocol.m} distinct items drawn"
    if protocol.collapse:
        return "draws with replacement, each distinct item ranked once, m a row's distinct items"
    return f"{protocol.m} draws with replacement, each ranked"


def _one_line(error: BaseException) -> str:
    return " ".join(str(error).split()) or type(error).__name__
