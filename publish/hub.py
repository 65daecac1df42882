"""Publishing a release folder to the Hugging Face Hub: one commit of the changed files, then one tag on it.

What a user can rely on: a release is visible only as its tag, and a tag always names a commit whose
tree is exactly the release (the Hub's own `.gitattributes`/`.gitignore` aside). The upload is a single
`create_commit`, so `main` moves in one step from the previous release to the new one, never through a
half-uploaded state; a publish that fails between that commit and the tag leaves `main` on the new
release with no tag, and running it again finds nothing to upload and tags that same commit.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

from huggingface_hub import CommitOperationAdd, CommitOperationDelete, HfApi, RepoFile
from huggingface_hub.errors import HfHubHTTPError, OfflineModeIsEnabled, RepositoryNotFoundError
from huggingface_hub.utils import httpx  # the HTTP client huggingface_hub uses, whatever its major version

from publish.release import code_version
from timelyqa.checks import http_url, is_loopback
from timelyqa.errors import ConfigError, SourceContractError, TimelyQAError, TransientSourceError
from timelyqa.http import RetryPolicy, retry_after, transient_status
from timelyqa.release_manifest import ReleaseManifest

log = logging.getLogger(__name__)
T = TypeVar("T")

HOUSEKEEPING = frozenset({".gitattributes", ".gitignore"})
"""Remote files the Hub manages (LFS rules): never compared with the release, never deleted."""
MAX_WAIT_SECONDS = 60.0
_TAG = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")
_MOVED = 412  # main moved under us: planning again against the new head is safe, so it is retried too


@dataclass(frozen=True)
class LocalFile:
    size: int
    sha256: str
    git_sha1: str  # what the Hub reports as blob id for a file stored in git rather than LFS


@dataclass(frozen=True)
class Release:
    folder: Path
    version: str
    manifest_repo: str | None
    files: dict[str, LocalFile]


@dataclass(frozen=True)
class PublishResult:
    """What a publish did, or with dry_run what it would do: `uploaded` and `deleted` are repository paths."""

    repo_id: str
    tag: str
    commit: str | None  # the tagged commit; None in a dry run
    uploaded: tuple[str, ...]
    deleted: tuple[str, ...]
    dry_run: bool

    def summary(self) -> str:
        verb = "would upload" if self.dry_run else "uploaded"
        lines = [f"{self.repo_id}@{self.tag}: {verb} {len(self.uploaded)} file(s), "
                 f"{'would delete' if self.dry_run else 'deleted'} {len(self.deleted)}"
                 + ("" if self.commit is None else f", tagged commit {self.commit}")]
        lines += [f"  + {path}" for path in self.uploaded] + [f"  - {path}" for path in self.deleted]
        return "\n".join(lines)


def _hash_file(path: Path) -> LocalFile:
    size = path.stat().st_size
    sha256, sha1 = hashlib.sha256(), hashlib.sha1(b"blob %d\0" % size)
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            sha256.update(chunk)
            sha1.update(chunk)
    return LocalFile(size, sha256.hexdigest(), sha1.hexdigest())


def read_release(folder: Path) -> Release:
    """The release's version and files (every file not under a dot-folder), checked against its manifest."""
    folder = Path(folder)
    manifest = ReleaseManifest.load(folder)
    version = manifest.version
    if not _TAG.match(version):
        raise ConfigError(f"{folder}: manifest.json version {version!r} cannot name a tag")
    if not (folder / "README.md").is_file():
        raise ConfigError(f"{folder}: no README.md (the dataset card); rebuild the release")
    paths = sorted(p for p in folder.rglob("*") if p.is_file()
                   and not any(part.startswith(".") for part in p.relative_to(folder).parts))
    files = {p.relative_to(folder).as_posix(): _hash_file(p) for p in paths}
    listed = manifest.files
    for name, meta in sorted(listed.items()):
        if name not in files or files[name].sha256 != meta.sha256:
            state = "is missing" if name not in files else "differs from the hash in manifest.json"
            raise ConfigError(f"{folder}: {name} {state}; the release is incomplete or changed after it was built")
    strays = [name for name in files if name.endswith(".parquet") and name not in listed]
    if strays:
        raise ConfigError(f"{folder}: {strays[0]} is not in manifest.json ({len(strays)} such file(s)); "
                          "rebuild the release into a clean folder")
    return Release(folder, version, manifest.repo_id, files)


