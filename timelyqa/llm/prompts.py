"""The prompt registry: versioned templates ported from the seed papers, loaded from package data.

Each template is one file, `prompts/<family>/<name>.v<N>.md`: a header (name, version, source, shape,
port, notes, quotes), then a `## system` section (optional) and a `## user` section. Placeholders are
`{{slot}}`; single braces are plain text, so JSON examples need no escaping.

A template is never edited once a release used it: a new wording is a new file with the next `.vN`,
and the old one stays, so every generated row can name the exact prompt (`Prompt.id`) that made it.
`get(name)` returns the newest version; `get(name, version)` pins one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from importlib.resources.abc import Traversable
from typing import Literal, cast

from pydantic import BaseModel

from timelyqa.errors import ConfigError
from timelyqa.llm.shapes import SHAPES
from timelyqa.names import versioned

SLOT = re.compile(r"\{\{([A-Za-z_][A-Za-z0-9_]*)\}\}")
_FILE = re.compile(r"^(?P<stem>[a-z0-9_]+)\.v(?P<version>[1-9][0-9]*)\.md$")
_SECTION = re.compile(r"^## (system|user)[ \t]*$", re.MULTILINE)
_HEADER_KEYS = {"name", "version", "source", "paper", "shape", "port", "notes", "quotes"}
_LISTS = {"notes", "quotes"}

Port = Literal["verbatim", "described"]


@dataclass(frozen=True)
class Prompt:
    """One versioned prompt: its text, where it comes from, and the JSON shape its reply must have."""

    name: str
    version: int
    source: str
    system: str
    user: str
    shape: type[BaseModel]
    port: Port = "verbatim"  # "verbatim": the paper's own text; "described": written from the paper's prose
    notes: tuple[str, ...] = ()  # every change from the paper, said once, in the header
    quotes: tuple[str, ...] = ()  # the paper's sentences a "described" prompt implements
    paper: str = ""

    @property
    def id(self) -> str:
        return versioned(self.name, self.version)

    @property
    def slots(self) -> frozenset[str]:
        return frozenset(SLOT.findall(self.system)) | frozenset(SLOT.findall(self.user))

    def render(self, **values: str) -> list[dict[str, str]]:
        """Chat messages with every slot filled; a missing, unknown or non-text value is a ConfigError."""
        slots = self.slots
        missing = sorted(slots - values.keys())
        if missing:
            raise ConfigError(f"prompt {self.id}: no value for slot {', '.join(missing)} "
                              f"(slots: {', '.join(sorted(slots))})")
        unknown = sorted(values.keys() - slots)
        if unknown:
            raise ConfigError(f"prompt {self.id}: unknown slot {', '.join(unknown)} "
                              f"(slots: {', '.join(sorted(slots))})")
        for slot, value in values.items():
            if not isinstance(value, str):
                raise ConfigError(f"prompt {self.id}: slot {slot} needs text, got {type(value).__name__}")

        def fill(text: str) -> str:
            # One pass over the template: a value that itself contains {{x}} is inserted as it is.
            return SLOT.sub(lambda m: values[m.group(1)], text)

        messages = [{"role": "system", "content": fill(self.system)}] if self.system else []
        messages.append({"role": "user", "content": fill(self.user)})
        return messages


def parse(text: str, *, where: str) -> tuple[dict[str, str | list[str]], dict[str, str]]:
    """A template file's header and its sections; `where` names the file in any error."""
    marks = list(_SECTION.finditer(text))
    if not marks:
        raise ConfigError(f"prompt template {where}: no '## user' section")
    header = _parse_header(text[: marks[0].start()], where=where)
    sections: dict[str, str] = {}
    for i, mark in enumerate(marks):
        role = mark.group(1)
        if role in sections:
            raise ConfigError(f"prompt template {where}: two '## {role}' sections")
        end = marks[i + 1].start() if i + 1 < len(marks) else len(text)
        sections[role] = text[mark.end(): end].strip("\n")
    if not sections.get("user", "").strip():
        raise ConfigError(f"prompt template {where}: the '## user' section is empty")
    return header, sections


