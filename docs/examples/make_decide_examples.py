"""The worked example of docs/deciding.md: two models of a synthetic data set, their
sampled ranks (phase 1), the exact ranks of the users a design chose (phase 2), every
user's exact ranks (the truth), and the doc's outputs regenerated.

The data: users and items with latent tastes (a low-rank affinity plus item
popularity); each user's training items and held-out item are drawn in proportion to
exp(affinity) (Gumbel top-k); model A scores the affinity with a little noise, model B
with more, so that A is the better model. Scores are arrays; the ranks come from
:func:`sampled_metrics.frameworks.rank_files.rank_files` (NCF's protocol: 99 items
sampled without replacement) and :func:`~sampled_metrics.frameworks.rank_files.exact_rank_frame`
(only the chosen users scored and ranked).

    python docs/examples/make_decide_examples.py sampled DIR        # DIR/ranks.csv: phase 1
    python docs/examples/make_decide_examples.py exact CHOSEN OUT   # the chosen users, exactly
    python docs/examples/make_decide_examples.py full OUT           # every user, exactly
    python docs/examples/make_decide_examples.py many OUT           # four models, exactly
    python docs/examples/make_decide_examples.py waves WAVE         # the sequential loop on
    python docs/examples/make_decide_examples.py --update-doc       # rerun docs/deciding.md

tests/test_cli_decide.py reruns the commands of docs/deciding.md and checks that the
document shows exactly what they print.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import re
import shlex
import sys
import tempfile
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.sparse as sp

from sampled_metrics.estimation.metrics import metric_by_name
from sampled_metrics.frameworks.rank_files import exact_rank_frame, rank_files
from sampled_metrics.frameworks.rank_meta import rank_meta, write_rank_file

DOC = Path(__file__).resolve().parents[1] / "deciding.md"
SEED = 45
USERS, ITEMS, DIMENSIONS, HISTORY = 3000, 3706, 16, 40
NOISE = {"A": 0.6, "B": 0.9}  # the models' score noise, in units of the affinity's spread
PROTOCOL = "ncf"
WRITER = "docs/examples/make_decide_examples.py"
# A ```console block of the doc: "$ command" lines, each followed by its output.
BLOCK = re.compile(r"^```console\n(.*?)^```\n", re.DOTALL | re.MULTILINE)


@lru_cache(maxsize=1)
def data(seed: int = SEED) -> tuple:
    """(train (users x items, csr), held-out items, {model: scores}) of the example."""
    rng = np.random.default_rng(seed)
    users = rng.normal(size=(USERS, DIMENSIONS))
    items = rng.normal(size=(ITEMS, DIMENSIONS))
    popularity = rng.normal(scale=1.0, size=ITEMS)
    affinity = (users @ items.T) / np.sqrt(DIMENSIONS) + popularity
    # Gumbel top-k: HISTORY + 1 items drawn without replacement, in proportion to exp(affinity)
    drawn = np.argsort(-(affinity + rng.gumbel(size=affinity.shape)), axis=1)[:, : HISTORY + 1]
    rows = np.repeat(np.arange(USERS), HISTORY)
    train = sp.csr_matrix((np.ones(rows.size), (rows, drawn[:, 1:].ravel())), shape=(USERS, ITEMS))
    spread = affinity.std()
    scores = {
        name: (affinity + rng.normal(scale=noise * spread, size=affinity.shape)).astype(np.float32)
        for name, noise in NOISE.items()
    }
    return train, drawn[:, 0], scores


def sampled(directory) -> list[str]:
    """Phase 1: every user's sampled ranks under NCF's protocol, with their sidecar."""
    train, test, scores = data()
    _, frame = rank_files(scores, train, test, PROTOCOL, seed=SEED, users=[])
    path = Path(directory) / "ranks.csv"
    write_rank_file(frame, path, rank_meta(PROTOCOL, rank_columns=list(scores), writer=WRITER))
    return [f"{path}: {len(frame)} users, models {' and '.join(scores)}, {PROTOCOL}'s protocol"]


def exact(chosen, out) -> list[str]:
    """Phase 2: the exact ranks of the users in ``chosen`` (a design's csv) alone."""
    train, test, scores = data()
    users = pd.read_csv(chosen)["user"].to_numpy()
    frame = exact_rank_frame(scores, train, test, users=users)
    write_rank_file(frame, out, rank_meta("full", rank_columns=list(scores), writer=WRITER))
    return [f"{out}: the exact ranks of the {len(frame)} users of {chosen}"]


def full(out) -> list[str]:
    """Every user's exact ranks, and the exact metrics a full ranking reports."""
    train, test, scores = data()
    frame = exact_rank_frame(scores, train, test)
    write_rank_file(frame, out, rank_meta("full", rank_columns=list(scores), writer=WRITER))
    lines = [f"{out}: the exact ranks of all {len(frame)} users"]
    for metric in ("recall@10", "ndcg@10"):
        values = [
            f"{name} {np.mean(metric_by_name(metric)(frame[name], frame['n'])):.4f}"
            for name in scores
        ]
        lines.append(f"exact {metric}: {', '.join(values)}")
    return lines


def many(out) -> list[str]:
    """Every user's exact ranks under four models: A and B, A2 (A's scores with a little
    more noise: nearly A) and Pop (the items' training popularity, the same for every
    user)."""
    train, test, scores = data()
    rng = np.random.default_rng(SEED + 1)
    a = scores["A"]
    models = {
        "A": a,
        "A2": a + rng.normal(scale=0.1 * a.std(), size=a.shape).astype(np.float32),
        "B": scores["B"],
        "Pop": np.broadcast_to(np.asarray(train.sum(axis=0), dtype=np.float32), a.shape),
    }
    frame = exact_rank_frame(models, train, test)
    write_rank_file(frame, out, rank_meta("full", rank_columns=list(models), writer=WRITER))
    return [f"{out}: the exact ranks of all {len(frame)} users, models {', '.join(models)}"]


def waves(chosen) -> list[str]:
    """The sequential loop from the design ``chosen`` (``.../waveK.csv``) on: rank its
    users exactly (``exactK.csv``, :func:`exact`), ``plan --continue`` to ``waveK+1.csv``,
    until it writes nothing; each command with the pairs' rows it printed (and its last
    line, the last time)."""
    from sampled_metrics.cli import main as cli

    chosen = Path(chosen)
    folder, k = chosen.parent, int(chosen.stem.removeprefix("wave"))
    lines = []
    while True:
        ranked = folder / f"exact{k}.csv"
        exact(folder / f"wave{k}.csv", ranked)
        argv = ["plan", str(folder / "ranks.csv"), "--continue", str(folder / f"wave{k}.csv"),
                "--exact", str(ranked), "--out", str(folder / f"wave{k + 1}.csv")]  # fmt: skip
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            if cli(argv):
                raise RuntimeError(f"{shlex.join(argv)}: failed")
        printed = out.getvalue().splitlines()
        start = next(i for i, line in enumerate(printed) if line.startswith("first  second"))
        end = printed.index("", start)
        lines += [f"sampled-metrics {shlex.join(argv)}", *(f"  {r}" for r in printed[start:end])]
        if not (folder / f"wave{k + 1}.csv").exists():
            return [*lines, f"  {printed[-1]}"]
        k += 1


def run(command: str, cwd) -> str:
    """What ``command`` (the first line of a ```console block) prints, run in ``cwd``:
    this script or the ``sampled-metrics`` command (through its ``main``)."""
    argv = shlex.split(command)
    out = io.StringIO()
    previous = os.getcwd()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out):
            if argv[0] == "sampled-metrics":
                from sampled_metrics.cli import main

                status = main(argv[1:])
                if status:
                    raise RuntimeError(f"{command}: exit status {status}")
            elif argv[:2] == ["python", "docs/examples/make_decide_examples.py"]:
                print("\n".join(_script(argv[2:])))
            else:
                raise ValueError(f"not a command of the examples: {command}")
    finally:
        os.chdir(previous)
    return out.getvalue()