def plan_changes(local: dict[str, LocalFile], remote: dict[str, RepoFile]) -> tuple[list[str], list[str]]:
    """Paths to upload (new or changed content) and remote paths to delete (gone from the release)."""
    def same(path: str) -> bool:
        theirs, ours = remote.get(path), local[path]
        if theirs is None:
            return False
        if theirs.lfs is not None:  # an LFS blob id hashes the pointer; the content hash is the lfs sha256
            return theirs.lfs.sha256 == ours.sha256
        return theirs.blob_id == ours.git_sha1
    upload = [path for path in sorted(local) if not same(path)]
    delete = [path for path in sorted(remote) if path not in local and path not in HOUSEKEEPING]
    return upload, delete


def _status_text(exc: HfHubHTTPError) -> str:
    first = (exc.server_message or str(exc)).strip().splitlines()
    return first[0] if first else type(exc).__name__


def _translate(exc: BaseException, what: str, endpoint: str) -> TimelyQAError:
    """One exception of ours, one line, for a failure of the Hub client: transient, configuration or contract."""
    seen: BaseException | None = exc
    while seen is not None and not isinstance(seen, (HfHubHTTPError, httpx.HTTPError, OfflineModeIsEnabled)):
        seen = seen.__cause__ or seen.__context__  # an LFS upload failure comes wrapped in a RuntimeError
    if isinstance(seen, OfflineModeIsEnabled):
        return ConfigError("HF_HUB_OFFLINE is set: unset it to publish to the Hub")
    if isinstance(seen, HfHubHTTPError):
        status = seen.response.status_code
        text = _status_text(seen)
        if status == 401:
            return ConfigError(f"{what}: the Hub at {endpoint} rejected the token (401); set HF_TOKEN to a valid token")
        if status == 403:
            return ConfigError(f"{what}: the token may not write here (403): {text}")
        if status == _MOVED or transient_status(status):
            return TransientSourceError(f"{what}: HTTP {status} from {endpoint}: {text}",
                                        retry_after=retry_after(seen.response.headers.get("Retry-After")))
        if status == 404 and "xet" in str(seen.response.url):
            return ConfigError(f"{what}: {endpoint} serves no Xet uploads; set HF_HUB_DISABLE_XET=1")
        if isinstance(seen, RepositoryNotFoundError):
            return ConfigError(f"{what}: repository not found at {endpoint} (HTTP {status})")
        return SourceContractError(f"{what}: HTTP {status} from {endpoint}: {text}")
    if isinstance(seen, httpx.HTTPError):  # checked after its subclass HfHubHTTPError: timeouts, dropped links
        return TransientSourceError(f"{what}: {type(seen).__name__} talking to {endpoint}")
    if "xet-write-token" in str(exc) and "404" in str(exc):  # hf_xet's own error, raised from its Rust core
        return ConfigError(f"{what}: {endpoint} serves no Xet uploads; set HF_HUB_DISABLE_XET=1")
    if isinstance(exc, ValueError) and "metadata in README.md" in str(exc):
        return ConfigError(f"{what}: the Hub refused the card's YAML: {' '.join(str(exc).split())}")
    return SourceContractError(f"{what}: {type(exc).__name__}: {' '.join(str(exc).split())}")


