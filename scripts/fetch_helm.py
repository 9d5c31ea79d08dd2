"""Fetch one helm release into a folder, verified: the image build's helm (see the Dockerfile).

    python scripts/fetch_helm.py VERSION ARCH DEST [--sha256 DIGEST] [--base-url URL]

The tarball's sha256 must equal the checksum the Helm project publishes beside it
(``<tarball>.sha256sum``) and, when ``--sha256`` is given, that digest too; otherwise nothing is
written and the script exits 1 with one ``Error:`` line. Standard library only: it runs before the
farm is installed.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import sys
import tarfile
import urllib.request
from pathlib import Path

DEFAULT_BASE_URL = "https://get.helm.sh"


class FetchError(Exception):
    pass


def _get(url: str) -> bytes:
    try:
        with urllib.request.urlopen(url, timeout=120) as response:
            return response.read()
    except OSError as error:
        raise FetchError(f"{url}: {error}") from None


def fetch_helm(
    version: str, arch: str, dest: Path, pinned: str = "", base_url: str = DEFAULT_BASE_URL
) -> Path:
    """Write ``helm`` of release ``version`` for linux/``arch`` into ``dest``; FetchError when the
    download fails or its digest is not the published (and pinned) one."""
    tarball = f"helm-v{version}-linux-{arch}.tar.gz"
    data = _get(f"{base_url}/{tarball}")
    published = _get(f"{base_url}/{tarball}.sha256sum").split()[0].decode()
    digest = hashlib.sha256(data).hexdigest()
    if digest != published:
        raise FetchError(f"{tarball}: sha256 {digest} is not the published {published}")
    if pinned and digest != pinned:
        raise FetchError(f"{tarball}: sha256 {digest} is not the pinned {pinned}")
    with tarfile.open(fileobj=io.BytesIO(data)) as archive:
        member = archive.getmember(f"linux-{arch}/helm")
        member.name = "helm"
        archive.extract(member, dest, filter="data")
    return dest / "helm"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("version")
    parser.add_argument("arch")
    parser.add_argument("dest", type=Path)
    parser.add_argument("--sha256", default="")
    parser.add_argument("--base-url", default=DEFAULT_BASE_URL)
    arguments = parser.parse_args(argv)
    try:
        path = fetch_helm(
            arguments.version, arguments.arch, arguments.dest, arguments.sha256, arguments.base_url
        )
    except FetchError as error:
        print(f"Error: {error}; nothing written", file=sys.stderr)
        return 1
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
