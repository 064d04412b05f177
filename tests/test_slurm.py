"""Cluster execution: the workflow's tables (conftest.TARGETS: training, ranking,
sampling, Tables 3-4) through profiles/slurm on a one-node SLURM cluster on
localhost, its ranking cut into shards, are byte-identical to a local run in one
shard (the session's shared ``reference`` run of conftest.py). (The figures add jobs
of the same kind, each a 12 s status poll more.)

The fixture starts munged, slurmctld and slurmd in the foreground from a
private temp dir (own munge key and socket, own slurm.conf found through
SLURM_CONF, ports picked free on 127.0.0.1, no accounting database) and stops
them at the end. The test is skipped when the SLURM/munge binaries are missing
(.ci/install-slurm.sh installs them); once they are installed, a cluster that
does not come up is a failure.
"""

import getpass
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
import yaml
from conftest import REPO, SNAKEMAKE, TARGETS, TINY_CONFIG, write_synthetic_interactions

pytestmark = [pytest.mark.slurm, pytest.mark.slow, pytest.mark.minutes]

DAEMONS = ("munged", "slurmctld", "slurmd")
CLIENTS = ("sbatch", "squeue", "scontrol", "scancel", "srun", "sinfo")
START_TIMEOUT = 60  # seconds for the cluster to report an idle node
RUN_TIMEOUT = 900  # seconds for one workflow run
STOP_TIMEOUT = 20  # seconds for a daemon to exit after SIGTERM
COMPARED = (
    "results/tiny/*.csv",
    "results/tiny/ranks/*.csv",
    "results/tiny/pessimistic_ranks/*.csv",
    "results/tiny/sampled_ranks/*.npy",
)
SHARDS = 3  # the SLURM run ranks each recommender in 3 jobs (90 users, chunks of 32)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def tail(path: Path, n: int = 30) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-n:])
    except OSError:
        return f"({path} not written)"


def slurm_conf(base: Path, user: str, cpus: int) -> str:
    return f"""\
ClusterName=snakemaketest
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort={free_port()}
SlurmdPort={free_port()}
CommunicationParameters=NoCtldInAddrAny,NoInAddrAny
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={base}/munge/munge.socket
SlurmUser={user}
SlurmdUser={user}
StateSaveLocation={base}/state
SlurmdSpoolDir={base}/spool
SlurmctldPidFile={base}/slurmctld.pid
SlurmdPidFile={base}/slurmd.pid
SlurmctldLogFile={base}/slurmctld.log
SlurmdLogFile={base}/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
# Finished jobs stay visible to squeue for 30 minutes: without slurmdbd the
# executor plugin polls job states with squeue, and the test counts every job of
# the run at its end (at 5 minutes a run slowed by a loaded machine lost its first
# jobs: 29 of 36 found after 7 minutes).
MinJobAge=1800
SchedulerParameters=sched_interval=1
ReturnToService=2
# Take the node as configured (memory is not a consumable resource under CR_CPU;
# RealMemory only has to hold the largest mem_mb request).
SlurmdParameters=config_overrides
NodeName=localhost NodeAddr=127.0.0.1 CPUs={cpus} RealMemory=8000 State=UNKNOWN
PartitionName=local Nodes=localhost Default=YES MaxTime=INFINITE State=UP
"""


