"""A Helm chart repository served on loopback by a test: ``index.yaml`` and ``.tgz`` archives in
Helm's repository format, from a folder the test writes (``publish`` packs a chart into it, and
may re-publish a version with other bytes, as a careless repository does). ``stop`` takes it off
the network: a render that still needed it would fail."""

from __future__ import annotations

import functools
import gzip
import hashlib
import io
import tarfile
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import yaml


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 (the base's name)
        pass


def chart_archive(name: str, files: dict[str, str]) -> bytes:
    """A chart as ``helm package`` lays it out: ``<name>/<file>`` in a gzipped tar (no times, so
    the same files publish the same bytes)."""
    raw = io.BytesIO()
    with (
        gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as packed,
        tarfile.open(fileobj=packed, mode="w") as archive,
    ):
        for path, text in sorted(files.items()):
            data = text.encode()
            info = tarfile.TarInfo(f"{name}/{path}")
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return raw.getvalue()


class ChartRepository:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.entries: dict[str, list[dict]] = {}
        self._write_index()
        handler = functools.partial(_QuietHandler, directory=str(folder))
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/charts"

    def publish(self, name: str, version: str, files: dict[str, str]) -> bytes:
        """Publish ``files`` as chart ``name`` ``version`` (replacing what that version held)."""
        chart_yaml = f"apiVersion: v2\nname: {name}\nversion: {version}\n"
        data = chart_archive(name, {"Chart.yaml": chart_yaml} | files)
        file = f"{name}-{version}.tgz"
        (self.folder / "charts").mkdir(exist_ok=True)
        (self.folder / "charts" / file).write_bytes(data)
        entries = [e for e in self.entries.get(name, []) if e["version"] != version]
        entries.append(
            {
                "apiVersion": "v2",
                "name": name,
                "version": version,
                "digest": hashlib.sha256(data).hexdigest(),
                "urls": [file],
            }
        )
        self.entries[name] = entries
        self._write_index()
        return data

    def _write_index(self) -> None:
        (self.folder / "charts").mkdir(exist_ok=True)
        index = {"apiVersion": "v1", "entries": self.entries}
        (self.folder / "charts" / "index.yaml").write_text(yaml.safe_dump(index))

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)
