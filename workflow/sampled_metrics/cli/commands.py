"""The ``sampled-metrics`` command: its sub-commands, one module each with
``add_parser(subparsers)`` and ``run(args) -> int`` (:data:`COMMANDS`: name -> the two),
and :func:`main`. A new sub-command is one module and one entry of the table.

Bad input, a missing framework or a failed check stop a sub-command with one line on
stderr, ``sampled-metrics <sub-command>: error: <message>``, and exit status 2.
"""

from __future__ import annotations

import sys

from ..frameworks.adapters import FrameworkNotInstalled
from .arguments import PROG, Parser
from .cornac import add_parser as cornac_parser
from .cornac import run as cornac_run
from .correct import add_parser as correct_parser
from .correct import run as correct_run
from .plan import add_parser as plan_parser
from .plan import run as plan_run
from .recbole import add_parser as recbole_parser
from .recbole import run as recbole_run

__all__ = ["COMMANDS", "main"]

COMMANDS = {
    "correct": (correct_parser, correct_run),
    "plan": (plan_parser, plan_run),
    "recbole": (recbole_parser, recbole_run),
    "cornac": (cornac_parser, cornac_run),
}


def parser() -> Parser:
    """The ``sampled-metrics`` parser, every sub-command's parser in it."""
    top = Parser(
        prog=PROG,
        description="Corrected sampled metrics for item recommendation (Krichene & Rendle, "
        "KDD 2020, and later estimators): correct a file of sampled ranks, or write one "
        "from a framework's evaluation.",
    )
    subparsers = top.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    subparsers.required = True
    for add_parser, _ in COMMANDS.values():
        add_parser(subparsers)
    return top


def main(argv: list[str] | None = None) -> int:
    """Parse ``argv`` and run its sub-command.

    Parameters
    ----------
    argv : list of str, optional
        The arguments after the program's name (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        The exit status: 0, or 2 on bad input (one line on stderr naming the file
        and the row or column, or the option).

    Examples
    --------
    >>> import contextlib, io, tempfile
    >>> from pathlib import Path
    >>> path = Path(tempfile.mkdtemp()) / "ranks.csv"
    >>> _ = path.write_text("user,sampled_rank\\n1,1\\n2,3\\n3,60\\n4,2\\n")
    >>> out = io.StringIO()
    >>> with contextlib.redirect_stdout(out):
    ...     status = main(["correct", str(path), "--protocol", "ncf", "--n", "3706",
    ...                    "--metrics", "recall@10", "--estimators", "sampled", "bv_0.1",
    ...                    "--quiet"])
    >>> status
    0
    >>> text = out.getvalue()
    >>> print(text[text.index("model "):])
    model         metric     estimator  estimate
    sampled_rank  recall@10  sampled      0.7500
    sampled_rank  recall@10  bv_0.1       0.0510
    <BLANKLINE>
    ranges that hold whatever the ranks (95%, the estimators' bias included; docs/estimators.md):
    <BLANKLINE>
    model         metric        low    high
    sampled_rank  recall@10  0.0000  0.9028
    <BLANKLINE>
    """
    try:
        args = parser().parse_args(argv)
    except SystemExit as stop:  # --help, or a bad option (one line on stderr already)
        return stop.code if isinstance(stop.code, int) else 2
    try:
        return COMMANDS[args.command][1](args)
    except (FrameworkNotInstalled, ValueError, OSError) as error:
        print(f"{PROG} {args.command}: error: {_one_line(error)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{PROG} {args.command}: interrupted", file=sys.stderr)
        return 130


def _one_line(error: BaseException) -> str:
    return " ".join(str(error).split()) or type(error).__name__
