"""The workflow's `download` rule against a local HTTP server: success, 404,
truncated body and md5 mismatch, each leaving no archive behind on failure."""

import hashlib
import http.server
import io
import subprocess
import sys
import threading
import zipfile
from pathlib import Path

import pytest
import yaml

from sampled_metrics.data import load_split, md5sum

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = [sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile")]
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


class Handler(http.server.BaseHTTPRequestHandler):
    """/tiny.zip: the archive; /truncated.zip: announces the full length, sends 100 bytes."""

    requests: list = []

    def do_GET(self):  # noqa: N802 (http.server API)
        self.requests.append(self.path)
        if self.path == "/tiny.zip":
            body, length = BODY, len(BODY)
        elif self.path == "/truncated.zip":
            body, length = BODY[:100], len(BODY)
        else:
            self.send_error(404, "Not Found")
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/zip")
        self.send_header("Content-Length", str(length))
        self.end_headers()
        self.wfile.write(body)
        self.close_connection = True

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def base_url(request):
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(
        target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()

    def stop():
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)

    request.addfinalizer(stop)
    return f"http://127.0.0.1:{httpd.server_address[1]}"


def run_download(
    workdir: Path, url: str, md5: str, target: str = ARCHIVE
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
    }
    (workdir / "config.yaml").write_text(yaml.safe_dump(config))
    Handler.requests.clear()
    return subprocess.run(
        [
            *SNAKEMAKE,
            "--directory",
            str(workdir),
            "--configfile",
            str(workdir / "config.yaml"),
            "--cores",
            "1",
            target,
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )


def leftovers(workdir: Path) -> list[str]:
    raw = workdir / "data/raw"
    return sorted(p.name for p in raw.iterdir()) if raw.exists() else []


def test_download_rule_fetches_checks_and_feeds_the_split(base_url, tmp_path):
    result = run_download(
        tmp_path, f"{base_url}/tiny.zip", BODY_MD5, "data/processed/tiny/split.npz"
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert Handler.requests == ["/tiny.zip"]
    assert leftovers(tmp_path) == ["tiny.zip"]
    assert md5sum(tmp_path / ARCHIVE) == BODY_MD5
    split = load_split(tmp_path / "data/processed/tiny/split.npz")
    assert split.n_users == 6 and len(split.test_items) == 6 and split.train.nnz == 12
    assert f"{base_url}/tiny.zip" in (tmp_path / f"logs/download/{ARCHIVE}.log").read_text()
    again = run_download(tmp_path, f"{base_url}/tiny.zip", BODY_MD5)  # present: nothing to do
    assert again.returncode == 0 and Handler.requests == []


def test_download_rule_http_404_names_the_url_and_leaves_nothing(base_url, tmp_path):
    url = f"{base_url}/missing.zip"
    result = run_download(tmp_path, url, BODY_MD5)
    assert result.returncode != 0
    output = result.stdout + result.stderr
    assert url in output and "HTTP 404" in output, output[-3000:]
    assert Handler.requests == ["/missing.zip"]  # a 404 is not retried
    assert leftovers(tmp_path) == []


def test_download_rule_truncated_body_leaves_nothing(base_url, tmp_path):
    url = f"{base_url}/truncated.zip"
    result = run_download(tmp_path, url, BODY_MD5)
    assert result.returncode != 0
    output = result.stdout + result.stderr
    assert url in output and f"truncated body: got 100 of {len(BODY)} bytes" in output, output[
        -3000:
    ]
    assert len(Handler.requests) > 1  # retried, then given up
    assert leftovers(tmp_path) == []


def test_download_rule_md5_mismatch_names_file_and_md5s_and_leaves_nothing(base_url, tmp_path):
    wrong = "0" * 32
    result = run_download(tmp_path, f"{base_url}/tiny.zip", wrong)
    assert result.returncode != 0
    output = result.stdout + result.stderr
    message = [line for line in output.splitlines() if wrong in line]
    assert message and ARCHIVE in message[0] and BODY_MD5 in message[0], output[-3000:]
    assert leftovers(tmp_path) == []
