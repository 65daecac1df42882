"""The policy proxy on its own: an allowed host passes (by absolute URL and through a CONNECT tunnel), an off-site
CONNECT or request is refused with 403 and never connected, a private or link-local address nobody named is refused
by its address before any connection, robots.txt refuses what it disallows, one request a client connection (the
next may not ride on a checked one), and the unix socket serves the same policy."""

from __future__ import annotations

import socket
import threading
from pathlib import Path

import httpx
import pytest

from spiders.guard import HostGuard
from spiders.proxy import PolicyProxy, RobotsRules
from tests.sites import Page, Site, SiteServer
from tests.witness import Witness

UA = "timelyqa-test/1.0 (+tests)"


def _site() -> Site:
    return Site("allowed", {"/": Page("/", "Home", "<p>Home.</p>"),
                            "/news": Page("/news", "News", "<p>Allowed news.</p>"),
                            "/private/x": Page("/private/x", "Hidden", "<p>Robots say no.</p>")},
                robots="User-agent: *\nDisallow: /private/\n")


def ask(proxy: PolicyProxy, raw: str, *, then: str | None = None, unix: str | None = None) -> tuple[int, str, str]:
    """Send `raw` to the proxy (and, in the tunnel it opened, `then`); the status, the headers and the body of the
    last answer."""
    family = socket.AF_UNIX if unix else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.settimeout(10)
        s.connect(unix or ("127.0.0.1", proxy.port))
        s.sendall(raw.encode())
        if then is not None:
            first = s.recv(4096)
            assert first.startswith(b"HTTP/1.1 200"), first
            s.sendall(then.encode())
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    head, _, body = data.decode("latin-1").partition("\r\n\r\n")
    return int(head.split(" ")[1]), head, body


def get(host: str, path: str = "/", *, absolute: bool = True, close: bool = True) -> str:
    target = f"http://{host}{path}" if absolute else path
    return f"GET {target} HTTP/1.1\r\nHost: {host}\r\n" + ("Connection: close\r\n" if close else "") + "\r\n"


@pytest.fixture
def origin() -> SiteServer:
    with SiteServer(_site()) as server:
        yield server


def test_an_allowed_host_passes_by_absolute_url_and_through_a_tunnel(origin: SiteServer) -> None:
    host = origin.url.removeprefix("http://")
    with PolicyProxy(HostGuard.of([origin.url + "/"])) as proxy:
        page = httpx.get(origin.url + "/news", proxy=proxy.url, timeout=10)
        status, _, body = ask(proxy, f"CONNECT {host} HTTP/1.1\r\nHost: {host}\r\n\r\n", then=get(host, "/",
                                                                                                  absolute=False))
    assert page.status_code == 200 and "Allowed news." in page.text
    assert status == 200 and "Home." in body
    assert origin.requests == ["/news", "/"] and not proxy.refusals
    assert proxy.connections == {host: 2}


def test_an_off_site_connect_or_request_is_refused_with_403_and_never_connected(origin: SiteServer) -> None:
    with Witness() as witness, PolicyProxy(HostGuard.of([origin.url + "/"])) as proxy:
        tunnel = ask(proxy, f"CONNECT {witness.host} HTTP/1.1\r\nHost: {witness.host}\r\n\r\n")
        plain = ask(proxy, get(witness.host, "/steal"))
        other_port = ask(proxy, get(f"127.0.0.1:{witness.port}", "/"))  # the allowed host, another port
    for status, head, _ in (tunnel, plain, other_port):
        assert status == 403 and "X-Policy-Refusal: off_site" in head
    assert witness.connections == 0 and origin.requests == []
    assert proxy.refusals == {"off_site": 3} and not proxy.connections


