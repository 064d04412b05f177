"""``sampled-metrics cornac DATA --model SPEC ...``: train cornac models on a data file,
split as cornac splits it, and write cornac's full ranking and each protocol's sampled
ranks as rank files with their sidecars (docs/cornac.md). No Python needed.

The data: cornac's ``Reader`` format ``UIR`` (user, item, rating; tab-separated, no
header unless ``--skip-lines``); split by ``RatioSplit(test_size, seed)``, or given as
two files (``--test``: ``BaseMethod.from_splits``), unknown users and items excluded as
cornac's evaluation excludes them. A model: the name of a class of ``cornac.models``
with literal keyword arguments (``BPR``, ``"BPR(k=8, max_iter=200)"``), seeded with
``--seed`` when it takes a seed and none is given. The files are the adapter's
(:func:`sampled_metrics.frameworks.adapters.cornac.rank_files`, on cornac's full sort):
``<out>/cornac-full.csv`` (each model's rank in cornac's order and with every tie
above) and ``<out>/cornac-<protocol>.csv``. With ``--users chosen.csv``
(``sampled-metrics plan``'s) only the full file, of those users alone, each ranked as
in the evaluation of every user; its sidecar's ``users`` says so (docs/deciding.md).

Not covered: saved models (``Recommender.load`` gives no data split to rank), a
validation set, cross-validation, models that need side information (text, images,
graphs) or are not rankers of (user, item) pairs. cornac is imported when the command
runs: without it, one line says where to run it.
"""

from __future__ import annotations

import argparse
import ast
import inspect
import json
from pathlib import Path
from typing import Any

from ..frameworks.adapters import FrameworkNotInstalled, UnknownUser
from ..frameworks.rank_meta import rank_meta, write_rank_file
from ..frameworks.registry import FULL, protocol_by_name
from .arguments import protocol_name
from .design_file import read_chosen_users

__all__ = ["add_parser", "model_spec", "run"]

NOT_INSTALLED = (
    "cornac is not installed in this environment: run this in cornac's environment "
    "(docs/cornac.md: .ci/envs/cornac.sh)"
)
TIES = "cornac's Recommender.rank (k=-1): numpy's argsort order"


def model_spec(text: str) -> tuple[str, dict]:
    """A model given on the command line: a class name and literal keyword arguments.

    Examples
    --------
    >>> model_spec("BPR(k=8, learning_rate=0.05)")
    ('BPR', {'k': 8, 'learning_rate': 0.05})
    >>> model_spec("MostPop")
    ('MostPop', {})
    >>> model_spec("BPR(8)")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: 'BPR(8)': give a cornac model as NAME or NAME(key=value, ...)
    """
    bad = argparse.ArgumentTypeError(
        f"{text!r}: give a cornac model as NAME or NAME(key=value, ...)"
    )
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        raise bad from None
    if isinstance(node, ast.Name):
        return node.id, {}
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)) or node.args:
        raise bad
    try:
        return node.func.id, {k.arg: ast.literal_eval(k.value) for k in node.keywords}
    except (ValueError, TypeError):
        raise bad from None


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """The ``cornac`` sub-command's parser."""
    parser = subparsers.add_parser(
        "cornac",
        help="rank files (and sidecars) of cornac models trained on a data file",
        description="Train cornac models on a data file split as cornac splits it, and "
        "write cornac's full ranking and each protocol's sampled ranks as rank files for "
        "sampled-metrics correct (docs/cornac.md). Run it where cornac is installed.",
    )
    parser.add_argument("data", help="user, item, rating lines (cornac's UIR format)")
    parser.add_argument(
        "--model",
        action="append",
        dest="models",
        required=True,
        type=model_spec,
        metavar="SPEC",
        help="a class of cornac.models, with keyword arguments: BPR, 'BPR(k=8)', MostPop; "
        "repeat for several",
    )
    parser.add_argument(
        "--protocol",
        action="append",
        dest="protocols",
        type=protocol_name,
        metavar="NAME",
        help=f"{FULL} (cornac's ranking) or a framework's sampled protocol (ncf, "
        f"elliot-N, daisyrec, ...); repeat for several (default: ncf and {FULL})",
    )
    parser.add_argument("--test", metavar="FILE", help="the test interactions (no split)")
    parser.add_argument(
        "--test-size", type=float, default=0.2, help="RatioSplit's test share (0.2)"
    )
    parser.add_argument(
        "--rating-threshold", type=float, default=1.0, help="a positive's least rating (1.0)"
    )
    parser.add_argument("--sep", default="\t", help="the data's separator (a tab)")
    parser.add_argument("--skip-lines", type=int, default=0, help="header lines to skip (0)")
    parser.add_argument("--seed", type=int, default=0, help="the split's, models' and draws'")
    parser.add_argument("--out", default="ranks", help="folder of the rank files (ranks)")
    parser.add_argument(
        "--users",
        metavar="CHOSEN",
        help="rank exactly only the users of this file's column user (sampled-metrics "
        f"plan's chosen.csv); with --protocol {FULL} alone (its default)",
    )
    return parser


