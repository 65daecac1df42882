"""A Hub-API test server of the project's own: the Hugging Face Hub's write and read calls, on 127.0.0.1.

A test double, not a Hub: huggingface.co's write API cannot run here (no installable package serves it;
see shared/ENVIRONMENT.md), so this serves exactly the calls huggingface_hub 2.4's HfApi (create_repo,
create_commit with regular and LFS files, create_tag, list_repo_refs, repo_info, list_repo_tree,
get_paths_info, whoami, hf_hub_download, snapshot_download) and datasets 5.2's `load_dataset(repo,
config, split=..., revision=tag)` make, with the response shapes and headers those clients read.
Each repository is a list of commits, each commit a full snapshot of its file tree (path -> sha256),
plus branches and tags; file contents sit in a content-addressed folder under `root`.

Writes need `Authorization: Bearer <token>` with a write token; a token the server does not know is
refused with 401 on any call, as the Hub does. `fail_next()` injects faults (a status, or a dropped
connection, before or after the operation took effect) so tests can show retries and what a failure
leaves behind. Run `python -m tests.hubserver --root DIR --token T` to serve one from a shell.
"""

from __future__ import annotations

import argparse
import base64
import fnmatch
import hashlib
import json
import re
import socket
import threading
import time
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, unquote, urlsplit

import yaml

from tests.localserver import LocalServer

DEFAULT_GITATTRIBUTES = "".join(f"{pattern} filter=lfs diff=lfs merge=lfs -text\n" for pattern in (
    "*.arrow", "*.bin", "*.gz", "*.bz2", "*.zst", "*.zip", "*.npy", "*.parquet", "*.safetensors", "*.tar"))
"""What the Hub writes into a new repository's first commit: binary data formats go through LFS."""
LFS_THRESHOLD = 10 * 1000 * 1000  # the Hub sends files of 10 MB and more through LFS whatever their name
LFS_POINTER = "version https://git-lfs.github.com/spec/v1\noid sha256:{oid}\nsize {size}\n"
REPO_TYPES = {"models": "model", "datasets": "dataset", "spaces": "space"}


def git_blob_sha1(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


@dataclass
class Entry:
    """One file in a commit's tree. `oid` is the git blob id (of the pointer file for LFS files)."""

    sha256: str
    size: int
    oid: str
    lfs: bool

    def pointer_size(self) -> int:
        return len(LFS_POINTER.format(oid=self.sha256, size=self.size))


@dataclass
class Commit:
    oid: str
    parent: str | None
    title: str
    date: str
    files: dict[str, Entry]
    added: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)


@dataclass
class Repo:
    repo_id: str
    repo_type: str
    private: bool
    created: str
    commits: dict[str, Commit] = field(default_factory=dict)
    branches: dict[str, str] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)

    def resolve(self, rev: str) -> Commit | None:
        """A branch, a tag, `refs/heads/x`, `refs/tags/x`, a commit id or a unique prefix of 7 or more."""
        name = rev.removeprefix("refs/heads/").removeprefix("refs/tags/")
        oid = self.branches.get(name) or self.tags.get(name)
        if oid is None and re.fullmatch(r"[0-9a-f]{7,40}", rev):
            found = [c for c in self.commits if c.startswith(rev)]
            oid = found[0] if len(found) == 1 else None
        return self.commits.get(oid) if oid else None


@dataclass
class Fault:
    operation: str
    status: int  # 0: close the connection without an answer
    times: int
    after_apply: bool
    retry_after: float | str | None  # seconds, or an HTTP date as RFC 9110 also allows


@dataclass
class Seen:
    method: str
    path: str
    operation: str
    status: int


class HubError(Exception):
    def __init__(self, status: int, message: str, code: str | None = None,
                 headers: dict[str, str] | None = None, **extra: Any) -> None:
        super().__init__(message)
        self.status, self.message, self.code, self.headers, self.extra = status, message, code, headers or {}, extra


