"""docs/performance.md, the measured time and memory, rendered from docs/performance.json.

    python benchmarks/docs/write_performance.py                  # render the page from the json
    python benchmarks/docs/write_performance.py --run cli estimators [--cores 2]
                                                                 # measure those sections again
    python benchmarks/docs/write_performance.py --check          # fail if the page is stale

The json holds one record per measurement: its section, what was measured, the command
that measures it, the commit and the machine it was measured on, and its wall seconds,
CPU seconds and peak memory (each a number, a list of repeated runs, or null where not
measured). ``--run SECTION ...`` runs that section's timer (the scripts of benchmarks/,
each in a fresh directory or process), replaces the section's records with the new ones,
writes the json, then renders the page; every other section keeps its records. The page
is always rendered from the json alone, so it can be rewritten without measuring
anything (tests/test_performance_doc.py checks that the page is the rendering of the
json). Sections without a timer here (the framework environments, built by
``.ci/envs/*.sh``) are measured by hand and edited in the json.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[1]
REPO = BENCHMARKS.parent
DATA = REPO / "docs" / "performance.json"
PAGE = REPO / "docs" / "performance.md"
COMMAND = "python benchmarks/docs/write_performance.py"
OWN_FILES = (":!docs/performance.json", ":!docs/performance.md")

# Per section: its short name (the top line's), its title and what the page says before
# its table. The commands that measured it are the records' own.
SECTIONS = {
    "ml-1m": (
        "MovieLens 1M",
        "MovieLens 1M",
        "The offline copy of binarized MovieLens 1M (6,040 users x 3,706 items, 1M events), "
        "`snakemake --cores 2` from a fresh directory to every figure and table. The shipped "
        "run: the six recommenders (X, Y, Z, Pop, EASE, BPR), every correction and "
        "estimator, the protocol study and the design study. The paper's pipeline: X, Y, Z, "
        "neither study. CPU: every process of the "
        "run; a stage's CPU: its jobs' logs, forked workers included. No schedule on 2 "
        "cores ends before the run's CPU-s / 2. The run's CPU splits into its jobs' (their "
        "start-up, the interpreter, Snakemake's preamble and the imports of numpy, pandas "
        "and scipy, paid by every job before its work, among them) and Snakemake's own "
        "(scheduling, checking outputs), the rest.",
    ),
    "ml-20m-like": (
        "ML-20M size",
        "ML-20M size: the shipped run on `ml-20m-like`",
        "The synthetic preset `ml-20m-like` (138,493 users x 26,744 items, 20M events; "
        "`docs/datasets.md`), the shipped config, `snakemake --cores 2` from a fresh "
        "directory. Per rule: wall time summed over its jobs, CPU time from its jobs' logs, "
        "the largest peak memory of one job (PSS: pages a job's forked workers share "
        "counted once).",
    ),
    "growth": (
        "growth",
        "How the paper's pipeline grows with the data",
        "The paper's pipeline (X, Y, Z, m = 100, 100 repetitions, the paper's corrections; "
        "the baselines and the protocol study left out) at three sizes, `--cores 2`, one "
        "shard, `ranking.memory_mb: 1024`; time summed over a rule's jobs, the largest peak "
        "memory of one job. Measured before the learned estimators joined "
        "`corrections.methods`, which add to the corrections' row. What each stage "
        "grows with: the ranking pass with users x items (every score computed once) and, "
        "for item-kNN without a cut (Y), with interactions x items; the draw plan and the "
        "sampled ranks with users x m x repetitions; the paper's corrections with the "
        "number of distinct ranked-set sizes n (one system each), applying them with "
        "users x repetitions; the learned estimators with repetitions x recommenders x the "
        "largest n x m; Figure 6 with its grid of m and n^2 at the largest m; the protocol "
        "study's simulation with users x repetitions x (items + the protocols' draws) and "
        "its estimators with users x repetitions x protocols.",
    ),
    "floors": (
        "floors",
        "The floors: each job's essential work",
        "What each job of the shipped run cannot avoid computing (`benchmarks/floors.py` "
        "says what is counted: sorting the events, iALS's sweeps, the Gram matrices and "
        "EASE's inverse, scoring every item, the exact and sampled ranks, the draws of the "
        "studies, applying the estimators), at this machine's rates on one core. It grows "
        "with users x items for scoring and exact ranks (items^2 per event for item x item "
        "models), items^3 for EASE's inverse, users x m x repetitions for the sampled ranks "
        "and the corrections, and seeds x users for the design study. BPR's fit has none: "
        "it runs on one thread because implicit's threads race, so it is its own floor.",
    ),
    "cli": (
        "the command line",
        "The command line: `sampled-metrics correct`",
        "Its defaults (`range sampled mn_em em`, Recall@10 and NDCG@10) on an NCF-style file "
        "(m = 99 without replacement), synthetic iALS-like ranks with n per user in "
        "1393..3687, one process. Wall: the command's own run; CPU and peak memory: the "
        "timer's whole process (its imports and the file's writing included).",
    ),
    "estimators": (
        "the estimators",
        "The estimators on a million users",
        "`estimate_table` of the library, four metrics (Recall@10, NDCG@10, AP, AUC), no "
        "bootstrap, m = 100 with replacement, 2 BLAS threads. CPU and peak memory: the "
        "timer's whole process.",
    ),
    "environments": (
        "the environments",
        "The frameworks' environments",
        "Building the separate environments of the adapters from scratch (`docs/cornac.md`, "
        "`docs/recbole.md`); a second run finds them built and does nothing.",
    ),
}


# ---------------------------------------------------------------- rendering


def number(value: float) -> str:
    """A measured value as the page prints it.

    >>> number(1652.0), number(124.4), number(0.2), number(3.0)
    ('1652', '124.4', '0.2', '3')
    """
    if value >= 1000:
        return f"{value:.0f}"
    return f"{value:.4g}"


def seconds(value, unit: str = "") -> str:
    """Wall seconds: one run, or the range of repeated runs; minutes from 10 on.

    >>> seconds(None), seconds(5.3), seconds([124.4, 115.6, 124.1]), seconds(1652, " s")
    ('', '5.3', '115.6-124.4 (3 runs)', '1652 s (27.5 min)')
    """
    if value is None:
        return ""
    runs = value if isinstance(value, list) else [value]
    low, high = min(runs), max(runs)
    text = (number(low) if low == high else f"{number(low)}-{number(high)}") + unit
    if len(runs) > 1:
        text += f" ({len(runs)} runs)"
    elif low >= 600:
        text += f" ({low / 60:.1f} min)"
    return text


def memory(value) -> str:
    """Peak memory in MB, printed in GB from 1024 MB.

    >>> memory(None), memory(851), memory(3993.6)
    ('', '851 MB', '3.9 GB')
    """
    if value is None:
        return ""
    return f"{value / 1024:.1f} GB" if value >= 1024 else f"{value:.0f} MB"


def cpu(value) -> str:
    """CPU seconds: one run or the range of repeated runs."""
    if value is None:
        return ""
    runs = value if isinstance(value, list) else [value]
    low, high = min(runs), max(runs)
    return number(low) if low == high else f"{number(low)}-{number(high)}"


def top_line(records: list) -> str:
    """The one line naming the machines and, per section, the commits measured."""
    machines = sorted({record["machine"] for record in records})
    commits = []
    for name, (short, _, _) in SECTIONS.items():
        seen = []
        for record in records:
            if record["section"] == name and record["commit"] not in seen:
                seen.append(record["commit"])
        if seen:
            commits.append(f"{short} at {', '.join(seen)}")
    return (
        f"Measured on {' and on '.join(machines)}, shared with other work (its load moves "
        f"wall and CPU times alike by up to 25 % from day to day, peak memory not); commits: "
        f"{'; '.join(commits)}."
    )


def table(rows: list) -> list:
    """A section's records, one row each."""
    lines = ["| measured | wall s | CPU-s | peak memory | |", "|---|---|---|---|---|"]
    for record in rows:
        cells = [
            record["what"],
            seconds(record["seconds"]),
            cpu(record["cpu_seconds"]),
            memory(record["peak_mb"]),
            record.get("note", ""),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def size_table(rows: list) -> list:
    """Records that name a ``size``: one row per measured stage, one column per size,
    each cell its wall seconds and peak memory."""
    sizes = list(dict.fromkeys(record["size"] for record in rows))
    stages = list(dict.fromkeys(record["what"] for record in rows))
    cell = {(r["what"], r["size"]): r for r in rows}
    lines = ["| | " + " | ".join(sizes) + " |", "|---|" + "---|" * len(sizes)]
    for stage in stages:
        cells = []
        for size in sizes:
            record = cell.get((stage, size))
            parts = [] if record is None else [seconds(record["seconds"], " s")]
            parts += [memory(record["peak_mb"])] if record and record["peak_mb"] else []
            parts += [record["note"]] if record and record.get("note") else []
            cells.append("; ".join(parts))
        lines.append(f"| {stage} | " + " | ".join(cells) + " |")
    return lines


def render(data: dict) -> str:
    """The page, from the json's records alone."""
    records = data["records"]
    lines = [
        "# Performance: time and memory at each size",
        "",
        f"Written by `{COMMAND}` from `docs/performance.json`; do not edit it by hand. "
        f"`{COMMAND} --run SECTION ...` measures sections again ({', '.join(RUNNERS)}).",
        "",
        top_line(records),
    ]
    for name, (_, title, about) in SECTIONS.items():
        rows = [record for record in records if record["section"] == name]
        if not rows:
            continue
        commands = dict.fromkeys(record["command"] for record in rows)
        lines += ["", f"## {title}", "", about, ""]
        lines += ["Measured by " + ", ".join(f"`{command}`" for command in commands) + "."]
        lines += [""] + (size_table(rows) if "size" in rows[0] else table(rows))
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- measuring


@functools.cache
def machine() -> str:
    """This machine as the records name it: cores and memory."""
    total_kb = 0
    with open("/proc/meminfo") as meminfo:
        for line in meminfo:
            if line.startswith("MemTotal:"):
                total_kb = int(line.split()[1])
    return f"{os.cpu_count()} cores, {total_kb / 2**20:.0f} GiB"


@functools.cache
def commit() -> str:
    """The commit measured, marked when the working tree differs from it (this page and
    its json aside); read once, before a run writes anything."""
    head = subprocess.run(
        ["git", "rev-parse", "--short=7", "HEAD"], capture_output=True, text=True, cwd=REPO
    ).stdout.strip()
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=no", "--", ".", *OWN_FILES],
        capture_output=True,
        text=True,
        cwd=REPO,
    ).stdout.strip()
    return f"{head} with changes" if dirty else head


