"""``sampled-metrics recbole CHECKPOINT``: RecBole's test evaluation of a checkpoint,
rank by rank, under each protocol, as rank files with their sidecars (docs/recbole.md).

It runs the adapter (:mod:`sampled_metrics.frameworks.adapters.recbole`), which imports
recbole and torch only when it runs: in an environment without them the command says
so in one line. Per protocol it writes ``<out>/<model>-<protocol>.csv`` (and its
``.meta.json``) and prints one JSON line with RecBole's metrics of that evaluation.
``<model>`` is ``--name``, or the checkpoint file's stem (``saved/BPR.pth``: ``BPR``;
``saved/BPR-20.pth``: ``BPR-20``), so that two checkpoints of one class do not share
files; a file of another checkpoint, or of other users, is replaced only with
``--force`` (checked before the checkpoint is loaded).
With ``--users chosen.csv`` (``sampled-metrics plan``'s) the full ranking scores only
those users, each ranked as in the evaluation of every user; the sidecar's ``users``
says so (docs/deciding.md).
"""

from __future__ import annotations

import argparse
import json
import secrets
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..frameworks.adapters import UnknownUser
from ..frameworks.adapters.topk import TIES
from ..frameworks.decide import decide_ranks
from ..frameworks.rank_files import sampled_protocol
from ..frameworks.rank_meta import check_overwrite, write_rank_file
from ..frameworks.registry import FULL
from .arguments import protocol_name, remove_options
from .decide_models import (
    add_decide_options,
    check_decide,
    check_files,
    decide_settings,
    decision_report,
    write_decision,
)
from .design_file import read_chosen_users

__all__ = ["add_parser", "run"]

REMOVED = {
    "--modes": "give each protocol with --protocol (recbole-uni100, recbole-pop100, full)",
    "--checkpoint": "the checkpoint is the first argument: sampled-metrics recbole CHECKPOINT",
}
# How to write beside a rank file of other ranks, or replace it.
BESIDE = "give another --name or --out to write beside it, or --force to replace it"


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """The ``recbole`` sub-command's parser."""
    parser = subparsers.add_parser(
        "recbole",
        help="rank files (and sidecars) from RecBole's evaluation of a checkpoint",
        description="RecBole's test evaluation of a checkpoint, rank by rank, under each "
        "protocol, as rank files for sampled-metrics correct (docs/recbole.md). Run it in "
        "your RecBole environment, in the folder RecBole ran in.",
    )
    parser.add_argument(
        "checkpoints",
        nargs="+",
        metavar="CHECKPOINT",
        help="a RecBole checkpoint (saved/*.pth); with --decide two or more of one data set",
    )
    parser.add_argument(
        "--protocol",
        action="append",
        dest="protocols",
        type=protocol_name,
        metavar="NAME",
        help="recbole-uniN, recbole-popN (RecBole's eval modes uniN, popN) or full; repeat "
        f"for several (default: recbole-uni100 and {FULL})",
    )
    parser.add_argument(
        "--out",
        help="folder of the rank files (default: ranks); with --decide: where to write the "
        "sampled and exact rank files and the design (default: nothing written)",
    )
    parser.add_argument(
        "--users",
        metavar="CHOSEN",
        help="rank exactly only the users of this file's column user (RecBole tokens: "
        f"sampled-metrics plan's chosen.csv); with --protocol {FULL} alone (its default)",
    )
    parser.add_argument(
        "--name",
        help="the model's name: its rank column and the start of its files' names (default: "
        "the checkpoint file's stem, saved/BPR-20.pth: BPR-20)",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="replace rank files of another checkpoint or other users (default: stop)",
    )
    parser.add_argument(
        "--ties",
        choices=TIES,
        default="random",
        help="where the held-out item goes among items scored like it below RecBole's top k "
        "(within it, RecBole's own order): random (seeded, the pipeline's), optimistic "
        "(first) or pessimistic (last) (default: random)",
    )
    parser.add_argument(
        "--tie-seed",
        type=int,
        help="seed of the random tie order (default: the checkpoint's config seed)",
    )
    add_decide_options(parser, seed=True)
    remove_options(parser, REMOVED)
    return parser