class HubServer:
    """The server and its state. Use as a context manager, or start()/stop(); `url` is its HF_ENDPOINT."""

    def __init__(self, root: Path, tokens: dict[str, str] | None = None, *, user: str = "timelyqa-bot",
                 page_size: int = 1000, port: int = 0) -> None:
        self.root = Path(root)
        (self.root / "objects").mkdir(parents=True, exist_ok=True)
        self.tokens = dict(tokens or {})  # token -> "write" or "read"
        self.user = user
        self.page_size = page_size
        self.repos: dict[tuple[str, str], Repo] = {}
        self.faults: list[Fault] = []
        self.seen: list[Seen] = []
        self.lfs_uploads: list[str] = []  # sha256 of every LFS object PUT, in order
        self._announced: set[str] = set()
        self._lock = threading.RLock()
        self._load()
        self._local = LocalServer(_handler_for(self), port=port)
        self.url = self._local.url

    # -- life cycle ---------------------------------------------------------------------------------
    def start(self) -> HubServer:
        self._local.start()
        return self

    def stop(self) -> None:
        self._local.close()

    def __enter__(self) -> HubServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- what tests use -----------------------------------------------------------------------------
    def fail_next(self, operation: str, status: int = 503, *, times: int = 1, after_apply: bool = False,
                  retry_after: float | str | None = None) -> None:
        """Answer the next `times` calls of `operation` (commit, tag, create_repo, preupload, lfs_batch,
        lfs_upload, refs, tree, paths_info, info, resolve, whoami) with `status`, or drop the connection
        when status is 0. With after_apply the operation takes effect first and only its answer is lost.
        `retry_after` is sent as the Retry-After header: seconds, or a string such as an HTTP date."""
        with self._lock:
            self.faults.append(Fault(operation, status, times, after_apply, retry_after))

    def repo(self, repo_id: str, repo_type: str = "dataset") -> Repo:
        with self._lock:
            return self.repos[(repo_type, repo_id)]

    def read(self, entry: Entry) -> bytes:
        return (self.root / "objects" / entry.sha256).read_bytes()

    def calls(self, operation: str) -> list[Seen]:
        return [s for s in self.seen if s.operation == operation]

    # -- storage ------------------------------------------------------------------------------------
    def _state_path(self, repo: Repo) -> Path:
        return self.root / "repos" / f"{repo.repo_type}s" / f"{repo.repo_id}.json"

    def _save(self, repo: Repo) -> None:
        path = self._state_path(repo)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(asdict(repo)), encoding="utf-8")
        tmp.replace(path)

    def _load(self) -> None:
        for path in (self.root / "repos").glob("*/*/*.json"):
            raw = json.loads(path.read_text(encoding="utf-8"))
            commits = {oid: Commit(**{**c, "files": {p: Entry(**e) for p, e in c["files"].items()}})
                       for oid, c in raw.pop("commits").items()}
            repo = Repo(**raw, commits=commits)
            self.repos[(repo.repo_type, repo.repo_id)] = repo

    def _store(self, data: bytes) -> str:
        digest = hashlib.sha256(data).hexdigest()
        target = self.root / "objects" / digest
        if not target.exists():
            tmp = target.with_suffix(f".{threading.get_ident()}")
            tmp.write_bytes(data)
            tmp.replace(target)
        return digest

    def _commit(self, repo: Repo, branch: str, files: dict[str, Entry], title: str, *,
                added: list[str], deleted: list[str]) -> Commit:
        parent = repo.branches.get(branch)
        date = datetime.now(UTC).isoformat().replace("+00:00", "Z")
        seed = json.dumps([parent, title, date, len(repo.commits), sorted((p, e.oid) for p, e in files.items())])
        commit = Commit(hashlib.sha1(seed.encode()).hexdigest(), parent, title, date, files, added, deleted)
        repo.commits[commit.oid] = commit
        repo.branches[branch] = commit.oid
        self._save(repo)
        return commit

    def create_repo(self, repo_id: str, repo_type: str = "dataset", *, private: bool = False) -> Repo:
        with self._lock:
            if (repo_type, repo_id) in self.repos:
                prefix = "" if repo_type == "model" else f"{repo_type}s/"
                raise HubError(409, f"You already created this {repo_type} repo",
                               url=f"{self.url}/{prefix}{repo_id}")
            repo = Repo(repo_id, repo_type, private, datetime.now(UTC).isoformat().replace("+00:00", "Z"))
            data = DEFAULT_GITATTRIBUTES.encode()
            entry = Entry(self._store(data), len(data), git_blob_sha1(data), False)
            self._commit(repo, "main", {".gitattributes": entry}, "initial commit", added=[".gitattributes"],
                         deleted=[])
            self.repos[(repo_type, repo_id)] = repo
            return repo

    def _is_lfs(self, commit: Commit | None, path: str, size: int, sample: bytes) -> bool:
        patterns = []
        if commit and ".gitattributes" in commit.files:
            for line in self.read(commit.files[".gitattributes"]).decode().splitlines():
                parts = line.split()
                if len(parts) > 1 and "filter=lfs" in parts[1:]:
                    patterns.append(parts[0])
        name = path.rsplit("/", 1)[-1]
        return (size >= LFS_THRESHOLD or b"\0" in sample
                or any(fnmatch.fnmatch(name, p) or fnmatch.fnmatch(path, p) for p in patterns))


