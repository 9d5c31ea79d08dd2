"""Local workers take turns to write to the embedded SQLite file on a lock file beside it
(``write_turn``), so the next writer starts as soon as the one before it is done."""

from __future__ import annotations

import select
import subprocess
import sys
import textwrap
from pathlib import Path

from farm.store.db import create_farm_engine, write_turn

_OTHER_WRITER = textwrap.dedent(
    """
    import sys
    from farm.store.db import create_farm_engine, write_turn
    engine = create_farm_engine(sys.argv[1])
    print("waiting", flush=True)
    with write_turn(engine):
        print("writing", flush=True)
    """
)


def _line(process: subprocess.Popen[str], seconds: float) -> str | None:
    assert process.stdout is not None
    ready, _, _ = select.select([process.stdout], [], [], seconds)
    return process.stdout.readline().strip() if ready else None


def _writer_kept_waiting(url: str) -> subprocess.Popen[str]:
    """Another process that asks for the turn, checked to be still waiting for it."""
    other = subprocess.Popen([sys.executable, "-c", _OTHER_WRITER, url], stdout=subprocess.PIPE, text=True)
    try:
        assert _line(other, 60) == "waiting"
        assert _line(other, 0.5) is None  # not while this process holds the turn
    except BaseException:
        other.kill()
        raise
    return other


def test_a_writer_waits_for_the_turn_another_process_holds_and_gets_it_once_released(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'farm.db'}"
    engine = create_farm_engine(url)
    with write_turn(engine):
        other = _writer_kept_waiting(url)
    assert _line(other, 60) == "writing" and other.wait(timeout=60) == 0
    assert (tmp_path / "farm.db.write-turn").exists()
    engine.dispose()


def test_a_turn_taken_again_inside_its_block_is_held_until_the_outer_block_ends(database_url: str) -> None:
    """On PostgreSQL there is no turn to take: every writer goes at once."""
    engine = create_farm_engine(database_url)
    sqlite = engine.dialect.name == "sqlite"
    with write_turn(engine):
        with write_turn(engine), engine.connect() as connection:
            assert connection.exec_driver_sql("SELECT 1").scalar() == 1
        other = _writer_kept_waiting(database_url) if sqlite else None  # the inner end gave nothing away
    if other is not None:
        assert _line(other, 60) == "writing" and other.wait(timeout=60) == 0
    engine.dispose()
