"""The policy point every connection of a browser (or a sandboxed workflow) goes through: a local HTTP forward
proxy that checks each request and each CONNECT against a guard when it connects, resolves the name once, refuses a
private address nobody named, connects to that very address, and applies robots.txt to plain-http requests.

`with PolicyProxy(guard) as proxy:` serves at `proxy.url` (and at `unix_path` when given) from a daemon thread of
its own; `proxy.refusals` counts what it refused, by reason (spiders.guard.Refusal). It imports no Scrapy."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import re
import socket
import threading
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urlsplit

from spiders.guard import Guard, Refusal, is_private_ip
from timelyqa.robotsfile import ROBOTS_LIMIT, BodyError, Case, Rules, decode, header_list, read

HEAD_LIMIT = 64 * 1024
"""A request or response head longer than this is no browser's: refused (431) or dropped."""
TIMEOUT = 30.0
"""Seconds to wait for a client's request head, an upstream's answer, or a connection."""
ROBOTS_TIMEOUT = 10.0
"""Seconds a host's robots.txt may take, all told (the crawl's ROBOTSTXT_TIMEOUT): past it, unreachable."""
REFUSED_KEPT = 1000
_AUTHORITY = re.compile(r"[A-Za-z0-9.-]+:[0-9]{1,5}|\[[0-9A-Fa-f:.]+\]:[0-9]{1,5}")
REFUSAL_HEADER = "X-Policy-Refusal"
"""The header of the proxy's 403 that names its reason: a crawl tells the proxy's refusal from a host's answer."""
_HOP = frozenset({"connection", "keep-alive", "proxy-connection", "proxy-authorization", "proxy-authenticate", "te",
                  "trailer", "upgrade"})
"""Headers about one connection, not the request: never forwarded as they came."""


class _Reply(Exception):
    """Answer the client this, and close."""

    def __init__(self, answer: bytes) -> None:
        super().__init__(answer[:60])
        self.answer = answer


class Refused(Exception):
    def __init__(self, reason: Refusal | str, url: str) -> None:
        super().__init__(f"{reason}: {url}")
        self.reason, self.target = str(reason), url


class RobotsRules:
    """robots.txt for the proxy's plain-http requests, under the crawl's User-Agent, read as the crawl reads it
    (timelyqa.robotsfile, RFC 9309: 5xx and unreachable disallow all, 4xx allows all, 512 KiB read): what the crawl
    already knows of a host (`known(netloc)`, a parser with `allowed(url, user_agent)`, or None), else the host's
    robots.txt fetched once through the proxy's own policy, within `timeout` seconds. `on_case(case)` is told how
    each host's robots.txt fetched here ended (a crawl counts it as `robots/<case>`)."""

    def __init__(self, user_agent: str, known: Callable[[str], Any] | None = None, *,
                 on_case: Callable[[str], None] | None = None, timeout: float = ROBOTS_TIMEOUT) -> None:
        self.user_agent, self.known, self.on_case, self.timeout = user_agent, known, on_case, timeout
        self._rules: dict[str, asyncio.Future[Rules]] = {}

    async def allowed(self, url: str, fetch: Callable[[], Awaitable[Rules]]) -> bool:
        parts = urlsplit(url)
        if self.known is not None and (parser := self.known(parts.netloc)) is not None:
            return bool(parser.allowed(url, self.user_agent))
        key = f"{parts.scheme}://{parts.netloc}"
        if key not in self._rules:
            self._rules[key] = asyncio.get_running_loop().create_future()
            rules = Rules(Case.UNREACHABLE)  # whatever breaks the fetch leaves the host refused, not open
            try:
                rules = await asyncio.wait_for(fetch(), self.timeout)
            except Exception:  # noqa: BLE001, S110 - every way of getting no answer is RFC 9309's "unreachable"
                pass
            finally:
                self._rules[key].set_result(rules)
                if self.on_case is not None:
                    self.on_case(str(rules.case))
        rules = await self._rules[key]
        return rules.allowed(url, self.user_agent)


