"""Publishing to a git repository with the git binary (``subprocess``), in a temporary repository.

The git binary rather than GitPython or dulwich: it speaks every transport git users configure
(a path, ``file://``, ssh with their agent and ``~/.ssh/config``, https with their credential
helpers and ``http.*`` settings) exactly as ``git push`` does by hand, so credentials come from
the environment and git's own helpers and never pass through the farm. GitPython shells out to
the same binary anyway; dulwich re-implements the transports and ignores credential helpers.

One publish: read the remote's branches (``ls-remote``), fetch the ones it writes (shallow), write
each branch's tree, commit only when something changed, and push every new commit at once
(``--atomic``). A push that the remote refuses, or that finds the remote moved on, fails the
attempt; nothing is half-pushed and the next attempt starts again from the remote's state.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from farm.publish.errors import PublishError
from farm.publish.layout import CLUSTERS_FOLDER, BranchTree

DEFAULT_NAME, DEFAULT_EMAIL = "farm", "farm@localhost"


def _environment() -> dict[str, str]:
    # Never prompt: a publish runs unattended (a worker, the API); a helper or an agent answers.
    return {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GCM_INTERACTIVE": "never", "LC_ALL": "C"}


class _Repository:
    def __init__(self, folder: Path, url: str) -> None:
        self.folder = folder
        self.url = url

    def git(
        self, *args: str, check: bool = True, retryable: bool = False
    ) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            ["git", "-c", "commit.gpgsign=false", "-c", "core.hooksPath=/dev/null", *args],
            cwd=self.folder,
            env=_environment(),
            capture_output=True,
            text=True,
            check=False,
        )
        if check and done.returncode != 0:
            detail = "; ".join(line.strip() for line in done.stderr.splitlines() if line.strip())[-600:]
            raise PublishError(
                "publish.push_failed" if retryable else "publish.git_failed",
                f"git {args[0]} to {self.url} failed: {detail or f'exit status {done.returncode}'}",
                retryable=retryable,
            )
        return done

    def remote_branches(self) -> dict[str, str]:
        listed = self.git("ls-remote", "--heads", "origin", retryable=True).stdout
        heads = {}
        for line in listed.splitlines():
            sha, _, ref = line.partition("\t")
            heads[ref.removeprefix("refs/heads/")] = sha
        return heads

    def tracked(self) -> list[str]:
        listed = self.git("ls-files", "-z").stdout
        return [path for path in listed.split("\0") if path]

    def identity(self) -> list[str]:
        """Commit as the user git is configured for, else as ``farm <farm@localhost>``."""
        configured = self.git("config", "--get", "user.email", check=False).stdout.strip()
        env_set = "GIT_AUTHOR_EMAIL" in os.environ or "GIT_COMMITTER_EMAIL" in os.environ
        if configured or env_set:
            return []
        return ["-c", f"user.name={DEFAULT_NAME}", "-c", f"user.email={DEFAULT_EMAIL}"]


def _stale(path: str, tree: BranchTree) -> bool:
    """Whether the tracked file ``path``, not among the tree's files, goes: it is under a prefix
    the publish replaces, or in the folder of a cluster the run no longer has."""
    if any(path.startswith(prefix) for prefix in tree.replace):
        return True
    if tree.known_clusters is None or not path.startswith(CLUSTERS_FOLDER):
        return False
    return path.removeprefix(CLUSTERS_FOLDER).split("/", 1)[0] not in tree.known_clusters


def _write_tree(repository: _Repository, tree: BranchTree) -> None:
    root = repository.folder
    wanted = set(tree.files)
    for path in repository.tracked():
        if path not in wanted and _stale(path, tree):
            (root / path).unlink()
    for path, data in tree.files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.exists() or target.read_bytes() != data:
            target.write_bytes(data)


def _checkout(repository: _Repository, branch: str, remote_sha: str | None) -> None:
    if remote_sha is not None:
        repository.git("checkout", "-q", "-f", "-B", branch, remote_sha)
    else:
        repository.git("symbolic-ref", "HEAD", f"refs/heads/{branch}")
        repository.git("read-tree", "--empty")
    repository.git("clean", "-q", "-f", "-d", "-x")


def _commit_if_changed(repository: _Repository, message: str) -> bool:
    repository.git("add", "-A")
    if repository.git("diff", "--cached", "--quiet", check=False).returncode == 0:
        return False
    repository.git(*repository.identity(), "commit", "-q", "--no-verify", "-m", message)
    return True


@dataclass(frozen=True)
class GitPublished:
    heads: dict[str, str]  # branch → its commit after the push (absent: never written, still empty)
    committed: tuple[str, ...]  # the branches that got a new commit


def publish_to_git(
    url: str, trees: dict[str, BranchTree], message_for: Callable[[BranchTree], str]
) -> GitPublished:
    """Write ``trees`` (branch → files) to the repository at ``url``: one commit per branch whose
    files changed, pushed together. Raises ``PublishError`` (retryable when the remote is
    unreachable or refuses the push)."""
    if shutil.which("git") is None:
        raise PublishError("publish.git_failed", "the git binary is not installed (apt-get install git)")
    folder = Path(tempfile.mkdtemp(prefix="farm-publish-"))
    try:
        repository = _Repository(folder, url)
        repository.git("init", "-q")
        repository.git("remote", "add", "origin", url)
        remote = repository.remote_branches()
        present = [branch for branch in trees if branch in remote]
        if present:
            refspecs = [f"+refs/heads/{b}:refs/remotes/origin/{b}" for b in present]
            repository.git("fetch", "-q", "--no-tags", "--depth=1", "origin", *refspecs, retryable=True)
        heads: dict[str, str] = {}
        committed: list[str] = []
        for branch, tree in trees.items():
            _checkout(repository, branch, remote.get(branch))
            _write_tree(repository, tree)
            if _commit_if_changed(repository, message_for(tree)):
                committed.append(branch)
            if branch in remote or branch in committed:
                heads[branch] = repository.git("rev-parse", "HEAD").stdout.strip()
        if committed:
            refspecs = [f"refs/heads/{b}:refs/heads/{b}" for b in committed]
            repository.git("push", "-q", "--atomic", "--no-verify", "origin", *refspecs, retryable=True)
        return GitPublished(heads, tuple(committed))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
