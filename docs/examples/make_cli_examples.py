"""The example files of docs/cli.md, simulated, and the doc's outputs regenerated.

Each file holds a few thousand simulated users of one framework's protocol: every
user's exact rank r (the held-out item's rank among the n items it competes with),
drawn from a known distribution, and the sampled rank the framework would have
reported (1 + the sampled items scored above the held-out item), drawn the way that
framework draws its sampled items (docs/cli.md, "Protocols"). The files keep the exact
rank (column ``exact_rank``, which the tool ignores), so that the exact metric, what a
full ranking would report, is known; the script prints it for each file. The RecBole
file is written as RecBole's adapter writes its files: with each row's distinct items
drawn (column ``m``) and a sidecar (``frameworks.rank_meta``), so that ``sampled-metrics
correct`` reads it without options.

    python docs/examples/make_cli_examples.py examples     # write the files into examples/
    python docs/examples/make_cli_examples.py --update-doc # rerun every command of docs/cli.md
                                                           # and write its output there

tests/test_cli.py reruns the commands of docs/cli.md and checks that the document
shows exactly what they print.
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
from pathlib import Path

import numpy as np
import pandas as pd

from sampled_metrics.estimation.metrics import metric_by_name
from sampled_metrics.frameworks.rank_meta import rank_meta, write_rank_meta

DOC = Path(__file__).resolve().parents[1] / "cli.md"
SEED = 2020
METRICS = ("recall@10", "ndcg@10")
# A ```console block of the doc: "$ command" lines, each followed by its output.
BLOCK = re.compile(r"^```console\n(.*?)^```\n", re.DOTALL | re.MULTILINE)


def exact_ranks(rng, n, a=0.6, b=4.8):
    """Exact ranks in 1..n_u: the held-out item at relative position theta ~ Beta(a, b)
    of the n_u - 1 items it competes with (a recommender that places most held-out
    items near the top and some anywhere)."""
    theta = rng.beta(a, b, size=n.size)
    return 1 + np.floor(theta * (n - 1)).astype(np.int64)


def training_sizes(rng, users, smallest, mean, largest):
    """Each user's number of training items: a long tail above ``smallest``."""
    return np.minimum(smallest + rng.geometric(1.0 / (mean - smallest), users), largest)


def above_without_replacement(rng, ranks, n, m):
    """For each user, m distinct items drawn uniformly from the n_u - 1 others; the
    sampled items above the held-out item of every rank column of ``ranks`` (the
    models order the other items alike: a sampled item at position p among them is
    above the held-out item at rank r when p < r - 1)."""
    counts = np.empty_like(ranks)
    for u in range(ranks.shape[0]):
        positions = rng.choice(n[u] - 1, m, replace=False)
        counts[u] = np.sum(positions[:, None] < ranks[u] - 1, axis=0)
    return counts


def ncf(rng, users=3000):
    """NCF: 99 distinct items from the items outside the user's training set."""
    n = 3706 - training_sizes(rng, users, 19, 165, 2000)
    r = exact_ranks(rng, n)
    sampled = 1 + rng.hypergeometric(r - 1, n - r, 99)
    return pd.DataFrame({"user": np.arange(users), "sampled_rank": sampled, "n": n}), r


def recbole(rng, users=3000, draws=100):
    """RecBole uniN: N uniform draws with replacement from the items the user never
    interacted with; the trainer scores the distinct ones (a dense score row), so a
    twice-drawn item counts once. ``m``: the distinct items scored."""
    n = 3706 - training_sizes(rng, users, 19, 165, 2000)
    r = exact_ranks(rng, n)
    items = rng.random((users, draws)) * (n - 1)[:, None]
    items = np.floor(items).astype(np.int64)  # item positions 0..n-2 among the others
    items.sort(axis=1)
    first = np.ones_like(items, dtype=bool)
    first[:, 1:] = items[:, 1:] != items[:, :-1]
    sampled = 1 + np.sum(first & (items < (r - 1)[:, None]), axis=1)
    frame = pd.DataFrame({"user": np.arange(users), "sampled_rank": sampled, "n": n})
    frame["m"] = first.sum(axis=1)
    return frame, r


def elliot(rng, users=3000, m=100):
    """Elliot random: m distinct items from the items outside the user's training and
    test sets; two models on the same sampled items: A places more held-out items at
    the very top, B fewer but with a better mean rank (higher AUC)."""
    n = 3706 - training_sizes(rng, users, 9, 30, 100)
    r_a = exact_ranks(rng, n, 0.6, 4.8)
    r_b = exact_ranks(rng, n, 0.7, 6.0)
    above = above_without_replacement(rng, np.column_stack([r_a, r_b]), n, m)
    frame = pd.DataFrame(
        {"user": np.arange(users), "A": 1 + above[:, 0], "B": 1 + above[:, 1], "n": n}
    )
    return frame, np.column_stack([r_a, r_b])