class PolicyProxy:
    """An HTTP forward proxy (absolute-form http requests, WebSocket upgrades among them, and CONNECT for https and
    WebSockets) that lets through only what `guard` allows, checked when it connects (see the module's docstring).
    `on_refusal(reason)` is called, from the proxy's thread, for every refusal (a crawl counts them in its stats)."""

    def __init__(self, guard: Guard, *, robots: RobotsRules | None = None, unix_path: str | None = None,
                 on_refusal: Callable[[str], None] | None = None) -> None:
        self.guard, self.robots, self.unix_path, self.on_refusal = guard, robots, unix_path, on_refusal
        self.refusals: collections.Counter[str] = collections.Counter()
        self.refused: list[tuple[str, str]] = []  # (reason, URL or host:port), the first REFUSED_KEPT of them
        self.connections: collections.Counter[str] = collections.Counter()  # host:port -> connections made
        self._lock = threading.Lock()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name="policy-proxy", daemon=True)
        self._ready = threading.Event()
        self._servers: list[asyncio.base_events.Server] = []
        self._error: BaseException | None = None
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> PolicyProxy:
        self._thread.start()
        self._ready.wait()
        if self._error is not None:
            raise self._error
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=10)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        try:
            self._loop.run_until_complete(self._listen())
        except BaseException as exc:  # noqa: BLE001 - handed to the thread that entered the with-block
            self._error = exc
            self._ready.set()
            return
        self._ready.set()
        try:
            self._loop.run_forever()
        finally:
            for server in self._servers:
                server.close()
            open_ones = asyncio.all_tasks(self._loop)  # tunnels still open: cancelled, so none outlives the proxy
            for task in open_ones:
                task.cancel()
            self._loop.run_until_complete(asyncio.gather(*open_ones, return_exceptions=True))
            self._loop.close()

    async def _listen(self) -> None:
        tcp = await asyncio.start_server(self._serve, "127.0.0.1", 0, limit=HEAD_LIMIT)
        self._servers.append(tcp)
        self.port = tcp.sockets[0].getsockname()[1]
        if self.unix_path is not None:
            self._servers.append(await asyncio.start_unix_server(self._serve, self.unix_path, limit=HEAD_LIMIT))

    def _refused(self, reason: str, target: str) -> None:
        with self._lock:
            self.refusals[reason] += 1
            if len(self.refused) < REFUSED_KEPT:
                self.refused.append((reason, target))
        if self.on_refusal is not None:
            self.on_refusal(reason)

    # --- one client connection: one request, or one tunnel ------------------------------------------------------

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        upstream: asyncio.StreamWriter | None = None
        try:
            try:
                head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), TIMEOUT)
            except (asyncio.LimitOverrunError, ValueError):
                writer.write(_answer(431, "Request Header Fields Too Large"))
                return
            line, headers = _parse_head(head)
            method, target, _ = (line.split(" ") + ["", ""])[:3]
            try:
                if method.upper() == "CONNECT":
                    upstream = await self._tunnel(target, reader, writer)
                else:
                    upstream = await self._forward(method, target, headers, reader, writer)
            except Refused as refused:
                self._refused(refused.reason, refused.target)
                writer.write(_answer(403, "Forbidden", f"refused by the crawl's policy: {refused}\n",
                                     {REFUSAL_HEADER: refused.reason}))
            except _Reply as reply:
                writer.write(reply.answer)
            except (OSError, asyncio.TimeoutError) as exc:
                writer.write(_answer(502, "Bad Gateway", f"{type(exc).__name__}: {exc}\n"))
        except (OSError, asyncio.IncompleteReadError, asyncio.TimeoutError, ValueError):
            pass  # the client went away, or sent no HTTP
        finally:
            for w in (upstream, writer):
                if w is not None:
                    with contextlib.suppress(OSError, RuntimeError):
                        w.close()

    async def _addresses(self, url: str, host: str, port: int) -> list[str]:
        """`host`'s addresses, resolved once here and checked: a private one refuses the request unless the operator
        named the host. Only these addresses are connected to (no second lookup a name could answer differently)."""
        infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
        addresses = list(dict.fromkeys(str(info[4][0]) for info in infos))
        if not self.guard.may_be_private(f"{host.lower()}:{port}") and any(is_private_ip(a) for a in addresses):
            raise Refused(Refusal.PRIVATE_ADDRESS, url)
        return addresses

    async def _connect(self, host: str, port: int, addresses: list[str]
                       ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        error: OSError | None = None
        for address in addresses:
            try:
                opened = await asyncio.wait_for(asyncio.open_connection(address, port, limit=HEAD_LIMIT), TIMEOUT)
            except OSError as exc:
                error = exc
                continue
            with self._lock:
                self.connections[f"{host.lower()}:{port}"] += 1
            return opened
        raise error or OSError(f"{host}: no address")

    async def _tunnel(self, target: str, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
                      ) -> asyncio.StreamWriter:
        if not _AUTHORITY.fullmatch(target):
            raise Refused(Refusal.NOT_HTTP, target)  # host:port and nothing else (no user, no path)
        parts = urlsplit(f"//{target}")
        if not parts.hostname or not parts.port:
            raise Refused(Refusal.NOT_HTTP, target)
        url = f"https://{target}/"  # the guard knows hosts by host:port; a tunnel's path is the host's business
        if (reason := self.guard.refusal(url, resolve=False)) is not None:
            raise Refused(reason, url)
        addresses = await self._addresses(url, parts.hostname, parts.port)
        up_reader, up_writer = await self._connect(parts.hostname, parts.port, addresses)
        writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
        await _pipe(reader, writer, up_reader, up_writer)
        return up_writer

    async def _forward(self, method: str, target: str, headers: list[tuple[str, str]],
                       reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> asyncio.StreamWriter:
        parts = urlsplit(target)
        if parts.scheme != "http" or not parts.hostname:
            raise Refused(Refusal.NOT_HTTP, target)  # a proxy is asked absolute http URLs; https comes as CONNECT
        if (reason := self.guard.refusal(target, resolve=False)) is not None:
            raise Refused(reason, target)
        host, port = parts.hostname, parts.port or 80
        addresses = await self._addresses(target, host, port)
        if self.robots is not None and parts.path != "/robots.txt":
            fetch = lambda: self._robots_txt(target, host, port, addresses, self.robots.user_agent)  # noqa: E731
            if not await self.robots.allowed(target, fetch):
                raise Refused(Refusal.ROBOTS_DISALLOWED, target)
        named = {k.lower(): v for k, v in headers}
        if "transfer-encoding" in named:
            raise _Reply(_answer(411, "Length Required"))  # no browser streams a body to an HTTP/1.1 proxy
        length = int(named.get("content-length") or 0)
        body = await asyncio.wait_for(reader.readexactly(length), TIMEOUT) if length else b""
        upgrade = "upgrade" in named.get("connection", "").lower() and "upgrade" in named
        kept = [("Host", parts.netloc.rpartition("@")[2])]  # the host checked, whatever Host the client wrote
        kept += [(k, v) for k, v in headers if k.lower() not in _HOP and k.lower() != "host"]
        kept += [("Connection", "Upgrade"), ("Upgrade", named["upgrade"])] if upgrade else [("Connection", "close")]
        up_reader, up_writer = await self._connect(host, port, addresses)
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        up_writer.write(_head(f"{method} {path} HTTP/1.1", kept) + body)
        answer = await asyncio.wait_for(up_reader.readuntil(b"\r\n\r\n"), TIMEOUT)
        status_line, answer_headers = _parse_head(answer)
        switching = upgrade and status_line.split(" ")[1:2] == ["101"]
        if not switching:  # one request a connection: the next may be for another host, and must be checked
            answer_headers = [(k, v) for k, v in answer_headers if k.lower() not in _HOP] + [("Connection", "close")]
        writer.write(_head(status_line, answer_headers))
        await _pipe(reader, writer, up_reader, up_writer, both_ways=switching)
        return up_writer

    async def _robots_txt(self, url: str, host: str, port: int, addresses: list[str], user_agent: str) -> Rules:
        """The host's robots.txt, from the addresses the request's check passed, as RFC 9309 reads its answer: its
        first ROBOTS_LIMIT bytes, a Content-Encoding undone within bounds. A redirect is not followed here (the
        crawl's own fetch follows five): as a 4xx. A connection or read that fails raises (unreachable)."""
        where = urlsplit(url).netloc
        up_reader, up_writer = await self._connect(host, port, addresses)
        try:
            up_writer.write(_head("GET /robots.txt HTTP/1.1", [("Host", where), ("User-Agent", user_agent),
                                                             ("Accept-Encoding", "gzip, deflate"),
                                                             ("Connection", "close")]))
            status_line, headers = _parse_head(await up_reader.readuntil(b"\r\n\r\n"))
            named = {k.lower(): v for k, v in headers}
            chunked = "chunked" in named.get("transfer-encoding", "").lower()
            # a chunked body carries its framing too: read a little more so its data still reaches the limit
            want = ROBOTS_LIMIT + (ROBOTS_LIMIT // 8 if chunked else 0) + 1
            body = b""
            while len(body) < want and (more := await up_reader.read(min(65536, want - len(body)))):
                body += more
        finally:
            up_writer.close()
        code = status_line.split(" ")[1:2]
        status = int(code[0]) if code and code[0].isdigit() else 0  # no HTTP status line: no answer
        if chunked:
            body = _dechunk(body)
        truncated = len(body) > ROBOTS_LIMIT
        body = body[:ROBOTS_LIMIT]
        if coded := header_list(named.get("content-encoding")):
            try:
                body = decode(body, coded)
            except BodyError as error:
                return Rules(error.case)
        return read(status, body, truncated=truncated) if status else Rules(Case.UNREACHABLE)


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, up_reader: asyncio.StreamReader,
                up_writer: asyncio.StreamWriter, *, both_ways: bool = True) -> None:
    """Copy upstream to the client (and the client to upstream when `both_ways`) until either side closes. One way
    only, what the client sends more is read and dropped: it reaches no host unchecked."""

    async def copy(src: asyncio.StreamReader, dst: asyncio.StreamWriter | None) -> None:
        with contextlib.suppress(OSError, asyncio.IncompleteReadError):
            while data := await src.read(65536):
                if dst is not None:
                    dst.write(data)
                    await dst.drain()

    tasks = [asyncio.ensure_future(copy(up_reader, writer)),
             asyncio.ensure_future(copy(reader, up_writer if both_ways else None))]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()


def _parse_head(head: bytes) -> tuple[str, list[tuple[str, str]]]:
    lines = head.decode("latin-1").split("\r\n")
    headers = [(k.strip(), v.strip()) for k, sep, v in (h.partition(":") for h in lines[1:] if h) if sep]
    return lines[0], headers


def _head(first: str, headers: list[tuple[str, str]]) -> bytes:
    return (first + "\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers) + "\r\n").encode("latin-1")


def _answer(status: int, phrase: str, body: str = "", headers: dict[str, str] | None = None) -> bytes:
    data = body.encode()
    fields = [("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", str(len(data))),
              ("Connection", "close"), *(headers or {}).items()]
    return _head(f"HTTP/1.1 {status} {phrase}", fields) + data


def _dechunk(body: bytes) -> bytes:
    out, rest = b"", body
    while rest:
        size_line, _, rest = rest.partition(b"\r\n")
        try:
            size = int(size_line.split(b";")[0], 16)
        except ValueError:
            break
        if size == 0:
            break
        out, rest = out + rest[:size], rest[size + 2:]
    return out
