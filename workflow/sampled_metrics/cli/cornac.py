"""``sampled-metrics cornac DATA --model SPEC ...``: train cornac models on a data file,
split as cornac splits it, and write cornac's full ranking and each protocol's sampled
ranks as rank files with their sidecars (docs/cornac.md). No Python needed.

The data: cornac's ``Reader`` format ``UIR`` (user, item, rating; tab-separated, no
header unless ``--skip-lines``); split by ``RatioSplit(test_size, seed)``, or given as
two files (``--test``: ``BaseMethod.from_splits``), unknown users and items excluded as
cornac's evaluation excludes them. A model: the name of a class of ``cornac.models``
with literal keyword arguments (``BPR``, ``"BPR(k=8, max_iter=200)"``), seeded with
``--seed`` when it takes a seed and none is given, and named by its ``name`` (cornac's
default: the class), or where two models share one, by the arguments that tell them
apart (:func:`model_labels`: ``BPR(k=10)``, ``BPR(k=50)``). The files are the adapter's
(:func:`sampled_metrics.frameworks.adapters.cornac.rank_files`, on cornac's full sort):
``<out>/cornac-full.csv`` (each model's rank in cornac's order and with every tie
above) and ``<out>/cornac-<protocol>.csv``. With ``--users chosen.csv``
(``sampled-metrics plan``'s) only the full file, of those users alone, each ranked as
in the evaluation of every user; its sidecar's ``users`` says so (docs/deciding.md).
A file of other data, models or options, or of other users, is replaced only with
``--force`` (checked before the models are trained).

Not covered: saved models (``Recommender.load`` gives no data split to rank), a
validation set, cross-validation, models that need side information (text, images,
graphs) or are not rankers of (user, item) pairs. cornac is imported when the command
runs: without it, one line says where to run it.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import inspect
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..frameworks.adapters import UnknownUser
from ..frameworks.decide import decide_ranks
from ..frameworks.rank_meta import check_overwrite, rank_meta, write_rank_file
from ..frameworks.registry import FULL, protocol_by_name
from ..io.atomic import sha256
from .arguments import protocol_name
from .decide_models import (
    add_decide_options,
    check_decide,
    check_files,
    decide_settings,
    decision_report,
    write_decision,
)
from .design_file import read_chosen_users

__all__ = ["add_parser", "model_labels", "model_spec", "run"]

TIES = "cornac's Recommender.rank (k=-1): numpy's argsort order"
# How to write beside a rank file of other ranks, or replace it.
BESIDE = "give another --out to write beside it, or --force to replace it"


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


def model_labels(specs: list, names: list) -> list[str]:
    """The rank column of each model: its ``name`` (``names``: each model's own, cornac's
    default the class), or, where two models share a name none was given, that name
    with the arguments that tell them apart.

    Parameters
    ----------
    specs : list of (str, dict)
        The ``--model`` specs (:func:`model_spec`).
    names : list of str
        Each model's ``name``.

    Examples
    --------
    >>> specs = [("BPR", {"k": 10, "max_iter": 9}), ("BPR", {"k": 50, "max_iter": 9}),
    ...          ("BPR", {"max_iter": 9}), ("MostPop", {})]
    >>> model_labels(specs, ["BPR", "BPR", "BPR", "MostPop"])
    ['BPR(k=10)', 'BPR(k=50)', 'BPR', 'MostPop']
    >>> model_labels([("BPR", {"k": 8}), ("BPR", {"k": 8})], ["BPR", "BPR"])
    Traceback (most recent call last):
    ValueError: --model BPR(k=8) and --model BPR(k=8) are both named BPR: give each its own
    name, e.g. --model "BPR(k=8, name='BPR-2')"
    """
    labels = []
    for (_, given), name in zip(specs, names):
        twins = [args for (_, args), other in zip(specs, names) if other == name]
        keys = {key for args in twins for key in args} - {"name"}
        apart = [k for k in sorted(keys) if len({repr(args.get(k)) for args in twins}) > 1]
        shown = ", ".join(f"{key}={given[key]!r}" for key in apart if key in given)
        labels.append(f"{name}({shown})" if len(twins) > 1 and shown else name)
    for label in labels:
        same = [(model, given) for (model, given), other in zip(specs, labels) if other == label]
        if len(same) > 1:
            (model, given), second = same[1], {**same[1][1], "name": f"{label}-2"}
            raise ValueError(
                f"--model {_spec(*same[0])} and --model {_spec(model, given)} are both named "
                f'{label}: give each its own name, e.g. --model "{_spec(model, second)}"'
            )
    return labels


def _spec(model: str, arguments: dict) -> str:
    """A model as ``--model`` takes it."""
    listed = ", ".join(f"{key}={value!r}" for key, value in arguments.items())
    return f"{model}({listed})" if arguments else model


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
        help="a class of cornac.models, with keyword arguments: BPR, 'BPR(k=8)', MostPop, "
        "\"BPR(k=50, name='BPR-50')\" (the rank column: name, default the class); repeat "
        "for several",
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
    parser.add_argument(
        "--seed", type=int, default=0, help="the split's, models', draws' and waves' (0)"
    )
    parser.add_argument(
        "--out",
        help="folder of the rank files (default: ranks); with --decide: where to write the "
        "sampled and exact rank files and the design (default: nothing written)",
    )
    parser.add_argument(
        "--users",
        metavar="CHOSEN",
        help="rank exactly only the users of this file's column user (sampled-metrics "
        f"plan's chosen.csv); with --protocol {FULL} alone (its default)",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="replace rank files of other data, models, options or users (default: stop)",
    )
    add_decide_options(parser, seed=False)
    return parser


def _cornac():
    from ..frameworks.adapters.cornac import require_cornac

    require_cornac()
    import cornac

    return cornac


def _read(cornac, path: str, args) -> list:
    """The UIR lines of ``path`` (a file :func:`_source` found)."""
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
    check_decide(args, len(args.models), "models")
    if args.decide:
        return _decide(args, cornac)
    args.out = args.out or "ranks"
    protocols = list(dict.fromkeys(args.protocols or ([FULL] if args.users else ["ncf", FULL])))
    if args.users and protocols != [FULL]:
        raise ValueError(
            f"--users ranks the chosen users exactly: give --protocol {FULL} alone (a sampled "
            "file draws from every user's ranking)"
        )
    users = read_chosen_users(args.users) if args.users else None
    sampled = [name for name in protocols if protocol_by_name(name) is not None] or ["ncf"]
    built = [_model(cornac, name, kwargs, args.seed) for name, kwargs in args.models]
    labels = model_labels(args.models, [model.name for model in built])
    subset = None if users is None else {"file": Path(args.users).name, "count": len(users)}
    claim = {"source": _source(args, labels), "users": subset}
    for protocol in protocols:  # before the training, which takes long
        check_overwrite(_path(args, protocol), claim, force=args.force, fix=BESIDE)
    split, models = _trained(cornac, args, labels, built)
    framework = f"cornac {cornac.__version__}"
    if users is not None:
        table = _chosen(models, split, users, args.users)
        _write(args, FULL, table, list(models), framework, claim)
        return 0
    from ..frameworks.adapters.cornac import rank_files

    for protocol in sampled:
        exact, frame = rank_files(models, split, protocol, k=-1, seed=args.seed)
        files = {FULL: exact} if FULL in protocols and protocol == sampled[0] else {}
        if protocol in protocols:
            files[protocol] = frame
        for name, table in files.items():
            _write(args, name, table, list(models), framework, claim)
    return 0


def _trained(cornac, args, labels: list, built: list) -> tuple[Any, dict[str, Any]]:
    """The data split as cornac splits it, and every model trained on it."""
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
    for label, model in zip(labels, built):
        model.fit(split.train_set, split.val_set)
        models[label] = model
    return split, models


def _decide(args: argparse.Namespace, cornac) -> int:
    """Train every model once, draw the protocol's sampled ranks of every model from
    cornac's order (the same items for every model), run the sequential design's waves,
    print the verdicts and the cost (docs/cornac.md)."""
    from ..frameworks.adapters.cornac import exact_rank_table, rank_files

    protocols = args.protocols or ["ncf"]
    paired = protocol_by_name(protocols[0]) if len(protocols) == 1 else None
    if paired is None or not paired.paired:
        raise ValueError("--decide takes one paired sampled --protocol (ncf, elliot-N, ...)")
    law, why = paired.file_law(distinct_m=False)
    if law is None:
        raise ValueError(f"--decide needs a law of the sampled ranks: {why}")
    if args.users:
        raise ValueError("--users does not go with --decide")
    built = [_model(cornac, name, kwargs, args.seed) for name, kwargs in args.models]
    labels = model_labels(args.models, [model.name for model in built])
    source = _source(args, labels)
    framework = f"cornac {cornac.__version__}, seed {args.seed}"

    def meta(protocol: str, name: str, users: dict | None) -> dict:
        return rank_meta(protocol, rank_columns=[name],
                         m_column=None if protocol == FULL else "m", ties="framework",
                         ties_detail=TIES, users=users, source=source,
                         writer="sampled-metrics cornac", framework=framework)  # fmt: skip

    out = Path(args.out) if args.out else None
    if out is not None:
        check_files(out, tuple(labels), paired.name, meta, args.force)
    start = time.perf_counter()
    split, models = _trained(cornac, args, labels, built)
    trained = time.perf_counter() - start
    _, frame = rank_files(models, split, paired.name, k=-1, seed=args.seed)
    sampled_seconds = time.perf_counter() - start - trained
    tokens = frame["user"].to_numpy()

    def rank(rows: np.ndarray) -> pd.DataFrame:
        table = exact_rank_table(models, split, k=-1, users=tokens[rows].tolist())
        return table.set_index("user").loc[tokens[rows]].reset_index()

    decision = decide_ranks(frame.drop(columns="item"), rank, law,
                            **decide_settings(args, args.seed))  # fmt: skip
    decision.seconds["sampled"] = sampled_seconds
    label = f"of {', '.join(labels)} ({paired.name}, seed {args.seed})"
    print(decision_report(decision, label, trained, args.json))
    if out is not None:
        again = write_decision(decision, out, paired.name, meta, args.force)
        print(again, file=sys.stderr if args.json else sys.stdout)
    return 0


def _path(args, protocol: str) -> Path:
    return Path(args.out) / f"cornac-{protocol}.csv"


def _source(args, labels: list) -> dict:
    """The sidecar's ``source``: the data files and the models, and a digest of the
    files' bytes and of every option the ranks depend on."""
    files = [args.data] + ([args.test] if args.test else [])
    for path in files:
        if not Path(path).is_file():
            raise ValueError(f"{path}: no such file")
    models = [[name, repr(sorted(kwargs.items()))] for name, kwargs in args.models]
    options = [args.seed, args.test_size, args.rating_threshold, args.sep, args.skip_lines]
    record = json.dumps([[sha256(path) for path in files], models, options])
    described = f"{' and '.join(files)}, models {', '.join(labels)}, seed {args.seed}"
    return {"from": described, "sha256": hashlib.sha256(record.encode()).hexdigest()}


def _chosen(models: dict, split, users: list, source: str):
    """The full file of the chosen users alone."""
    from ..frameworks.adapters.cornac import exact_rank_table

    try:
        return exact_rank_table(models, split, k=-1, users=users)
    except UnknownUser as error:
        raise ValueError(f"{source}: user {error.user} is not a test user of the split") from None


def _write(args, protocol: str, table, models: list, framework: str, claim: dict) -> None:
    """``<out>/cornac-<protocol>.csv`` with its sidecar, and its JSON line."""
    path = _path(args, protocol)
    meta = _meta(protocol, models, framework, args.seed, claim["users"], claim["source"])
    write_rank_file(table, path, meta, force=args.force)
    record = {"protocol": protocol, "file": str(path), "rows": len(table)}
    print(json.dumps({**record, "models": models}), flush=True)


def _meta(protocol: str, models: list, framework: str, seed: int, users, source) -> dict:
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
        source=source,
        writer="sampled-metrics cornac",
        framework=f"{framework}, seed {seed}",
    )