def timer(script: str, *args: str) -> tuple:
    """(stdout, CPU s, peak RSS MB) of ``python benchmarks/<script> args``, in its own
    process; exits with its error output if it fails."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        filter(None, [str(REPO / "workflow"), os.environ.get("PYTHONPATH")])
    )
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        process = subprocess.Popen(
            [sys.executable, str(BENCHMARKS / script), *args], stdout=out, stderr=err, env=env
        )
        _, status, usage = os.wait4(process.pid, 0)
        out.seek(0)
        err.seek(0)
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit(f"benchmarks/{script} {' '.join(args)} failed:\n{err.read()[-3000:]}")
        return out.read(), usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def record(section, what, command, seconds=None, cpu_seconds=None, peak_mb=None, note=""):
    """One measurement, on this machine at this commit."""
    fields = {"seconds": seconds, "cpu_seconds": cpu_seconds, "peak_mb": peak_mb}
    rounded = {key: None if v is None else round(v, 1) for key, v in fields.items()}
    entry = {"section": section, "what": what, "command": command, "commit": commit()}
    entry |= {"machine": machine(), **rounded}
    return entry | ({"note": note} if note else {})


def run_floors(cores: int) -> list:
    sys.path.insert(0, str(BENCHMARKS))
    from floors import floors, movielens_size, preset_size, rates

    command = "python benchmarks/floors.py"
    sizes = {
        "MovieLens 1M: 6,040 x 3,706, 994,169": movielens_size(),
        "ml-20m-like: 138,493 x 26,744, 20M": preset_size("ml-20m-like"),
        "netflix-like: 480,189 x 17,770, 100M": preset_size("netflix-like"),
    }
    rate = rates()
    records = []
    for label, size in sizes.items():
        for job, seconds in floors(size, rate).items():
            entry = record("floors", f"`{job}`", command, None, seconds)
            records.append(entry | {"size": label, "seconds": round(seconds, 2)})
    return records


def run_cli(cores: int) -> list:
    records = []
    for users in (6040, 1_000_000):
        command = f"python benchmarks/bench_cli.py --users {users}"
        out, cpu_s, peak = timer("bench_cli.py", "--users", str(users))
        found = re.search(r"(\d+) users, (\d+) distinct n:\s*([\d.]+) s \(status 0\)", out)
        if not found:
            sys.exit(f"{command}: no timing in its output:\n{out}")
        what = f"{users:,} users, {found.group(2)} distinct n"
        records.append(record("cli", what, command, float(found.group(3)), cpu_s, peak))
    return records


def run_estimators(cores: int) -> list:
    command = f"python benchmarks/bench_estimators.py --threads {cores}"
    out, cpu_s, peak = timer("bench_estimators.py", "--threads", str(cores))
    rows = {
        "all at once": "all 10 estimators, one n = 3706",
        "all, per-user n": "all 10 estimators, per-user n",
        "mn_em, 200 bootstraps": "`mn_em`, 200 bootstrap resamples, 100,000 users",
    }
    records = []
    for start, what in rows.items():
        found = re.search(rf"^{re.escape(start)}.*?\s([\d.]+)(\s|$)", out, re.MULTILINE)
        if not found:
            sys.exit(f"{command}: no line '{start}' in its output:\n{out}")
        note = "" if records else "CPU and memory: the whole process, every row"
        records.append(record("estimators", what, command, float(found.group(1)), None, None, note))
    records[0]["cpu_seconds"], records[0]["peak_mb"] = round(cpu_s, 1), round(peak, 1)
    return records


def floor_note(stems: list, floor: dict) -> str:
    """The floor of a stage's jobs (benchmarks/floors.py), for its row's note.

    >>> floor_note(["fit_X", "fit_BPR"], {"fit_X": 0.21}), floor_note(["x"], {})
    ("floor 0.21 CPU-s, BPR's fit aside (its own floor)", '')
    """
    sys.path.insert(0, str(BENCHMARKS))
    from floors import job_floor

    known = [job_floor(stem, floor) for stem in stems]
    counted = [value for value in known if value is not None]
    if not counted:
        return ""
    note = f"floor {number(sum(counted))} CPU-s"
    return note + (", BPR's fit aside (its own floor)" if len(counted) < len(known) else "")


def run_ml1m(cores: int) -> list:
    sys.path.insert(0, str(BENCHMARKS))
    import pandas as pd
    from bench_pipeline import STAGES, cpu_parts, pipeline_run
    from floors import floors, movielens_size, rates
    from offline_data import DATASET, DEFAULT_DATA
    from workflow_run import timed_run

    from sampled_metrics.pipeline.runs import logged_cpu_seconds

    floor = floors(movielens_size(), rates())
    records = []
    for paper in (False, True):
        name = "the paper's pipeline" if paper else "the shipped run"
        command = f"python benchmarks/bench_pipeline.py{' --paper' if paper else ''}"
        with tempfile.TemporaryDirectory() as tmp:
            config, targets = pipeline_run(DEFAULT_DATA, paper)
            total, cpu_s = timed_run(Path(tmp), config, cores, targets)
            bench, logs = Path(tmp) / "results" / DATASET / "benchmarks", Path(tmp) / "logs"
            stages = []
            for label, pattern in STAGES.items():
                paths = sorted(bench.glob(pattern))
                if paper or not paths:
                    continue
                table = pd.concat([pd.read_csv(path, sep="\t") for path in paths])
                jobs_cpu = sum(
                    logged_cpu_seconds(logs / DATASET / f"{p.stem}.log") or 0.0 for p in paths
                )
                what = f"shipped run, stage: {label}"
                stages.append(
                    record(
                        "ml-1m",
                        what,
                        command,
                        table["s"].sum(),
                        jobs_cpu,
                        table["max_pss"].max(),
                        floor_note([path.stem for path in paths], floor),
                    )
                )
            records.append(record("ml-1m", f"{name}, whole", command, total, cpu_s))
            records += [record("ml-1m", f"{name}: {what}", command, None, seconds, note=note)
                        for what, seconds, note in cpu_parts(Path(tmp), cpu_s)]  # fmt: skip
            records += stages
    return records


def run_ml20m(cores: int) -> list:
    sys.path.insert(0, str(BENCHMARKS))
    import yaml
    from bench_scaling import measure, rule_of
    from floors import floors, preset_size, rates
    from workflow_run import children_cpu_seconds

    from sampled_metrics.pipeline.runs import logged_cpu_seconds

    name = "ml-20m-like"
    floor = floors(preset_size(name), rates())
    command = "python benchmarks/bench_scaling.py --preset ml-20m-like --shipped"
    entry = yaml.safe_load((REPO / "config.yaml").read_text())["datasets"][name]
    with tempfile.TemporaryDirectory() as tmp:
        before = children_cpu_seconds()
        per_rule, totals = measure(Path(tmp), name, entry, cores, shipped=True)
        cpu_s = children_cpu_seconds() - before
        rule_cpu, rule_jobs = {}, {}
        for log in (Path(tmp) / "logs" / name).glob("*.log"):
            rule = rule_of(log.stem)
            rule_cpu[rule] = rule_cpu.get(rule, 0.0) + (logged_cpu_seconds(log) or 0.0)
            rule_jobs.setdefault(rule, []).append(log.stem)
    records = [
        record(
            name,
            "the shipped run, whole",
            command,
            totals["total_s"],
            cpu_s,
            per_rule["max_pss_mb"].max(),
        )
    ]
    left = totals["left_under_results_mb"]
    records.append(record(name, "left under results/ at the end", command, note=memory(left)))
    for rule, row in per_rule.iterrows():
        records.append(
            record(
                name,
                f"rule `{rule}`",
                command,
                row["s"],
                rule_cpu.get(rule),
                row["max_pss_mb"],
                floor_note(rule_jobs.get(rule, []), floor),
            )
        )
    return records


RUNNERS = {
    "ml-1m": run_ml1m,
    "ml-20m-like": run_ml20m,
    "floors": run_floors,
    "cli": run_cli,
    "estimators": run_estimators,
}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run", nargs="+", default=[], metavar="SECTION", choices=RUNNERS)
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--check", action="store_true", help="fail if the page is stale")
    args = parser.parse_args(argv)
    data = json.loads(DATA.read_text())
    if args.check:
        if PAGE.read_text() != render(data):
            sys.exit(f"{PAGE}: not the rendering of {DATA}; run {COMMAND}")
        return 0
    for section in args.run:
        fresh = RUNNERS[section](args.cores)
        kept = [r for r in data["records"] if r["section"] != section]
        data["records"] = kept + fresh
        DATA.write_text(json.dumps(data, indent=1) + "\n")
        print(f"{section}: {len(fresh)} records measured", file=sys.stderr)
    data["records"].sort(key=lambda r: list(SECTIONS).index(r["section"]))
    DATA.write_text(json.dumps(data, indent=1) + "\n")
    PAGE.write_text(render(data))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
