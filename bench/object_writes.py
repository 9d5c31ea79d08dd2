#!/usr/bin/env python3
"""Object-store requests per target, counted on a real S3 server (moto on loopback).

Generates ``bench/fleet.py``'s synthetic catalog of N targets, starts a moto S3 server on a free
loopback port behind a small proxy that counts the requests it forwards, and runs ``farm run``
(local executor, embedded SQLite, objects in an S3 bucket) three times: the full run, the no-change
re-run, and a run after every image was retagged (every target renders again, the snapshot's
documents change). For each it counts the requests by method (a PUT the server took is an object
write; a conditional PUT it refused because the key exists wrote nothing; a HEAD or GET is a read)
and prints writes per rendered target. The goal (issue 29): at most one object write per rendered
target, none on a no-change run.

Prints the figures, then one line holding the same figures as a JSON object.

    .venv/bin/python bench/object_writes.py [--targets N] [--clusters C]
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fleet import Farm, _base_env, _snapshot_source, retag_catalog, write_catalog  # noqa: E402

BUCKET = "farm-bench"
CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "farm-bench",
    "AWS_SECRET_ACCESS_KEY": "farm-bench-secret",
    "AWS_DEFAULT_REGION": "us-east-1",
}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_moto(port: int) -> subprocess.Popen[bytes]:
    process = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        env=os.environ | CREDENTIALS,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    for _ in range(600):
        if process.poll() is not None:
            raise RuntimeError(f"moto server exited with status {process.returncode}")
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return process
        time.sleep(0.05)
    raise RuntimeError(f"moto server did not listen on 127.0.0.1:{port}")


class CountingProxy:
    """Forwards every request to the S3 server as it came and counts them by method (moto's own
    request recorder interleaves the lines of concurrent requests)."""

    def __init__(self, upstream_port: int) -> None:
        self.counts: Counter[str] = Counter()
        lock, counts = threading.Lock(), self.counts

        class Forward(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *_: object) -> None:
                pass

            def _forward(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                upstream = http.client.HTTPConnection("127.0.0.1", upstream_port)
                upstream.request(self.command, self.path, body=body, headers=dict(self.headers))
                response = upstream.getresponse()
                data = response.read()
                with lock:  # a conditional PUT refused (412: the key exists) wrote nothing
                    counts[
                        "PUT refused" if self.command == "PUT" and response.status == 412 else self.command
                    ] += 1
                self.send_response(response.status)
                for name, value in response.getheaders():
                    if name.lower() not in ("connection", "transfer-encoding", "content-length"):
                        self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                upstream.close()

            do_GET = do_PUT = do_HEAD = do_POST = do_DELETE = _forward

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Forward)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"

    def take(self) -> Counter[str]:
        """The counts since the last call."""
        taken = Counter(self.counts)
        self.counts.clear()
        return taken

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--targets", type=int, default=2000, help="synthetic targets (default 2000)")
    parser.add_argument("--clusters", type=int, default=20, help="ClusterProfiles (default 20)")
    options = parser.parse_args()
    if options.targets < 1:
        parser.error("--targets: must be at least 1")
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="farm-bench-s3-") as temp:
        work = Path(temp)
        source = _snapshot_source(work / "source")
        catalog = work / "catalog"
        n = len(write_catalog(catalog, options.targets, options.clusters))
        port = free_port()
        moto = start_moto(port)
        proxy = CountingProxy(port)
        try:
            endpoint = proxy.url
            import boto3

            boto3.client("s3", endpoint_url=endpoint, **_boto_credentials()).create_bucket(Bucket=BUCKET)
            env = (
                _base_env(source)
                | CREDENTIALS
                | {
                    "FARM_HOME": str(work / "home"),
                    "FARM_OBJECT_STORE": f"s3://{BUCKET}/farm",
                    "FARM_S3_ENDPOINT_URL": endpoint,
                }
            )
            farm = Farm(env, work)
            farm.run("db", "upgrade")
            proxy.take()
            figures: dict[str, float] = {"targets": n}
            for leg, expect in (("full", "succeeded"), ("rerun", "cached"), ("retagged", "succeeded")):
                if leg == "retagged":
                    retag_catalog(catalog)
                seconds, _ = farm.timed_run(catalog, "local", {expect: n})
                counts = proxy.take()
                rendered = n if expect == "succeeded" else 0
                per_target = counts["PUT"] / rendered if rendered else 0.0
                print(
                    f"{leg:9} run: {seconds:7.2f} s, {counts['PUT']:6d} object writes"
                    + (f" ({per_target:.3f} per rendered target)" if rendered else "")
                    + f", {counts['PUT refused']} conditional PUT refused, {counts['HEAD']} HEAD, {counts['GET']} GET"
                )
                figures |= {
                    f"s3_{leg}_seconds": round(seconds, 3),
                    f"s3_{leg}_object_writes": counts["PUT"],
                    f"s3_{leg}_object_puts_refused": counts["PUT refused"],
                    f"s3_{leg}_object_heads": counts["HEAD"],
                    f"s3_{leg}_object_gets": counts["GET"],
                }
                if rendered:
                    figures[f"s3_{leg}_object_writes_per_rendered_target"] = round(per_target, 3)
        finally:
            proxy.stop()
            moto.terminate()
            moto.wait()
    figures["bench_seconds"] = round(time.perf_counter() - started, 1)
    print(json.dumps(figures, sort_keys=True))
    return 0


def _boto_credentials() -> dict[str, str]:
    return {
        "aws_access_key_id": CREDENTIALS["AWS_ACCESS_KEY_ID"],
        "aws_secret_access_key": CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
        "region_name": CREDENTIALS["AWS_DEFAULT_REGION"],
    }


if __name__ == "__main__":
    sys.exit(main())
