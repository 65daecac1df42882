"""Settings checked before any work: each wrong one is a one-line ConfigError naming the option, nothing touched."""

from __future__ import annotations

import ipaddress
import json
import re
from pathlib import Path
from typing import Annotated
from urllib.parse import urlsplit

from pydantic import AfterValidator

from timelyqa import urls
from timelyqa.errors import ConfigError

_VERSION = re.compile(r"v?[0-9A-Za-z][0-9A-Za-z._-]{0,63}")
"""A release version names a folder's release, a Hub tag and a line of the changelog: letters, digits and `._-`
only (no `/`, no spaces), 64 characters at most, like v2026.06.01."""


def http_url(url: str, option: str) -> str:
    """`url` when it is http(s) with a host: a service is asked over HTTP, never a file:// or a bare word."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError on a port that is not a number in 0..65535
    except ValueError as exc:
        raise ConfigError(f"{option} {url!r}: not an http(s) URL ({exc})") from None
    if any(ch.isspace() or not ch.isprintable() for ch in url):
        raise ConfigError(f"{option} {url!r}: not an http(s) URL (it holds a space or a control character)")
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"{option} {url!r}: not an http(s) URL with a host (like https://example.org/...)")
    if (why := urls.why_not(url)) is not None:  # the one check the crawl applies: refused here, before any work
        raise ConfigError(f"{option} {why}")
    return url


def is_loopback(host: str | None) -> bool:
    """True for this machine's own addresses only: localhost, 127.0.0.0/8, ::1 (and ::ffff:127.x)."""
    if not host:
        return False
    name = host.strip("[]").lower()
    if name == "localhost":
        return True
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        return False
    mapped = getattr(address, "ipv4_mapped", None)
    return address.is_loopback or bool(mapped and mapped.is_loopback)


def bounded(value: int, option: str, low: int, high: int, why: str) -> int:
    """`value` when it lies in [low, high]; `why` says where the bound comes from."""
    if not low <= value <= high:
        raise ConfigError(f"{option} {value}: must be from {low} to {high} ({why})")
    return value


def out_folder(path: Path, option: str = "--out") -> Path:
    """`path` when a folder is there or can be made there: not an existing file, nor under one."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise ConfigError(f"{option} {path}: a file is there, not a folder; give a folder (made when missing)")
    _no_file_above(path, option)
    return path


OutFolder = Annotated[Path, AfterValidator(lambda out: out_folder(out, "--out"))]
"""A request's `out`: a folder that is there or can be made there (out_folder), refused in one line naming --out."""


def out_file(path: Path, option: str = "--out") -> Path:
    """`path` when a file can be written there: not an existing folder, nor under a file."""
    path = Path(path)
    if path.is_dir():
        raise ConfigError(f"{option} {path}: a folder is there, not a file; give a file name")
    _no_file_above(path, option)
    return path


def _no_file_above(path: Path, option: str) -> None:
    for parent in path.absolute().parents:
        if parent.exists():
            if not parent.is_dir():
                raise ConfigError(f"{option} {path}: {parent} is a file, not a folder")
            return


def release_version(version: str, option: str = "--version") -> str:
    """`version` when it can name a release folder's tag: plain letters, digits and `._-`, no `..`."""
    if not _VERSION.fullmatch(version) or ".." in version or version.endswith((".", ".lock")):
        raise ConfigError(f"{option} {version!r}: not a plain tag (letters, digits and . _ -, at most 64, no '/', "
                          "'..' or spaces, like v2026.06.01)")
    return version


def previous_folder(path: Path, option: str = "--previous", *, runs: bool = True) -> Path:
    """`path` when it holds a release (or, with `runs`, a source's output): a folder with the manifest.json of one.
    A folder that is neither would be read as "nothing released" and every row silently left unchecked."""
    path = Path(path)
    what = "a release folder" + (" or a source output folder" if runs else "")
    if not path.exists():
        raise ConfigError(f"{option} {path}: no such folder; give {what}")
    if not path.is_dir():
        raise ConfigError(f"{option} {path}: not a folder; give {what}")
    try:
        manifest = json.loads((path / "manifest.json").read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{option} {path}: no manifest.json, so not {what}") from None
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{option} {path}: manifest.json is unreadable ({type(exc).__name__}), so not {what}"
                          ) from None
    if not isinstance(manifest, dict):
        raise ConfigError(f"{option} {path}: manifest.json is not a JSON object, so not {what}")
    if runs and "source" in manifest and (path / "questions.parquet").is_file():
        return path
    missing = [key for key in ("version", "configs") if key not in manifest]
    if missing:
        raise ConfigError(f"{option} {path}: manifest.json has no {' and no '.join(missing)}, so not {what}")
    return path