def test_private_and_link_local_addresses_are_refused_by_address_before_any_connection(origin: SiteServer) -> None:
    by_name = f"localhost:{origin.url.rsplit(':', 1)[1]}"  # a name that resolves to loopback, named by nobody
    guard = HostGuard.of(["http://169.254.169.254/", "http://10.0.0.1:6379/", f"http://{by_name}/"],
                         named_private=())
    with PolicyProxy(guard) as proxy:
        metadata = ask(proxy, get("169.254.169.254", "/latest/meta-data/"))
        redis = ask(proxy, "CONNECT 10.0.0.1:6379 HTTP/1.1\r\nHost: 10.0.0.1:6379\r\n\r\n")
        loopback = ask(proxy, get(by_name, "/news"))
    for status, head, _ in (metadata, redis, loopback):
        assert status == 403 and "X-Policy-Refusal: private_address" in head
    assert proxy.refusals == {"private_address": 3}
    assert not proxy.connections and origin.requests == [], "refused by the address it resolved to, unconnected"


def test_the_operator_named_loopback_host_is_allowed_and_robots_txt_is_applied_once(origin: SiteServer) -> None:
    host = origin.url.removeprefix("http://")
    with PolicyProxy(HostGuard.of([origin.url + "/"]), robots=RobotsRules(UA)) as proxy:
        refused = ask(proxy, get(host, "/private/x"))
        allowed = [ask(proxy, get(host, p))[0] for p in ("/news", "/")]
    assert refused[0] == 403 and "X-Policy-Refusal: robots_disallowed" in refused[1]
    assert allowed == [200, 200]
    assert origin.requests == ["/robots.txt", "/news", "/"], "robots.txt fetched once; the disallowed path never"
    assert proxy.refusals == {"robots_disallowed": 1}


def test_a_second_request_on_a_checked_connection_goes_nowhere(origin: SiteServer) -> None:
    host = origin.url.removeprefix("http://")
    with Witness() as witness, PolicyProxy(HostGuard.of([origin.url + "/"])) as proxy:
        status, head, body = ask(proxy, get(host, "/news", close=False) + get(witness.host, "/second"))
    assert status == 200 and "Connection: close" in head and "Allowed news." in body
    assert witness.connections == 0 and origin.requests == ["/news"], "the second request was never sent"


def test_the_unix_socket_serves_the_same_policy(origin: SiteServer, tmp_path: Path) -> None:
    host, path = origin.url.removeprefix("http://"), str(tmp_path / "proxy.sock")
    with Witness() as witness, PolicyProxy(HostGuard.of([origin.url + "/"]), unix_path=path) as proxy:
        allowed = ask(proxy, get(host, "/news"), unix=path)
        refused = ask(proxy, get(witness.host, "/"), unix=path)
    assert allowed[0] == 200 and refused[0] == 403 and witness.connections == 0
    assert proxy.refusals == {"off_site": 1}


def _upgrading_server() -> tuple[socket.socket, threading.Thread]:
    """A server on 127.0.0.1 that answers one request with 101 Switching Protocols, then echoes what it gets."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)

    def serve() -> None:
        conn, _ = server.accept()
        with conn:
            head = b""
            while b"\r\n\r\n" not in head:
                head += conn.recv(4096)
            conn.sendall(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
            while data := conn.recv(4096):
                conn.sendall(data)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return server, thread


def test_a_websocket_upgrade_by_absolute_url_is_checked_then_passes_both_ways() -> None:
    server, _ = _upgrading_server()
    host = f"127.0.0.1:{server.getsockname()[1]}"
    upgrade = "GET http://{h}/ws HTTP/1.1\r\nHost: {h}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n"
    with server, Witness() as witness, PolicyProxy(HostGuard.of([f"http://{host}/"])) as proxy:
        refused = ask(proxy, upgrade.format(h=witness.host))
        with socket.create_connection(("127.0.0.1", proxy.port), timeout=10) as s:
            s.sendall(upgrade.format(h=host).encode())
            head = s.recv(4096)
            s.sendall(b"ping")
            echoed = s.recv(4096)
    assert refused[0] == 403 and witness.connections == 0 and proxy.refusals == {"off_site": 1}
    assert head.startswith(b"HTTP/1.1 101") and b"Connection: Upgrade" in head and echoed == b"ping"
