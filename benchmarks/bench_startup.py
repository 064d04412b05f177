"""What each rule's script pays before any work: the CPU time of its imports.

    python benchmarks/bench_startup.py [--repeat 3] [SCRIPT ...]

For each script of workflow/scripts (or those named), a fresh interpreter runs only the
script's top-level imports; the best of ``--repeat`` runs' CPU time (user + system, the
interpreter's start and exit included) is printed beside the heavy packages those
imports load. The first rows are the floors every job pays: the interpreter alone, and
numpy and pandas, which nearly every job uses.
"""

from __future__ import annotations

import argparse
import ast
import resource
import subprocess
import sys
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parents[1] / "workflow" / "scripts"
HEAVY = ("pandas", "scipy.sparse", "scipy.special", "scipy.optimize", "scipy.stats", "matplotlib")
FLOORS = {"(interpreter)": "pass", "(numpy)": "import numpy", "(pandas)": "import pandas"}


def import_lines(script: Path) -> str:
    """The script's top-level import statements, as code."""
    tree = ast.parse(script.read_text())
    imports = (ast.Import, ast.ImportFrom)
    return "\n".join(ast.unparse(node) for node in tree.body if isinstance(node, imports))


def cpu_seconds(code: str, repeat: int) -> float:
    """Best CPU time of ``repeat`` fresh interpreters running ``code``."""
    best = float("inf")
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run([sys.executable, "-c", code], check=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        best = min(best, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return best


def heavy_loaded(code: str) -> list[str]:
    """The packages of HEAVY that ``code`` loads."""
    report = f"\nimport sys\nprint(*[m for m in {HEAVY!r} if m in sys.modules])"
    run = subprocess.run([sys.executable, "-c", code + report], capture_output=True, text=True)
    return run.stdout.split()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("scripts", nargs="*", help="script names (default: all)")
    args = parser.parse_args()
    names = args.scripts or sorted(path.stem for path in SCRIPTS.glob("*.py"))
    rows = dict(FLOORS)
    rows.update({name: import_lines(SCRIPTS / f"{name}.py") for name in names})
    print(f"{'script':24s} {'CPU s':>6s}  heavy packages loaded")
    for name, code in rows.items():
        seconds = cpu_seconds(code, args.repeat)
        print(f"{name:24s} {seconds:6.2f}  {' '.join(heavy_loaded(code))}", flush=True)


if __name__ == "__main__":
    main()