def _dirs(files: dict[str, Entry]) -> set[str]:
    return {"/".join(parts[:i]) for path in files for parts in [path.split("/")] for i in range(1, len(parts))}


def _tree_oid(files: dict[str, Entry], folder: str) -> str:
    inside = sorted((p, e.oid) for p, e in files.items() if p.startswith(folder + "/"))
    return hashlib.sha1(json.dumps(inside).encode()).hexdigest()


def _last_commit(repo: Repo, commit: Commit, path: str) -> dict[str, str]:
    """The newest commit on the first-parent line that added, changed or deleted `path` or a file under it."""
    found = commit
    while found.parent is not None:
        touched = found.added + found.deleted
        if any(p == path or p.startswith(path + "/") for p in touched):
            break
        found = repo.commits[found.parent]
    return {"id": found.oid, "title": found.title, "date": found.date}


def _path_info(repo: Repo, commit: Commit, path: str, expand: bool) -> dict[str, Any] | None:
    entry = commit.files.get(path)
    if entry is not None:
        info: dict[str, Any] = {"type": "file", "oid": entry.oid, "size": entry.size, "path": path}
        if entry.lfs:
            info["lfs"] = {"oid": entry.sha256, "size": entry.size, "pointerSize": entry.pointer_size()}
    elif path in _dirs(commit.files):
        info = {"type": "directory", "oid": _tree_oid(commit.files, path), "size": 0, "path": path}
    else:
        return None
    if expand:
        info["lastCommit"] = _last_commit(repo, commit, path)
    return info


def _front_matter(text: str) -> tuple[dict[str, Any] | None, str | None]:
    """The card's YAML metadata, or the reason it is not a mapping."""
    match = re.match(r"\A---\s*\n(.*?)\n---\s*(\n|\Z)", text, re.S)
    if not match:
        return None, None
    try:
        data = yaml.safe_load(match.group(1))
    except yaml.YAMLError as exc:
        return None, f"invalid YAML: {exc}"
    return (data, None) if isinstance(data, dict) else (None, "YAML metadata is not a mapping")


_API = re.compile(r"^/api/(?P<kind>models|datasets|spaces)/(?P<repo>[^/]+/[^/]+?)"
                  r"(?:/(?P<action>revision|refs|tree|paths-info|preupload|commit|tag)(?:/(?P<rest>.*))?)?$")
_LFS = re.compile(r"^/(?:(?P<kind>datasets|spaces)/)?(?P<repo>[^/]+/[^/]+)\.git/info/lfs/objects/(?P<op>batch|verify)$")
_RESOLVE = re.compile(r"^/(?:(?P<kind>datasets|spaces)/)?(?P<repo>[^/]+/[^/]+)/resolve/(?P<rev>[^/]+)/(?P<path>.+)$")
_UPLOAD = re.compile(r"^/lfs-upload/(?P<oid>[0-9a-f]{64})$")


