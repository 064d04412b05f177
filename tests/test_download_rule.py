"""The workflow's `download` rule against a local HTTP server: success, 404,
truncated body and md5 mismatch, each leaving no archive behind on failure."""

import hashlib
import io
import subprocess
import zipfile
from pathlib import Path

import pytest
import yaml
from conftest import LocalServer, run

from sampled_metrics.data import load_split, md5sum

ARCHIVE = "data/raw/tiny.zip"

pytestmark = pytest.mark.slow


def ratings_zip() -> bytes:
    """A MovieLens-style archive: tiny/ratings.dat, 6 users with 3 ratings each."""
    lines = [
        f"{user}::{item}::4::{1000 * user + item}"
        for user in range(1, 7)
        for item in (1, 2, 2 + user)
    ]
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("tiny/ratings.dat", "\n".join(lines) + "\n")
        zf.writestr("tiny/movies.dat", "1::Toy Story (1995)::Animation\n")
    return buffer.getvalue()


BODY = ratings_zip()
BODY_MD5 = hashlib.md5(BODY).hexdigest()


@pytest.fixture
def server(http_server):
    """/tiny.zip: the archive; /truncated.zip: announces the full length, sends 100 bytes."""
    http_server.serve("/tiny.zip", BODY)
    http_server.serve("/truncated.zip", BODY[:100], length=len(BODY))
    return http_server


def run_download(
    server: LocalServer, workdir: Path, url: str, md5: str, target: str = ARCHIVE
) -> subprocess.CompletedProcess:
    config = {
        "dataset": "tiny",
        "datasets": {
            "tiny": {
                "url": url,
                "md5": md5,
                "archive": ARCHIVE,
                "format": "movielens_dat",
                "member": "tiny/ratings.dat",
                "binarize_threshold": None,
                "facts": {"n_users": 6, "n_events": 18},
            }
        },
        # sizes the tiny archive allows (data_checks.check_data_sizes runs on the split)
        "sampling": {"m": 1},
        "fig6": {"m_values": [1]},
        "protocols": {"run": ["recbole-uni100"]},
    }
    (workdir / "config.yaml").write_text(yaml.safe_dump(config))
    server.requests.clear()
    return run(workdir, "--cores", "1", target, timeout=300)


def archives(workdir: Path) -> list[str]:
    """The files left in data/raw (not the folder of their checksums)."""
    raw = workdir / "data/raw"
    return sorted(p.name for p in raw.iterdir() if p.is_file()) if raw.exists() else []


def test_download_rule_fetches_checks_and_feeds_the_split(server, tmp_path):
    url = f"{server.url}/tiny.zip"
    result = run_download(server, tmp_path, url, BODY_MD5, "data/processed/tiny/split.npz")
    assert result.returncode == 0, result.stderr[-3000:]
    assert server.requests == ["/tiny.zip"]
    assert archives(tmp_path) == ["tiny.zip"]
    assert md5sum(tmp_path / ARCHIVE) == BODY_MD5
    split = load_split(tmp_path / "data/processed/tiny/split.npz")
    assert split.n_users == 6 and len(split.test_items) == 6 and split.train.nnz == 12
    assert url in (tmp_path / f"logs/download/{ARCHIVE}.log").read_text()
    again = run_download(server, tmp_path, url, BODY_MD5)  # present: nothing to do
    assert again.returncode == 0 and server.requests == []


def test_download_rule_http_404_names_the_url_and_leaves_nothing(server, tmp_path):
    url = f"{server.url}/missing.zip"
    result = run_download(server, tmp_path, url, BODY_MD5)
    assert result.returncode != 0
    output = result.stdout + result.stderr
    assert url in output and "HTTP 404" in output, output[-3000:]
    assert server.requests == ["/missing.zip"]  # a 404 is not retried
    assert archives(tmp_path) == []


def test_download_rule_truncated_body_leaves_nothing(server, tmp_path):
    url = f"{server.url}/truncated.zip"
    result = run_download(server, tmp_path, url, BODY_MD5)
    assert result.returncode != 0
    output = result.stdout + result.stderr
    assert url in output and f"truncated body: got 100 of {len(BODY)} bytes" in output, output[
        -3000:
    ]
    assert len(server.requests) > 1  # retried, then given up
    assert archives(tmp_path) == []


def test_download_rule_md5_mismatch_names_file_and_md5s_and_leaves_nothing(server, tmp_path):
    wrong = "0" * 32
    result = run_download(server, tmp_path, f"{server.url}/tiny.zip", wrong)
    assert result.returncode != 0
    output = result.stdout + result.stderr
    message = [line for line in output.splitlines() if wrong in line]
    assert message and ARCHIVE in message[0] and BODY_MD5 in message[0], output[-3000:]
    assert archives(tmp_path) == []


def test_download_rule_makes_only_the_configured_archives(server, tmp_path):
    """Another file under data/raw/ is no output of `download` (a local `path` there is
    only an input): asking for it names it, with no traceback and no request."""
    result = run_download(server, tmp_path, f"{server.url}/tiny.zip", BODY_MD5, "data/raw/x.csv")
    assert result.returncode != 0
    output = result.stdout + result.stderr
    assert "No rule to produce data/raw/x.csv" in output, output[-3000:]
    assert "Traceback" not in output and "InputFunctionException" not in output
    assert server.requests == [] and archives(tmp_path) == []
