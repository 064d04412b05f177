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
from pathlib import Path
from typing import Any

from ..frameworks.adapters import UnknownUser
from ..frameworks.adapters.topk import TIES
from ..frameworks.rank_meta import check_overwrite, write_rank_file
from ..frameworks.registry import FULL
from .arguments import protocol_name, remove_options
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
    parser.add_argument("checkpoint", help="a RecBole checkpoint (saved/*.pth)")
    parser.add_argument(
        "--protocol",
        action="append",
        dest="protocols",
        type=protocol_name,
        metavar="NAME",
        help="recbole-uniN, recbole-popN (RecBole's eval modes uniN, popN) or full; repeat "
        f"for several (default: recbole-uni100 and {FULL})",
    )
    parser.add_argument("--out", default="ranks", help="folder of the rank files (ranks)")
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
    remove_options(parser, REMOVED)
    return parser


def run(args: argparse.Namespace) -> int:
    """Write ``<out>/<model>-<protocol>.csv`` per protocol, each with its sidecar; one
    JSON line per protocol with RecBole's metrics and the file (RecBole logs to stderr)."""
    from ..frameworks.adapters import recbole

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
