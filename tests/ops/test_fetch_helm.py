"""scripts/fetch_helm.py, the image build's helm download, against a local HTTP server: it writes
helm only when the tarball's sha256 is the published one (and the pinned one, when given)."""

from __future__ import annotations

import hashlib
import http.server
import io
import subprocess
import sys
import tarfile
import threading
from collections.abc import Iterator
from functools import partial
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "fetch_helm.py"
VERSION, ARCH = "3.16.2", "amd64"
TARBALL = f"helm-v{VERSION}-linux-{ARCH}.tar.gz"
HELM = b"#!/bin/sh\necho v3.16.2\n"


def _tarball() -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        info = tarfile.TarInfo(f"linux-{ARCH}/helm")
        info.size, info.mode = len(HELM), 0o755
        archive.addfile(info, io.BytesIO(HELM))
    return buffer.getvalue()


@pytest.fixture
def release(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A folder served over HTTP holding the tarball and its published checksum."""
    folder = tmp_path / "release"
    folder.mkdir()
    data = _tarball()
    (folder / TARBALL).write_bytes(data)
    (folder / f"{TARBALL}.sha256sum").write_text(f"{hashlib.sha256(data).hexdigest()}  {TARBALL}\n")
    handler = partial(http.server.SimpleHTTPRequestHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", folder
    finally:
        server.shutdown()
        server.server_close()


def _fetch(base_url: str, dest: Path, *args: str) -> subprocess.CompletedProcess[str]:
    dest.mkdir(exist_ok=True)
    command = [sys.executable, str(SCRIPT), VERSION, ARCH, str(dest), "--base-url", base_url, *args]
    return subprocess.run(command, capture_output=True, text=True, check=False, timeout=60)


@pytest.mark.timeout(60)
def test_helm_is_written_when_its_digest_is_the_published_and_the_pinned_one(
    release: tuple[str, Path], tmp_path: Path
) -> None:
    base_url, folder = release
    digest = hashlib.sha256((folder / TARBALL).read_bytes()).hexdigest()
    result = _fetch(base_url, tmp_path / "bin", "--sha256", digest)
    assert result.returncode == 0, result.stderr
    helm = tmp_path / "bin" / "helm"
    assert helm.read_bytes() == HELM and helm.stat().st_mode & 0o111


@pytest.mark.timeout(60)
def test_a_tarball_that_is_not_the_published_or_the_pinned_one_writes_nothing(
    release: tuple[str, Path], tmp_path: Path
) -> None:
    base_url, folder = release
    pinned_elsewhere = _fetch(base_url, tmp_path / "a", "--sha256", "0" * 64)
    assert pinned_elsewhere.returncode == 1 and "is not the pinned" in pinned_elsewhere.stderr
    assert not (tmp_path / "a" / "helm").exists()
    (folder / TARBALL).write_bytes(_tarball() + b"tampered")
    tampered = _fetch(base_url, tmp_path / "b")
    assert (
        tampered.returncode == 1 and tampered.stderr.startswith("Error: ") and "published" in tampered.stderr
    )
    assert not (tmp_path / "b" / "helm").exists()