class LocalCluster:
    """munged + slurmctld + slurmd on 127.0.0.1, all state under `base`."""

    def __init__(self, base: Path):
        self.base = base
        self.conf = base / "slurm.conf"
        self.procs: dict[str, subprocess.Popen] = {}
        self.env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("SLURM_", "SBATCH_", "SRUN_", "SALLOC_"))
        }
        self.env["SLURM_CONF"] = str(self.conf)
        # snakemake-executor-plugin-slurm-jobstep removes every SLURM_* variable but
        # a few job ids (SLURM_CONF included) before its inner `srun`. Real clusters
        # keep slurm.conf at its default path or run configless; this one lives in a
        # temp dir, so `srun` gets SLURM_CONF back from a wrapper first on PATH.
        self.bin = base / "bin"
        self.env["PATH"] = f"{self.bin}{os.pathsep}{self.env['PATH']}"

    def start(self) -> None:
        base = self.base
        (base / "munge").mkdir()
        (base / "state").mkdir()
        (base / "spool").mkdir()
        self.bin.mkdir()
        srun = self.bin / "srun"
        srun.write_text(
            f"#!/bin/sh\nSLURM_CONF={self.conf}\nexport SLURM_CONF\n"
            f'exec {shutil.which("srun")} "$@"\n'
        )
        srun.chmod(0o755)
        key = base / "munge" / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o400)
        self.conf.write_text(slurm_conf(base, getpass.getuser(), max(2, os.cpu_count() or 2)))

        self._spawn(
            "munged",
            [
                "munged",
                "--foreground",
                f"--socket={base}/munge/munge.socket",
                f"--key-file={key}",
                f"--pid-file={base}/munge/munged.pid",
                f"--log-file={base}/munge/munged.log",
                f"--seed-file={base}/munge/munged.seed",
            ],
        )
        self._wait("munge socket", lambda: (base / "munge" / "munge.socket").exists())
        self._spawn("slurmctld", ["slurmctld", "-D", "-i"])
        self._wait("slurmctld", lambda: self._client(["scontrol", "ping"]).returncode == 0)
        self._spawn("slurmd", ["slurmd", "-D", "-N", "localhost"])

        def node_idle():
            out = self._client(
                ["sinfo", "--noheader", "--Node", "--responding", "--format=%N|%T"]
            ).stdout.split()
            return out == ["localhost|idle"]

        self._wait("an idle node", node_idle)
        # End to end: munge credentials, slurmctld, slurmd and slurmstepd run a job step.
        try:
            probe = self._client(
                ["srun", "--immediate=30", "--time=1", "--ntasks=1", "hostname"],
                timeout=START_TIMEOUT,
            )
        except subprocess.TimeoutExpired:
            pytest.fail(f"local SLURM cluster: `srun hostname` hung\n{self.logs()}")
        if probe.returncode != 0:
            pytest.fail(
                f"local SLURM cluster: `srun hostname` failed: {probe.stderr}\n{self.logs()}"
            )

    def _spawn(self, name: str, argv: list[str]) -> None:
        out = open(self.base / f"{name}.out", "wb")
        self.procs[name] = subprocess.Popen(
            argv,
            env=self.env,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        out.close()

    def _client(self, argv: list[str], timeout: float = 15) -> subprocess.CompletedProcess:
        return subprocess.run(argv, env=self.env, capture_output=True, text=True, timeout=timeout)

    def _wait(self, what: str, ready) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            dead = {n: p.returncode for n, p in self.procs.items() if p.poll() is not None}
            if dead:
                pytest.fail(
                    f"SLURM daemon(s) exited while waiting for {what}: {dead}\n{self.logs()}"
                )
            try:
                if ready():
                    return
            except subprocess.TimeoutExpired:
                pass
            time.sleep(0.5)
        pytest.fail(f"local SLURM cluster: no {what} after {START_TIMEOUT} s\n{self.logs()}")

    def logs(self) -> str:
        files = [self.base / f"{n}.out" for n in DAEMONS] + [
            self.base / "munge" / "munged.log",
            self.base / "slurmctld.log",
            self.base / "slurmd.log",
        ]
        return "\n".join(f"--- {f.name}\n{tail(f)}" for f in files)

    def jobs(self, name: str) -> list[tuple[str, str]]:
        """(job id, state) of every job named `name`, finished ones included."""
        result = self._client(
            ["squeue", "--noheader", "--states=all", "--name", name, "--format=%i|%T"]
        )
        assert result.returncode == 0, result.stderr
        return [tuple(line.split("|")) for line in result.stdout.split()]

    def stop(self) -> None:
        if "slurmctld" in self.procs and self.procs["slurmctld"].poll() is None:
            try:  # cancel whatever a failed run left queued or running, wait for it to end
                self._client(["scancel", "--full", f"--user={getpass.getuser()}"])
                deadline = time.monotonic() + STOP_TIMEOUT
                while (
                    time.monotonic() < deadline
                    and self._client(
                        [
                            "squeue",
                            "--noheader",
                            "--states=PENDING,RUNNING,COMPLETING",
                            "--format=%i",
                        ]
                    ).stdout.strip()
                ):
                    time.sleep(0.5)
            except subprocess.TimeoutExpired:
                pass
        for name in reversed(DAEMONS):
            proc = self.procs.get(name)
            if proc is None:
                continue
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(timeout=STOP_TIMEOUT)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(timeout=STOP_TIMEOUT)
            try:  # anything the daemon left behind in its own process group
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


@pytest.fixture(scope="module")
def cluster():
    missing = [b for b in DAEMONS + CLIENTS if shutil.which(b) is None]
    if missing:
        pytest.skip(
            f"SLURM/munge not installed (no {', '.join(missing)} on PATH); "
            "install them with .ci/install-slurm.sh"
        )
    if os.geteuid() != 0:
        pytest.skip("a local SLURM cluster needs root: slurmd starts every job as its owner")
    base = Path(tempfile.mkdtemp(prefix="slurm-test-", dir="/tmp"))
    base.chmod(0o755)  # munged wants its socket directory searchable by everyone
    local = LocalCluster(base)
    try:
        local.start()
        yield local
    finally:
        local.stop()
        shutil.rmtree(base, ignore_errors=True)


def snakemake(workdir: Path, *args: str, env=None) -> subprocess.Popen:
    """Snakemake in the background on TARGETS (first: --configfile takes several values)."""
    log = open(workdir / "snakemake.out", "w")
    proc = subprocess.Popen(
        [
            *SNAKEMAKE,
            *TARGETS,
            "--directory",
            str(workdir),
            "--configfile",
            str(workdir / "config.yaml"),
            *args,
        ],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    log.close()
    return proc


def stop(proc: subprocess.Popen) -> None:
    """End a snakemake run (and its process group) that is still going."""
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=60)


def finish(proc: subprocess.Popen, workdir: Path) -> str:
    try:
        proc.wait(timeout=RUN_TIMEOUT)
    except subprocess.TimeoutExpired:
        stop(proc)
        pytest.fail(
            f"snakemake in {workdir} ran longer than {RUN_TIMEOUT} s\n"
            f"{tail(workdir / 'snakemake.out', 60)}"
        )
    output = (workdir / "snakemake.out").read_text()
    assert proc.returncode == 0, f"snakemake in {workdir} failed\n{output[-6000:]}"
    return output


def tables(workdir: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(workdir)): p.read_bytes()
        for pattern in COMPARED
        for p in sorted(workdir.glob(pattern))
    }


