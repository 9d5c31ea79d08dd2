"""Settings from FARM_* variables, and the embedded defaults."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from farm import settings as settings_module
from farm.settings import SettingsError, load_settings
from farm.store.db import normalize_database_url


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> pytest.MonkeyPatch:
    for name in list(os.environ):
        if name.startswith("FARM_"):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    return monkeypatch


def test_with_nothing_set_everything_is_embedded_under_dot_farm(
    clean_env: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    settings = load_settings()
    home = tmp_path / ".farm"
    assert settings.home == home
    assert settings.database_url == f"sqlite:///{home / 'farm.db'}"
    assert settings.object_store == str(home / "objects")
    assert settings.signing_key_path == home / "keys" / "signing.key"
    assert settings.signing_key_is_embedded
    assert settings.trusted_signers_path == home / "keys" / "trusted_signers"
    assert settings.executor == "local"
    assert settings.celery_queue == "farm"
    assert not settings.uses_s3


def test_variables_override_the_defaults(clean_env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    clean_env.setenv("FARM_HOME", str(tmp_path / "h"))
    clean_env.setenv("FARM_DATABASE_URL", "postgresql+psycopg://u@db/farm")
    clean_env.setenv("FARM_OBJECT_STORE", "s3://bucket/prefix")
    clean_env.setenv("FARM_S3_ENDPOINT_URL", "http://127.0.0.1:9000")
    clean_env.setenv("FARM_S3_REGION", "eu-west-1")
    clean_env.setenv("FARM_SIGNING_KEY", "/keys/farm.key")
    clean_env.setenv("FARM_TRUSTED_SIGNERS", "/keys/trusted")
    clean_env.setenv("FARM_BROKER_URL", "redis://127.0.0.1:6379/0")
    clean_env.setenv("FARM_EXECUTOR", "celery")
    clean_env.setenv("FARM_CELERY_QUEUE", "farm-team-a")
    settings = load_settings()
    assert settings.home == tmp_path / "h"
    assert settings.database_url == "postgresql+psycopg://u@db/farm"
    assert settings.uses_s3 and settings.s3_region == "eu-west-1"
    assert settings.signing_key_path == Path("/keys/farm.key") and not settings.signing_key_is_embedded
    assert settings.trusted_signers_path == Path("/keys/trusted")
    assert settings.broker_url == "redis://127.0.0.1:6379/0"
    assert settings.executor == "celery"
    assert settings.celery_queue == "farm-team-a"


def test_relative_home_is_relative_to_the_current_directory(
    clean_env: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    clean_env.setenv("FARM_HOME", "state")
    assert load_settings().home == tmp_path / "state"


def test_an_empty_variable_means_unset(clean_env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    clean_env.setenv("FARM_DATABASE_URL", "")
    assert load_settings().database_url.startswith("sqlite:///")


def test_a_bad_executor_names_the_variable(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("FARM_EXECUTOR", "threads")
    with pytest.raises(SettingsError, match="FARM_EXECUTOR"):
        load_settings()


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("postgresql://u@h/db", "postgresql+psycopg://u@h/db"),
        ("postgres://u@h/db", "postgresql+psycopg://u@h/db"),
        ("postgresql+psycopg://u@h/db", "postgresql+psycopg://u@h/db"),
        ("sqlite:///x.db", "sqlite:///x.db"),
    ],
)
def test_postgres_urls_are_pinned_to_psycopg3(url: str, expected: str) -> None:
    assert normalize_database_url(url) == expected


@pytest.mark.parametrize("url", ["mysql://u@h/db", "not a url"])
def test_unsupported_database_urls_name_the_variable(url: str) -> None:
    with pytest.raises(ValueError, match="FARM_DATABASE_URL"):
        normalize_database_url(url)


def test_settings_are_read_again_when_a_farm_variable_home_or_the_working_folder_changes(
    clean_env: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    clean_env.chdir(tmp_path / "a")
    home = os.environ.get("HOME")
    first = load_settings()
    assert load_settings() is first  # the same environment and folder: read once
    assert first.home == tmp_path / "a" / ".farm"
    clean_env.chdir(tmp_path / "b")
    assert load_settings().home == tmp_path / "b" / ".farm"
    clean_env.setenv("farm_celery_queue", "other")  # a variable's name is read in any case
    assert load_settings().celery_queue == "other"
    clean_env.setenv("FARM_HOME", "~/h")
    clean_env.setenv("HOME", str(tmp_path / "home-one"))
    assert load_settings().home == tmp_path / "home-one" / "h"
    clean_env.setenv("HOME", str(tmp_path / "home-two"))
    assert load_settings().home == tmp_path / "home-two" / "h"
    clean_env.chdir(tmp_path / "a")
    clean_env.delenv("FARM_HOME")
    clean_env.delenv("farm_celery_queue")
    if home is None:
        clean_env.delenv("HOME")
    else:
        clean_env.setenv("HOME", home)
    assert load_settings() is first


def test_a_bad_variable_is_refused_again_on_every_read(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("FARM_EXECUTOR", "nope")
    for _ in range(2):
        with pytest.raises(SettingsError, match="FARM_EXECUTOR"):
            load_settings()


def test_settings_read_once_stay_kept_while_fewer_than_sixteen_newer_readings_follow(
    clean_env: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    clean_env.setattr(settings_module, "_LOADED", {})  # what earlier tests read does not count
    for index in range(15):  # a daemon that served commands from 15 other folders
        (tmp_path / f"earlier-{index}").mkdir()
        clean_env.chdir(tmp_path / f"earlier-{index}")
        load_settings()
    clean_env.chdir(tmp_path)
    first = load_settings()
    for index in range(5):
        (tmp_path / f"later-{index}").mkdir()
        clean_env.chdir(tmp_path / f"later-{index}")
        load_settings()
    clean_env.chdir(tmp_path)
    assert load_settings() is first