def _cornac():
    try:
        import cornac
    except ModuleNotFoundError:
        raise FrameworkNotInstalled(NOT_INSTALLED) from None
    return cornac


def _read(cornac, path: str, args) -> list:
    if not Path(path).is_file():
        raise ValueError(f"{path}: no such file")
    try:
        return cornac.data.Reader().read(path, fmt="UIR", sep=args.sep, skip_lines=args.skip_lines)
    except (ValueError, IndexError) as error:
        raise ValueError(f"{path}: not user, item, rating lines: {error}") from None


def _model(cornac, name: str, kwargs: dict, seed: int):
    cls = getattr(cornac.models, name, None)
    if not (inspect.isclass(cls) and issubclass(cls, cornac.models.Recommender)):
        raise ValueError(f"--model {name}: no such model in cornac.models")
    if "seed" in inspect.signature(cls).parameters and "seed" not in kwargs:
        kwargs = {**kwargs, "seed": seed}
    try:
        return cls(**kwargs)
    except TypeError as error:
        raise ValueError(f"--model {name}: {error}") from None


def run(args: argparse.Namespace) -> int:
    """Split, train, write ``<out>/cornac-<protocol>.csv`` per protocol with its sidecar;
    one JSON line per file."""
    cornac = _cornac()
    protocols = list(dict.fromkeys(args.protocols or ([FULL] if args.users else ["ncf", FULL])))
    if args.users and protocols != [FULL]:
        raise ValueError(
            f"--users ranks the chosen users exactly: give --protocol {FULL} alone (a sampled "
            "file draws from every user's ranking)"
        )
    users = read_chosen_users(args.users) if args.users else None
    sampled = [name for name in protocols if protocol_by_name(name) is not None] or ["ncf"]
    data = _read(cornac, args.data, args)
    common = {"rating_threshold": args.rating_threshold, "seed": args.seed, "verbose": False}
    if args.test is None:
        split = cornac.eval_methods.RatioSplit(
            data, test_size=args.test_size, exclude_unknowns=True, **common
        )
    else:
        split = cornac.eval_methods.BaseMethod.from_splits(
            data, _read(cornac, args.test, args), exclude_unknowns=True, **common
        )
    models: dict[str, Any] = {}
    for name, kwargs in args.models:
        model = _model(cornac, name, kwargs, args.seed)
        label = model.name if model.name not in models else f"{model.name}_{len(models)}"
        model.fit(split.train_set, split.val_set)
        models[label] = model
    framework = f"cornac {cornac.__version__}"
    if users is not None:
        subset = {"file": Path(args.users).name, "count": len(users)}
        table = _chosen(models, split, users, args.users)
        _write(args, FULL, table, list(models), framework, subset)
        return 0
    from ..frameworks.adapters.cornac import rank_files

    for protocol in sampled:
        exact, frame = rank_files(models, split, protocol, k=-1, seed=args.seed)
        files = {FULL: exact} if FULL in protocols and protocol == sampled[0] else {}
        if protocol in protocols:
            files[protocol] = frame
        for name, table in files.items():
            _write(args, name, table, list(models), framework)
    return 0


def _chosen(models: dict, split, users: list, source: str):
    """The full file of the chosen users alone."""
    from ..frameworks.adapters.cornac import exact_rank_table

    try:
        return exact_rank_table(models, split, k=-1, users=users)
    except UnknownUser as error:
        raise ValueError(f"{source}: user {error.user} is not a test user of the split") from None


def _write(args, protocol: str, table, models: list, framework: str, users=None) -> None:
    """``<out>/cornac-<protocol>.csv`` with its sidecar, and its JSON line."""
    path = Path(args.out) / f"cornac-{protocol}.csv"
    write_rank_file(table, path, _meta(protocol, models, framework, args.seed, users))
    record = {"protocol": protocol, "file": str(path), "rows": len(table)}
    print(json.dumps({**record, "models": models}), flush=True)


def _meta(protocol: str, models: list, framework: str, seed: int, users=None) -> dict:
    """The sidecar: cornac's order; in the full file each model's ``_pessimistic``
    column too (every tie above: what cornac's AUC and MAP read)."""
    columns = {model: model for model in models}
    column_ties = None
    if protocol == FULL:
        columns.update({f"{model}_pessimistic": model for model in models})
        column_ties = {f"{model}_pessimistic": "pessimistic" for model in models}
    return rank_meta(
        protocol,
        rank_columns=columns,
        m_column=None if protocol == FULL else "m",
        ties="framework",
        ties_detail=TIES,
        column_ties=column_ties,
        users=users,
        writer="sampled-metrics cornac",
        framework=f"{framework}, seed {seed}",
    )