def _handler_for(hub: HubServer) -> type[BaseHTTPRequestHandler]:
    class Handler(_Handler):
        server_state = hub
    return Handler


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_state: HubServer

    def log_message(self, format: str, *args: Any) -> None:  # quiet: tests read `seen` instead
        return

    def do_GET(self) -> None:
        self._dispatch()

    def do_HEAD(self) -> None:
        self._dispatch()

    def do_POST(self) -> None:
        self._dispatch()

    def do_PUT(self) -> None:
        self._dispatch()

    # -- plumbing -----------------------------------------------------------------------------------
    def _body(self) -> bytes:
        """The whole request body, always read, so that a keep-alive connection stays in step."""
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def _send(self, status: int, body: bytes = b"", headers: dict[str, str] | None = None) -> None:
        """Keep the answer; _dispatch writes it, unless a fault injected after the operation replaces it."""
        self._answer = (status, body, headers or {})

    def _write(self, status: int, body: bytes, headers: dict[str, str]) -> None:
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, status: int, data: Any, headers: dict[str, str] | None = None) -> None:
        self._send(status, json.dumps(data).encode(), {"Content-Type": "application/json", **(headers or {})})

    def _dispatch(self) -> None:
        hub = self.server_state
        self._answer: tuple[int, bytes, dict[str, str]] = (500, b"", {})
        url = urlsplit(self.path)
        self.query = parse_qs(url.query, keep_blank_values=True)
        body = self._body()
        operation, handler = self._route(url.path)
        fault = self._take_fault(operation)
        try:
            self._check_token(operation)
            if fault is not None and not fault.after_apply:
                raise HubError(fault.status, f"injected failure of {operation}")
            handler(body)
            if fault is not None:  # the operation took effect; its answer is what gets lost
                raise HubError(fault.status, f"injected failure of {operation} after it took effect")
        except HubError as exc:
            headers = {"X-Error-Message": exc.message, **exc.headers}
            if exc.code:
                headers["X-Error-Code"] = exc.code
            if fault is not None and fault.retry_after is not None:
                headers["Retry-After"] = str(fault.retry_after)
            self._json(exc.status, {"error": exc.message, **exc.extra}, headers)
        status, data, headers = self._answer
        with hub._lock:
            hub.seen.append(Seen(self.command, url.path, operation, status))
        if status == 0:  # an injected dropped connection: no answer at all
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        self._write(status, data, headers)

    def _take_fault(self, operation: str) -> Fault | None:
        hub = self.server_state
        with hub._lock:
            for fault in hub.faults:
                if fault.operation == operation and fault.times > 0:
                    fault.times -= 1
                    return fault
        return None

    def _check_token(self, operation: str) -> None:
        hub = self.server_state
        auth = self.headers.get("Authorization", "")
        self.token_role = None
        if auth:
            token = auth.removeprefix("Bearer ").strip()
            self.token_role = hub.tokens.get(token)
            if self.token_role is None:
                raise HubError(401, "Invalid credentials in Authorization header")
        writes = {"create_repo", "preupload", "commit", "tag", "lfs_batch", "lfs_verify", "whoami"}
        if operation in writes and self.token_role is None:
            raise HubError(401, "You must be authenticated to access this resource")
        if operation in writes - {"whoami"} and self.token_role != "write":
            raise HubError(403, "You don't have the rights to write to this repository")

    def _route(self, path: str) -> tuple[str, Any]:
        method = self.command
        if path == "/api/whoami-v2" and method == "GET":
            return "whoami", self.whoami
        if path == "/api/repos/create" and method == "POST":
            return "create_repo", self.create_repo
        if path == "/api/validate-yaml" and method == "POST":
            return "validate_yaml", self.validate_yaml
        if (m := _UPLOAD.match(path)) and method == "PUT":
            return "lfs_upload", lambda body: self.lfs_upload(m["oid"], body)
        if (m := _LFS.match(path)) and method == "POST":
            return f"lfs_{m['op']}", lambda body: self.lfs(m, body)
        if (m := _RESOLVE.match(path)) and method in ("GET", "HEAD"):
            return "resolve", lambda body: self.resolve(m)
        if m := _API.match(path):
            action = m["action"] or "info"
            routes = {("info", "GET"): self.info, ("revision", "GET"): self.info, ("refs", "GET"): self.refs,
                      ("tree", "GET"): self.tree, ("paths-info", "POST"): self.paths_info,
                      ("preupload", "POST"): self.preupload, ("commit", "POST"): self.commit,
                      ("tag", "POST"): self.tag}
            if (action, method) in routes:
                operation = "info" if action == "revision" else action.replace("-", "_")
                return operation, lambda body: routes[action, method](m, body)
        return "unknown", self.not_found

    def not_found(self, body: bytes) -> None:
        raise HubError(404, f"Sorry, we can't find the page you are looking for: {self.command} {self.path}")

    def _repo(self, kind: str | None, repo_id: str) -> Repo:
        hub = self.server_state
        repo = hub.repos.get((REPO_TYPES.get(kind or "models", "model"), unquote(repo_id)))
        if repo is None or (repo.private and self.token_role is None):
            raise HubError(404, "Repository not found", "RepoNotFound")
        return repo

    def _commit_at(self, repo: Repo, rev: str) -> Commit:
        commit = repo.resolve(unquote(rev))
        if commit is None:
            raise HubError(404, f"Invalid rev id: {unquote(rev)}", "RevisionNotFound")
        return commit

    def _base(self, repo: Repo) -> str:
        prefix = "" if repo.repo_type == "model" else f"{repo.repo_type}s/"
        return f"{self.server_state.url}/{prefix}{repo.repo_id}"

    # -- account and repositories -------------------------------------------------------------------
    def whoami(self, body: bytes) -> None:
        hub = self.server_state
        self._json(200, {"type": "user", "id": "0" * 24, "name": hub.user, "fullname": hub.user, "orgs": [],
                         "auth": {"type": "access_token",
                                  "accessToken": {"displayName": "test", "role": self.token_role}}})

    def create_repo(self, body: bytes) -> None:
        hub = self.server_state
        payload = json.loads(body or b"{}")
        repo_type = payload.get("type") or "model"
        repo_id = f"{payload.get('organization') or hub.user}/{payload['name']}"
        repo = hub.create_repo(repo_id, repo_type, private=bool(payload.get("private")))
        self._json(200, {"url": self._base(repo), "name": repo_id, "id": hashlib.sha1(repo_id.encode()).hexdigest()})

    def validate_yaml(self, body: bytes) -> None:
        content = json.loads(body or b"{}").get("content", "")
        data, error = _front_matter(content)
        if error:
            self._json(400, {"errors": [{"message": error}], "warnings": []})
        elif data is None:
            self._json(200, {"errors": [], "warnings": [{"message": "empty or missing yaml metadata in repo card"}]})
        else:
            self._json(200, {"errors": [], "warnings": []})

    def info(self, m: re.Match[str], body: bytes) -> None:
        repo = self._repo(m["kind"], m["repo"])
        commit = self._commit_at(repo, m["rest"] or "main")
        blobs = self.query.get("blobs", ["false"])[0].lower() in ("1", "true")
        siblings = []
        for path, entry in sorted(commit.files.items()):
            sibling: dict[str, Any] = {"rfilename": path}
            if blobs:
                sibling |= {"size": entry.size, "blobId": entry.oid}
                if entry.lfs:
                    sibling["lfs"] = {"size": entry.size, "sha256": entry.sha256, "pointerSize": entry.pointer_size()}
            siblings.append(sibling)
        card = None
        if "README.md" in commit.files:
            card = _front_matter(self.server_state.read(commit.files["README.md"]).decode("utf-8", "replace"))[0]
        self._json(200, {"_id": hashlib.sha1(repo.repo_id.encode()).hexdigest()[:24], "id": repo.repo_id,
                         "author": repo.repo_id.split("/")[0], "sha": commit.oid, "lastModified": commit.date,
                         "createdAt": repo.created, "private": repo.private, "gated": False, "disabled": False,
                         "downloads": 0, "likes": 0, "tags": [], "cardData": card, "siblings": siblings,
                         "usedStorage": sum(e.size for e in commit.files.values())})

    def refs(self, m: re.Match[str], body: bytes) -> None:
        repo = self._repo(m["kind"], m["repo"])
        result: dict[str, Any] = {
            "branches": [{"name": n, "ref": f"refs/heads/{n}", "targetCommit": o} for n, o in repo.branches.items()],
            "converts": [],
            "tags": [{"name": n, "ref": f"refs/tags/{n}", "targetCommit": o} for n, o in sorted(repo.tags.items())]}
        if self.query.get("include_prs"):
            result["pullRequests"] = []
        self._json(200, result)

    # -- reading trees and files --------------------------------------------------------------------
    def tree(self, m: re.Match[str], body: bytes) -> None:
        repo = self._repo(m["kind"], m["repo"])
        rev, _, folder = (m["rest"] or "main").partition("/")
        commit = self._commit_at(repo, rev)
        folder = unquote(folder).strip("/")
        dirs = _dirs(commit.files)
        if folder and folder not in dirs:
            raise HubError(404, f"Entry not found: {folder}", "EntryNotFound", {"X-Repo-Commit": commit.oid})
        recursive = self.query.get("recursive", ["false"])[0].lower() in ("1", "true")
        expand = self.query.get("expand", ["false"])[0].lower() in ("1", "true")
        prefix = f"{folder}/" if folder else ""
        paths = sorted(p for p in [*dirs, *commit.files] if p.startswith(prefix)
                       and (recursive or "/" not in p[len(prefix):]))
        size = min(self.server_state.page_size, 50) if expand else self.server_state.page_size
        start = int(self.query.get("cursor", ["0"])[0])
        page = [_path_info(repo, commit, p, expand) for p in paths[start:start + size]]
        headers = {}
        if start + size < len(paths):
            query = "&".join(f"{k}={quote(v[0])}" for k, v in self.query.items() if k != "cursor")
            following = f"{self.server_state.url}{urlsplit(self.path).path}?{query}&cursor={start + size}"
            headers["Link"] = f'<{following}>; rel="next"'
        self._json(200, page, headers)

    def paths_info(self, m: re.Match[str], body: bytes) -> None:
        repo = self._repo(m["kind"], m["repo"])
        commit = self._commit_at(repo, m["rest"] or "main")
        if self.headers.get("Content-Type", "").startswith("application/json"):
            payload = json.loads(body or b"{}")
            paths, expand = payload.get("paths", []), bool(payload.get("expand"))
        else:
            form = parse_qs(body.decode(), keep_blank_values=True)
            paths, expand = form.get("paths", []), form.get("expand", ["False"])[0].lower() in ("1", "true")
        found = [_path_info(repo, commit, p.strip("/"), expand) for p in paths]
        self._json(200, [info for info in found if info is not None])

    def resolve(self, m: re.Match[str]) -> None:
        repo = self._repo(m["kind"], m["repo"])
        commit = self._commit_at(repo, m["rev"])
        path = unquote(m["path"])
        entry = commit.files.get(path)
        headers = {"X-Repo-Commit": commit.oid}
        if entry is None:
            raise HubError(404, f"Entry not found: {path}", "EntryNotFound", headers)
        data = self.server_state.read(entry)
        headers |= {"ETag": f'"{entry.sha256 if entry.lfs else entry.oid}"', "Accept-Ranges": "bytes",
                    "Content-Type": "application/octet-stream"}
        if entry.lfs:
            headers |= {"X-Linked-Etag": f'"{entry.sha256}"', "X-Linked-Size": str(entry.size)}
        wanted = re.fullmatch(r"bytes=(\d*)-(\d*)", self.headers.get("Range", "").strip())
        if wanted and (wanted[1] or wanted[2]):
            first = int(wanted[1]) if wanted[1] else max(0, len(data) - int(wanted[2]))
            last = min(int(wanted[2]), len(data) - 1) if wanted[1] and wanted[2] else len(data) - 1
            if first >= len(data) or first > last:
                raise HubError(416, "Requested range not satisfiable",
                               headers={"Content-Range": f"bytes */{len(data)}"})
            headers["Content-Range"] = f"bytes {first}-{last}/{len(data)}"
            self._send(206, data[first:last + 1], headers)
        else:
            self._send(200, data, headers)

    # -- writing ------------------------------------------------------------------------------------
    def preupload(self, m: re.Match[str], body: bytes) -> None:
        hub = self.server_state
        repo = self._repo(m["kind"], m["repo"])
        commit = repo.resolve(unquote(m["rest"] or "main"))
        files = []
        for item in json.loads(body or b"{}").get("files", []):
            lfs = hub._is_lfs(commit, item["path"], int(item["size"]), base64.b64decode(item.get("sample", "")))
            old = commit.files.get(item["path"]) if commit else None
            oid = None if old is None else (old.sha256 if old.lfs else old.oid)
            files.append({"path": item["path"], "uploadMode": "lfs" if lfs else "regular", "shouldIgnore": False,
                          "oid": oid})
        self._json(200, {"files": files, "commitOid": commit.oid if commit else None})

    def lfs(self, m: re.Match[str], body: bytes) -> None:
        hub = self.server_state
        repo = self._repo(m["kind"], m["repo"])
        payload = json.loads(body or b"{}")
        if m["op"] == "verify":
            if not (hub.root / "objects" / payload.get("oid", "-")).is_file():
                raise HubError(404, "Object not found")
            self._json(200, {"success": True})
            return
        objects = []
        for obj in payload.get("objects", []):
            entry: dict[str, Any] = {"oid": obj["oid"], "size": obj["size"], "authenticated": True}
            if not (hub.root / "objects" / obj["oid"]).is_file():
                with hub._lock:
                    hub._announced.add(obj["oid"])
                entry["actions"] = {
                    "upload": {"href": f"{hub.url}/lfs-upload/{obj['oid']}"},
                    "verify": {"href": f"{self._base(repo)}.git/info/lfs/objects/verify"}}
            objects.append(entry)
        self._json(200, {"transfer": "basic", "objects": objects, "hash_algo": "sha256"},
                   {"Content-Type": "application/vnd.git-lfs+json"})

    def lfs_upload(self, oid: str, body: bytes) -> None:
        hub = self.server_state
        if oid not in hub._announced:
            raise HubError(403, "Upload URL not issued by a batch call")
        if hashlib.sha256(body).hexdigest() != oid:
            raise HubError(400, "Content does not match its sha256")
        hub._store(body)
        with hub._lock:
            hub.lfs_uploads.append(oid)
        self._send(200)

    def commit(self, m: re.Match[str], body: bytes) -> None:
        hub = self.server_state
        lines = [json.loads(line) for line in body.splitlines() if line.strip()]
        if not lines or lines[0].get("key") != "header":
            raise HubError(400, "The first line of a commit must be its header")
        header = lines[0]["value"]
        with hub._lock:
            repo = self._repo(m["kind"], m["repo"])
            branch = unquote(m["rest"] or "main")
            if branch not in repo.branches:
                raise HubError(404, f"Invalid rev id: {branch}", "RevisionNotFound")
            head = repo.commits[repo.branches[branch]]
            parent = header.get("parentCommit")
            if parent and not head.oid.startswith(parent):
                raise HubError(412, "A commit has happened since. Please refresh and try again.")
            files, added, deleted = dict(head.files), [], []
            for line in lines[1:]:
                key, value = line["key"], line["value"]
                path = value["path"].strip("/")
                if key == "file":
                    data = base64.b64decode(value["content"])
                    files[path] = Entry(hub._store(data), len(data), git_blob_sha1(data), False)
                    added.append(path)
                elif key == "lfsFile":
                    stored = hub.root / "objects" / value["oid"]
                    if not stored.is_file() or ("size" in value and stored.stat().st_size != value["size"]):
                        raise HubError(422, f"Your push was rejected: the LFS object of {path} was never uploaded")
                    size = stored.stat().st_size
                    pointer = LFS_POINTER.format(oid=value["oid"], size=size).encode()
                    files[path] = Entry(value["oid"], size, git_blob_sha1(pointer), True)
                    added.append(path)
                elif key == "deletedFile":
                    if files.pop(path, None) is None:
                        raise HubError(404, f"A file with this name doesn't exist: {path}", "EntryNotFound")
                    deleted.append(path)
                elif key == "deletedFolder":
                    gone = [p for p in files if p.startswith(path + "/")]
                    if not gone:
                        raise HubError(404, f"A folder with this name doesn't exist: {path}", "EntryNotFound")
                    for p in gone:
                        del files[p]
                    deleted += gone
                else:
                    raise HubError(400, f"Unknown commit operation {key!r}")
            title = header.get("summary") or "update"
            new = hub._commit(repo, branch, files, title, added=added, deleted=deleted)
        self._json(200, {"success": True, "commitOid": new.oid, "commitUrl": f"{self._base(repo)}/commit/{new.oid}",
                         "hookOutput": "", "pullRequestUrl": None})

    def tag(self, m: re.Match[str], body: bytes) -> None:
        hub = self.server_state
        payload = json.loads(body or b"{}")
        name = str(payload.get("tag") or "")
        with hub._lock:
            repo = self._repo(m["kind"], m["repo"])
            commit = self._commit_at(repo, m["rest"] or "main")
            if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._/-]*", name) or ".." in name:
                raise HubError(400, f"Invalid tag name {name!r}")
            if name in repo.tags:
                raise HubError(409, f"Tag {name} already exists")
            repo.tags[name] = commit.oid
            hub._save(repo)
        self._json(200, {"name": name, "ref": f"refs/tags/{name}", "targetCommit": commit.oid})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, required=True, help="folder for repositories and file contents")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--token", action="append", default=[], help="a write token; repeat for several")
    args = parser.parse_args()
    with HubServer(args.root, {t: "write" for t in args.token}, port=args.port) as hub:
        print(hub.url, flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