def daisyrec(rng, users=3000, candidates=1000):
    """DaisyRec: the held-out item and cand_num - 1 uniform draws with replacement
    from the items outside the user's training and test sets, each draw scored."""
    n = 12000 - training_sizes(rng, users, 9, 25, 40)
    r = exact_ranks(rng, n)
    sampled = 1 + rng.binomial(candidates - 1, (r - 1) / (n - 1))
    return pd.DataFrame({"user": np.arange(users), "sampled_rank": sampled, "n": n}), r


EXAMPLES = {
    "ncf.csv": ncf,
    "recbole_uni100.tsv": recbole,
    "elliot.csv.gz": elliot,
    "daisyrec.csv": daisyrec,
}
# The files written with a sidecar, as an adapter writes them: their protocol.
SIDECARS = {"recbole_uni100.tsv": "recbole-uni100"}


def write_examples(directory, seed: int = SEED) -> list[str]:
    """Write every example file into ``directory``; one line per file with its exact
    metrics (the mean over its users of the metric at their exact rank).

    Parameters
    ----------
    directory : str or pathlib.Path
    seed : int

    Returns
    -------
    list of str

    Examples
    --------
    >>> import tempfile
    >>> write_examples(tempfile.mkdtemp())[0].startswith("ncf.csv: 3000 users")
    True
    """
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    lines = []
    for k, (name, simulate) in enumerate(EXAMPLES.items()):
        frame, exact = simulate(np.random.default_rng([seed, k]))
        exact = exact.reshape(len(frame), -1)
        models = ["A", "B"] if exact.shape[1] == 2 else [None]
        for j, model in enumerate(models):
            frame[f"exact_rank_{model}" if model else "exact_rank"] = exact[:, j]
        sep = "\t" if ".tsv" in name else ","
        frame.to_csv(directory / name, sep=sep, index=False)
        if name in SIDECARS:
            meta = rank_meta(SIDECARS[name], rank_columns=["sampled_rank"], distinct_m=True,
                             writer="docs/examples/make_cli_examples.py")  # fmt: skip
            write_rank_meta(directory / name, meta)
        for j, model in enumerate(models):
            truth = ", ".join(
                f"{metric} = {metric_by_name(metric)(exact[:, j], frame['n']).mean():.4f}"
                for metric in METRICS
            )
            label = f"model {model}, " if model else ""
            lines.append(f"{name}: {len(frame)} users; {label}exact {truth}")
    return lines


def run(command: str, cwd) -> str:
    """What ``command`` (the first line of a ```console block) prints, run in ``cwd``:
    the script itself or the ``sampled-metrics`` command (through its ``main``; a
    trailing ``2>&1`` adds what it writes to stderr, and allows a failure)."""
    argv = shlex.split(command)
    both = argv[-1] == "2>&1"
    argv = argv[:-1] if both else argv
    out = io.StringIO()
    previous = os.getcwd()
    os.chdir(cwd)
    try:
        errors = out if both else sys.stderr
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(errors):
            if argv[0] == "sampled-metrics":
                from sampled_metrics.cli import main

                status = main(argv[1:])
                if status and not both:
                    raise RuntimeError(f"{command}: exit status {status}")
            elif argv[:2] == ["python", "docs/examples/make_cli_examples.py"]:
                print("\n".join(write_examples(argv[2])))
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
    """Rerun every command of the doc (in a temporary directory) and write what it
    prints under it."""
    text = doc.read_text()
    with tempfile.TemporaryDirectory() as work:
        (Path(work) / "docs" / "examples").mkdir(parents=True)

        def replace(match):
            command = match.group(1).splitlines()[0][2:].strip()
            print(f"$ {command}", file=sys.stderr)
            return f"```console\n$ {command}\n{run(command, work)}```\n"

        doc.write_text(BLOCK.sub(replace, text))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory", nargs="?", help="write the example files here")
    parser.add_argument("--update-doc", action="store_true", help="regenerate docs/cli.md")
    args = parser.parse_args(argv)
    if args.update_doc:
        update_doc()
    elif args.directory:
        print("\n".join(write_examples(args.directory)))
    else:
        parser.error("give a directory or --update-doc")
    return 0


if __name__ == "__main__":
    sys.exit(main())