def commands(text: str) -> list[tuple[str, str]]:
    """(command, output shown) of every ```console block of the doc."""
    found = []
    for block in BLOCK.findall(text):
        lines = block.splitlines(keepends=True)
        assert lines[0].startswith("$ "), f"a console block starts with '$ ': {lines[0]}"
        found.append((lines[0][2:].strip(), "".join(lines[1:])))
    return found


def update_doc(doc: Path = DOC) -> None:
    """Rerun every command of the doc, in order, in a temporary directory, and write
    what each prints under it."""
    text = doc.read_text()
    with tempfile.TemporaryDirectory() as work:

        def replace(match):
            command = match.group(1).splitlines()[0][2:].strip()
            print(f"$ {command}", file=sys.stderr)
            return f"```console\n$ {command}\n{run(command, work)}```\n"

        doc.write_text(BLOCK.sub(replace, text))


def _script(argv) -> list[str]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    steps = parser.add_subparsers(dest="step", required=True)
    steps.add_parser("sampled").add_argument("directory")
    step = steps.add_parser("exact")
    step.add_argument("chosen")
    step.add_argument("out")
    steps.add_parser("full").add_argument("out")
    steps.add_parser("many").add_argument("out")
    steps.add_parser("waves").add_argument("chosen")
    args = parser.parse_args(argv)
    if args.step == "sampled":
        Path(args.directory).mkdir(parents=True, exist_ok=True)
        return sampled(args.directory)
    if args.step == "exact":
        return exact(args.chosen, args.out)
    if args.step == "many":
        return many(args.out)
    if args.step == "waves":
        return waves(args.chosen)
    return full(args.out)


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv == ["--update-doc"]:
        update_doc()
    else:
        print("\n".join(_script(argv)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