def run(args: argparse.Namespace) -> int:
    """Write ``<out>/<model>-<protocol>.csv`` per protocol, each with its sidecar; one
    JSON line per protocol with RecBole's metrics and the file (RecBole logs to stderr)."""
    from ..frameworks.adapters import recbole

    check_decide(args, len(args.checkpoints), "checkpoints")
    if args.decide:
        return _decide(args)
    if args.seed is not None:
        raise ValueError("--seed goes with --decide (the waves' draws; --tie-seed: the ties')")
    if len(args.checkpoints) > 1:
        raise ValueError("several checkpoints go with --decide (or give one at a time)")
    args.checkpoint, args.out = args.checkpoints[0], args.out or "ranks"
    default = [FULL] if args.users else ["recbole-uni100", FULL]
    protocols = list(dict.fromkeys(args.protocols or default))
    for protocol in protocols:
        recbole.recbole_mode(protocol)  # a protocol RecBole lacks stops before loading
    if args.users and protocols != [FULL]:
        raise ValueError(
            f"--users ranks the chosen users exactly: give --protocol {FULL} alone (a sampled "
            "evaluation of fewer users would draw other items)"
        )
    users = read_chosen_users(args.users) if args.users else None
    if not Path(args.checkpoint).is_file():
        raise ValueError(f"{args.checkpoint}: no such file")
    name = recbole.checkpoint_name(args.checkpoint, args.name)
    subset = None if users is None else {"file": Path(args.users).name, "count": len(users)}
    claim = {"source": recbole.checkpoint_source(args.checkpoint), "users": subset}
    for protocol in protocols:  # before the evaluation, which takes long
        check_overwrite(Path(args.out) / f"{name}-{protocol}.csv", claim, force=args.force,
                        fix=BESIDE)  # fmt: skip
    options = {"name": name, "ties": args.ties, "seed": args.tie_seed, "users": users}
    try:
        found = recbole.ranks_from_checkpoint(args.checkpoint, protocols, **options)
    except UnknownUser as error:
        where = f"{args.users}: user {error.user}"
        raise ValueError(f"{where} is not a test user of the checkpoint's data set") from None
    files = []
    for protocol, (result, frame) in found.items():  # a sequential model's protocols renamed
        path = Path(args.out) / f"{name}-{protocol}.csv"
        meta = recbole.rank_file_meta(protocol, name, frame.attrs["tie_order"], subset,
                                      claim["source"])  # fmt: skip
        check_overwrite(path, meta, force=args.force, fix=BESIDE)
        files.append((protocol, result, frame, path, meta))
    for protocol, result, frame, path, meta in files:
        write_rank_file(frame, path, meta, force=args.force)
        record = {"protocol": protocol, "file": str(path), "column": name, "rows": len(frame)}
        record["recbole"] = {key: float(value) for key, value in result.items()}
        print(json.dumps(record), flush=True)
    return 0


def _decide(args: argparse.Namespace) -> int:
    """Load every checkpoint once, evaluate them on the same sampled items, run the
    sequential design's waves, print the verdicts and the cost (docs/recbole.md)."""
    from ..frameworks.adapters import recbole, recbole_decide

    protocols = args.protocols or ["recbole-uni100"]
    if len(protocols) != 1 or recbole.recbole_mode(protocols[0]) == FULL:
        raise ValueError("--decide takes one sampled --protocol (recbole-uniN, recbole-popN)")
    (protocol,) = protocols
    law, why = sampled_protocol(protocol).file_law(distinct_m=True)
    if law is None:
        raise ValueError(f"--decide needs a law of the sampled ranks: {why}")
    for option, value in (("--users", args.users), ("--name", args.name)):
        if value:
            raise ValueError(f"{option} does not go with --decide")
    for path in args.checkpoints:
        if not Path(path).is_file():
            raise ValueError(f"{path}: no such file")
    names = tuple(recbole.checkpoint_name(path) for path in args.checkpoints)
    if len(set(names)) < len(names):
        raise ValueError(f"two checkpoints are named {names}: give them distinct file names")
    sources = {name: recbole.checkpoint_source(p) for name, p in zip(names, args.checkpoints)}
    tie_order: dict = {}

    def meta(protocol: str, name: str, users: dict | None) -> dict:
        if not tie_order:  # before the evaluation: what check_overwrite reads
            return {"source": sources[name], "users": users}
        return recbole.rank_file_meta(protocol, name, tie_order, users, sources[name])

    out = Path(args.out) if args.out else None
    if out is not None:
        check_files(out, names, protocol, meta, args.force)
    loaded = recbole_decide.load_checkpoints(args.checkpoints)
    start = time.perf_counter()
    frame, order = recbole_decide.sampled_frame(loaded, protocol, ties=args.ties,
                                                seed=args.tie_seed)  # fmt: skip
    sampled_seconds = time.perf_counter() - start
    tie_order.update(order)
    tokens = frame["user"].to_numpy()

    def rank(rows: np.ndarray) -> pd.DataFrame:
        return recbole_decide.exact_frame(loaded, tokens[rows], ties=args.ties,
                                          seed=args.tie_seed)  # fmt: skip

    seed = secrets.randbits(32) if args.seed is None else args.seed
    decision = decide_ranks(frame, rank, law, **decide_settings(args, seed))
    decision.seconds["sampled"] = sampled_seconds
    label = f"of {', '.join(names)} ({protocol}, seed {seed})"
    print(decision_report(decision, label, loaded.seconds, args.json))
    if out is not None:
        again = write_decision(decision, out, protocol, meta, args.force)
        print(again, file=sys.stderr if args.json else sys.stdout)
    return 0