class _Hub:
    """The HfApi calls a publish makes, each turning client failures into one of our exceptions."""

    def __init__(self, api: HfApi, repo_id: str, token: str | bool) -> None:
        self.api, self.repo_id, self.token = api, repo_id, token

    def call(self, what: str, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        try:
            return fn(*args, **kwargs)
        except (HfHubHTTPError, httpx.HTTPError, OfflineModeIsEnabled, OSError, RuntimeError, ValueError) as exc:
            error = _translate(exc, what, self.api.endpoint)
            kind = type(exc).__name__
        # Raised outside the handler so it carries no __context__: the client's exceptions hold the request,
        # and with it the Authorization header, which must not reach Prefect's stored states or a pickle.
        log.debug("%s failed with %s", what, kind)
        raise _scrub(error, self.token)

    def refs(self) -> tuple[str | None, dict[str, str]] | None:
        """(main's head commit, {tag: commit}), or None when the repository does not exist."""
        def list_refs() -> Any:
            try:
                return self.api.list_repo_refs(self.repo_id, repo_type="dataset", token=self.token)
            except RepositoryNotFoundError:
                return None
        refs = self.call("list refs", list_refs)
        if refs is None:
            return None
        head = next((b.target_commit for b in refs.branches if b.name == "main"), None)
        return head, {t.name: t.target_commit for t in refs.tags}

    def tree(self, revision: str) -> dict[str, RepoFile]:
        entries = self.call("list files", lambda: list(self.api.list_repo_tree(
            self.repo_id, recursive=True, revision=revision, repo_type="dataset", token=self.token)))
        return {e.path: e for e in entries if isinstance(e, RepoFile)}


def _scrub(error: TimelyQAError, token: str | bool) -> TimelyQAError:
    """The same error with the token masked, should a server ever echo it back in a message."""
    if isinstance(token, str) and token and token in str(error):
        error.args = (str(error).replace(token, "***"),)
    return error


def _publish_once(hub: _Hub, release: Release, *, dry_run: bool) -> PublishResult:
    repo_id, tag = hub.repo_id, release.version
    if not dry_run:
        who = hub.call("check the token", hub.api.whoami, token=hub.token)
        role = (((who or {}).get("auth") or {}).get("accessToken") or {}).get("role")
        if role == "read":
            raise ConfigError(f"the token for {who.get('name')} is read-only; publishing needs a write token")
        hub.call("create the repository", hub.api.create_repo, repo_id, repo_type="dataset", exist_ok=True,
                 token=hub.token)
    found = hub.refs()
    head, tags = found if found is not None else (None, {})
    if tag in tags:
        if plan_changes(release.files, hub.tree(tags[tag])) == ([], []):
            # Already published, e.g. by an earlier run whose answer to the tag call was lost: nothing to do.
            log.info("%s: tag %s already holds this release (commit %s)", repo_id, tag, tags[tag])
            return PublishResult(repo_id, tag, tags[tag], (), (), dry_run)
        raise ConfigError(f"{repo_id} already has tag {tag} (commit {tags[tag]}) with other files; a release tag "
                          "is never moved: build the release with another version")
    remote = hub.tree(head) if head else {}
    upload, delete = plan_changes(release.files, remote)
    if dry_run:
        return PublishResult(repo_id, tag, None, tuple(upload), tuple(delete), True)
    commit = head
    if upload or delete:
        log.info("%s: committing %d upload(s) and %d deletion(s) on %s", repo_id, len(upload), len(delete),
                 head or "an empty repository")
        operations = ([CommitOperationAdd(path_in_repo=p, path_or_fileobj=str(release.folder / p)) for p in upload]
                      + [CommitOperationDelete(path_in_repo=p) for p in delete])
        info = hub.call("commit the release", hub.api.create_commit, repo_id, operations,
                        commit_message=f"Release {tag}", commit_description=_description(release),
                        repo_type="dataset", revision="main", parent_commit=head, token=hub.token)
        commit = info.oid
    if commit is None:
        raise SourceContractError(f"{repo_id}: the repository has no main branch to tag")
    # Tag only a commit whose tree is the release: this also guards the no-op case, and a server that
    # skipped a file (a .gitignore rule) would otherwise get a tag on a partial release.
    missing, extra = plan_changes(release.files, hub.tree(commit))
    if missing or extra:
        raise SourceContractError(f"{repo_id}: commit {commit} does not hold the release "
                                  f"({len(missing)} file(s) differ, {len(extra)} extra); not tagged")
    _tag(hub, tag, commit)
    return PublishResult(repo_id, tag, commit, tuple(upload), tuple(delete), False)


def _tag(hub: _Hub, tag: str, commit: str) -> None:
    try:
        hub.call(f"tag commit {commit} as {tag}", hub.api.create_tag, hub.repo_id, tag=tag, revision=commit,
                 tag_message=f"timelyqa release {tag}", repo_type="dataset", token=hub.token)
    except SourceContractError:
        # A 409 after a lost answer means our own tag is there; anyone else's is a refusal.
        found = hub.refs()
        if found is None or found[1].get(tag) != commit:
            raise
    except TransientSourceError as exc:
        raise TransientSourceError(f"{exc}; commit {commit} is on main but not tagged yet: publishing again "
                                   "tags it", retry_after=exc.retry_after) from None


def _description(release: Release) -> str:
    return f"timelyqa release {release.version}, {len(release.files)} files, code {code_version()}."


def check_token_endpoint(url: str, option: str) -> str:
    """`url` when a Hub token may be sent to it: https, or plain http to this machine only (a test Hub, a tunnel).
    Over plain http to anywhere else the token, a write credential, crosses the network readable by anyone on path."""
    http_url(url, option)
    parts = urlsplit(url)
    if parts.scheme != "https" and not is_loopback(parts.hostname):
        raise ConfigError(f"{option} {url!r}: a Hub token goes only over https (or plain http to 127.0.0.1, ::1 or "
                          "localhost); refusing to send it in clear")
    return url


def publish_release(release: Path, repo_id: str, *, token: str | None = None, endpoint: str | None = None,
                    dry_run: bool = False, attempts: int = 4, backoff_seconds: float = 2.0) -> PublishResult:
    """Publish the release folder to dataset repo `repo_id` as one commit tagged with the manifest's version.

    The token is `token`, else the environment's HF_TOKEN (a dry run needs none); `endpoint` defaults to
    HF_ENDPOINT or huggingface.co. Only changed files are uploaded and files the release no longer has
    are deleted, in one commit. An existing tag is refused before anything is uploaded. Transient
    failures (timeouts, dropped connections, 429, 5xx) are retried `attempts` times in all, each
    attempt planning again from the repository's state, with backoff from `backoff_seconds` (or the
    server's Retry-After), capped at a minute.
    """
    if attempts < 1:
        raise ConfigError(f"publish {repo_id}: attempts must be at least 1, got {attempts}")
    found = read_release(Path(release))
    if not re.fullmatch(r"[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*", repo_id):
        raise ConfigError(f"--repo {repo_id!r} is not ORG/NAME")
    if found.manifest_repo and found.manifest_repo != repo_id:
        raise ConfigError(f"{found.folder}: the card was written for {found.manifest_repo}, not {repo_id}; "
                          "rebuild the release for this repository")
    secret = token or os.environ.get("HF_TOKEN") or None
    if secret is None and not dry_run:
        raise ConfigError("no Hub token: set HF_TOKEN (or the flow's Secret block) to a write token")
    # token=False keeps huggingface_hub from falling back to a token saved on disk by `hf auth login`.
    api = HfApi(endpoint=endpoint, library_name="timelyqa", library_version=code_version())
    if secret is not None:  # before anything else: no request may carry the token in clear
        check_token_endpoint(api.endpoint, "endpoint" if endpoint else "HF_ENDPOINT")
        if endpoint is None and os.environ.get("HF_ENDPOINT"):  # huggingface_hub read it at import: check both
            check_token_endpoint(os.environ["HF_ENDPOINT"], "HF_ENDPOINT")
    hub = _Hub(api, repo_id, secret or False)
    policy = RetryPolicy(attempts - 1, backoff_seconds, MAX_WAIT_SECONDS)

    def retried(attempt: int, exc: TransientSourceError, wait: float) -> None:
        log.warning("publish %s: %s; attempt %d of %d in %.1f s", repo_id, exc, attempt + 2, attempts, wait)

    result = policy.run(lambda _: _publish_once(hub, found, dry_run=dry_run), sleep=time.sleep,
                        on_retry=retried)
    log.info("%s", result.summary().splitlines()[0])
    return result