def test_slurm_run_matches_local_run(cluster, request, tmp_path):
    workdir = tmp_path / "slurm"
    workdir.mkdir()
    write_synthetic_interactions(workdir / "tiny.csv")
    config = dict(TINY_CONFIG, ranking={"shards": SHARDS})
    (workdir / "config.yaml").write_text(yaml.safe_dump(config))

    env = dict(cluster.env, OPENBLAS_NUM_THREADS="1", MPLBACKEND="Agg")
    slurm = snakemake(
        workdir,
        "--workflow-profile",
        str(REPO / "profiles" / "slurm"),
        "--jobs",
        "4",
        "--latency-wait",
        "10",
        "--slurm-no-account",  # no accounts without slurmdbd
        "--slurm-status-command",
        "squeue",  # no sacct without slurmdbd
        "--slurm-init-seconds-before-status-checks",
        "1",  # tiny jobs: poll early
        env=env,
    )
    try:
        # The local run, in one shard, is the session's shared one (conftest.py): asked
        # for once the SLURM run is under way, so that its jobs fill the SLURM run's
        # waits for job state polls when this worker is the one to make it.
        local_dir = request.getfixturevalue("reference")
        slurm_out = finish(slurm, workdir)
    finally:
        stop(slurm)

    # Every job really went through SLURM.
    run_ids = [
        line.split("SLURM run ID:")[1].strip()
        for line in slurm_out.splitlines()
        if "SLURM run ID:" in line
    ]
    assert len(run_ids) == 1, slurm_out[-3000:]
    jobs = cluster.jobs(run_ids[0])
    submitted = slurm_out.count("\nrule ")  # local jobs are printed as "localrule"
    assert len(jobs) == submitted >= 20, (jobs, slurm_out[-3000:])
    assert all(state == "COMPLETED" for _, state in jobs), jobs
    assert slurm_out.count("\nrule rank_shard:") == 3 * SHARDS, slurm_out[-3000:]

    local_tables, slurm_tables = tables(local_dir), tables(workdir)
    expected = {f"results/tiny/{name}.csv" for name in ("table3", "table4", "sampling")}
    expected |= {f"results/tiny/ranks/{r}.csv" for r in ("X", "Y", "Z")}
    expected |= {f"results/tiny/sampled_ranks/{r}.npy" for r in ("X", "Y", "Z")}
    assert expected <= set(local_tables), sorted(local_tables)
    assert sorted(slurm_tables) == sorted(local_tables)
    different = [path for path in local_tables if local_tables[path] != slurm_tables[path]]
    assert not different, f"tables differ between the local and the SLURM run: {different}"