def _parse_header(text: str, *, where: str) -> dict[str, str | list[str]]:
    # A deliberately small format: `key: value` lines; `notes:` and `quotes:` take `- item` lines,
    # and an item continues on lines indented by two spaces.
    header: dict[str, str | list[str]] = {}
    current: list[str] | None = None
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        if line.startswith("- ") and current is not None:
            current.append(line[2:].strip())
        elif line.startswith("  ") and current:
            current[-1] += " " + line.strip()
        elif ":" in line and not line.startswith(" "):
            key, _, value = line.partition(":")
            key, value = key.strip(), value.strip()
            if key not in _HEADER_KEYS:
                raise ConfigError(f"prompt template {where}: unknown header key {key!r} on line {number}")
            if key in _LISTS:
                current = []
                header[key] = current
            else:
                current = None
                header[key] = value
        else:
            raise ConfigError(f"prompt template {where}: cannot read header line {number}: {line!r}")
    return header


def _build(text: str, *, family: str, filename: str) -> Prompt:
    where = f"{family}/{filename}"
    match = _FILE.match(filename)
    if match is None:
        raise ConfigError(f"prompt template {where}: the file name must be <name>.v<N>.md")
    header, sections = parse(text, where=where)
    name, version = f"{family}/{match['stem']}", int(match["version"])
    for key in ("name", "version", "source", "shape"):
        if not header.get(key):
            raise ConfigError(f"prompt template {where}: the header needs {key}")
    if header["name"] != name or header["version"] != str(version):
        raise ConfigError(f"prompt template {where}: the header says {header['name']} v{header['version']}, "
                          f"the file name says {name} v{version}")
    shape = SHAPES.get(str(header["shape"]))
    if shape is None:
        raise ConfigError(f"prompt template {where}: unknown shape {header['shape']!r} "
                          f"(shapes: {', '.join(sorted(SHAPES))})")
    port = header.get("port", "verbatim")
    if port not in ("verbatim", "described"):
        raise ConfigError(f"prompt template {where}: port must be verbatim or described, not {port!r}")
    return Prompt(name=name, version=version, source=str(header["source"]), system=sections.get("system", ""),
                  user=sections["user"], shape=shape, port=cast(Port, port),
                  notes=tuple(header.get("notes", [])), quotes=tuple(header.get("quotes", [])),
                  paper=str(header.get("paper", "")))


def template_root() -> Traversable:
    """The folder of template files inside the installed package (works from a wheel or a zip)."""
    return files("timelyqa.llm").joinpath("prompts")


@cache
def _registry() -> dict[str, dict[int, Prompt]]:
    # Loaded on first use, not at import: importing the client must not read files.
    registry: dict[str, dict[int, Prompt]] = {}
    for family in sorted(template_root().iterdir(), key=lambda t: t.name):
        if not family.is_dir() or family.name.startswith(("_", ".")):
            continue
        for item in sorted(family.iterdir(), key=lambda t: t.name):
            if not item.name.endswith(".md"):
                continue
            prompt = _build(item.read_text(encoding="utf-8"), family=family.name, filename=item.name)
            registry.setdefault(prompt.name, {})[prompt.version] = prompt
    return registry


def get(name: str, version: int | None = None) -> Prompt:
    """The prompt `name` at `version`, or its newest version when `version` is None."""
    registry = _registry()
    versions = registry.get(name)
    if versions is None:
        raise ConfigError(f"unknown prompt {name!r}; prompts: {', '.join(sorted(registry))}")
    if version is None:
        return versions[max(versions)]
    if version not in versions:
        raise ConfigError(f"prompt {name!r} has no version {version}; versions: "
                          f"{', '.join(str(v) for v in sorted(versions))}")
    return versions[version]


def all_prompts() -> list[Prompt]:
    """Every version of every prompt, by name then version."""
    return [prompt for name in sorted(_registry()) for _, prompt in sorted(_registry()[name].items())]
