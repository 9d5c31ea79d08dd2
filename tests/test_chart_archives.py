"""Chart archives as the farm packs them: the same chart folder gives the same bytes whatever the
order, times or modes of its files, and unpacks to the same files (a stored snapshot's vendored
chart is written back and packed again to the archive it recorded)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from farm.build.charts import ChartFetchError, pack_chart, read_chart_folder, unpack_chart

FILES = [("Chart.yaml", b"apiVersion: v2\nname: web\nversion: 1.2.0\n"), ("templates/a.yaml", b"kind: A\n")]


def test_the_same_chart_files_pack_to_the_same_bytes_in_any_order() -> None:
    assert pack_chart("web", FILES) == pack_chart("web", list(reversed(FILES)))
    assert pack_chart("web", FILES) != pack_chart("web", [*FILES, ("values.yaml", b"replicas: 2\n")])


def test_a_packed_chart_unpacks_to_its_files_and_packs_again_to_the_same_bytes() -> None:
    packed = pack_chart("web", FILES)
    assert sorted(unpack_chart(packed)) == sorted(FILES)
    assert pack_chart("web", unpack_chart(packed)) == packed


def test_a_chart_folder_packs_the_same_whatever_its_times_and_modes(tmp_path: Path) -> None:
    for name, data in FILES:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(data)
    first = pack_chart("web", read_chart_folder(tmp_path, Path.read_bytes))
    os.utime(tmp_path / "Chart.yaml", (1, 1))
    (tmp_path / "templates" / "a.yaml").chmod(0o600)
    assert pack_chart("web", read_chart_folder(tmp_path, Path.read_bytes)) == first


def test_a_chart_folder_holding_a_symbolic_link_is_refused(tmp_path: Path) -> None:
    (tmp_path / "Chart.yaml").write_bytes(FILES[0][1])
    (tmp_path / "secret.yaml").symlink_to("/etc/hostname")
    with pytest.raises(ChartFetchError, match="symbolic link"):
        read_chart_folder(tmp_path, Path.read_bytes)
