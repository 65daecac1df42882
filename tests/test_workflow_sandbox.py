"""Hostile trusted workflows in the real bubblewrap sandbox: each tries what a hostile tester's workflow did (read the
resolver's credentials from /proc, read /etc/shadow and a file outside, write outside its home, reach a witness
server on 127.0.0.9, leave a process running) and none gets anywhere, while a well-behaved workflow still answers;
where bubblewrap is missing or cannot start, no workflow runs at all; a workflow path leading out of the recipes
folder is refused when the recipes are read.

The resolver here is a process of its own started with HF_TOKEN in its environment (a variable set in a running
process never reaches /proc/<pid>/environ, so pytest's own process would prove nothing): it runs every case through
`workflow.execute`, the sandbox the resolver uses, and reports what each printed and what was left running."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.witness import Witness
from timelyqa.official import workflow
from timelyqa.official.catalog import load

ROOT = Path(__file__).resolve().parent.parent
TOKEN = f"hf_fake_{uuid.uuid4().hex}"
"""The credential in the resolver's environment."""
MARK = f"timelyqa-sandbox-test-{uuid.uuid4().hex}"
"""On the command line of every process a hostile workflow starts, to find any left running from outside."""

READS_ENVIRONMENTS = """import json, os, pathlib
got = {}
for path in [f"/proc/{os.environ['RESOLVER_PID']}/environ", "/proc/1/environ", "/proc/self/environ",
             *map(str, pathlib.Path("/proc").glob("*/environ"))]:
    try:
        got[path] = pathlib.Path(path).read_bytes().decode("latin-1")
    except OSError as exc:
        got[path] = type(exc).__name__
got["os.environ"] = json.dumps(dict(os.environ))
print(json.dumps(got))
"""

READS_FILES = """import json, os, pathlib
got = {{}}
for path in {targets}:
    try:
        got[path] = sorted(os.listdir(path)) if os.path.isdir(path) else pathlib.Path(path).read_text()
    except OSError as exc:
        got[path] = type(exc).__name__
print(json.dumps(got))
"""

WRITES = """import json, os, pathlib
got = {{}}
for path in {targets}:
    try:
        pathlib.Path(path).write_text("written by a workflow")
        got[path] = "written"
    except OSError as exc:
        got[path] = type(exc).__name__
print(json.dumps(got))
"""

CONNECTS = """import json, socket
got = {{}}
try:
    socket.create_connection(({host!r}, {port}), timeout=3).close()
    got["tcp"] = "connected"
except OSError as exc:
    got["tcp"] = type(exc).__name__
try:
    socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", ({host!r}, {port}))
    got["udp"] = "sent"
except OSError as exc:
    got["udp"] = type(exc).__name__
try:
    socket.getaddrinfo("example.com", 80)
    got["dns"] = "resolved"
except OSError as exc:
    got["dns"] = type(exc).__name__
got["interfaces"] = [name for _, name in socket.if_nameindex()]
print(json.dumps(got))
"""

LEAVES_PROCESSES = """import os, subprocess, sys, time
sleeper = "import time; print('{{}} started'.format(__import__('sys').argv[1]), flush=True); time.sleep(120)"
subprocess.Popen([sys.executable, "-c", sleeper, "child", {mark!r}], start_new_session=True)
if os.fork() == 0:  # a daemon, the classic way: fork, setsid, fork again
    os.setsid()
    if os.fork() == 0:
        os.execv(sys.executable, [sys.executable, "-c", sleeper, "daemon", {mark!r}])
    os._exit(0)
time.sleep(0.5)
{end}
"""

BEHAVES = """import os, pathlib
home = pathlib.Path(os.environ["HOME"])
(home / "page.html").write_text("<td>1.5</td>")  # its home is its scratch space
print((home / "page.html").read_text()[4:7])
"""

RESOLVER = """import json, os, pathlib, subprocess, sys, time
from tests.witness import Witness
from timelyqa.official import workflow
cases, mark = json.loads(sys.argv[1]), sys.argv[2]

def running():
    found = []
    for entry in pathlib.Path("/proc").iterdir():
        if entry.name == str(os.getpid()):
            continue  # this resolver, which holds the mark in its arguments
        try:
            status = (entry / "status").read_text()
            if mark.encode() in (entry / "cmdline").read_bytes() and "\\nState:\\tZ" not in status:
                found.append(int(entry.name))
        except (OSError, ValueError):
            continue
    return found

env = {"PATH": "/usr/bin:/bin", "HOME": workflow.HOME, "RESOLVER_PID": str(os.getpid())}
report = {}
for name, (script, timeout) in cases.items():
    began = time.monotonic()
    ran = workflow.execute(pathlib.Path(script), env, timeout=timeout)
    took = time.monotonic() - began
    deadline = time.monotonic() + 3
    while (left := running()) and time.monotonic() < deadline:
        time.sleep(0.05)
    for pid in left:
        os.kill(pid, 9)
    report[name] = {"returncode": ran.returncode, "stdout": ran.stdout, "stderr": ran.stderr, "took": took,
                    "left_running": left}
# the control: the same reading of /proc, run as workflows ran before the sandbox (a plain subprocess)
plain = subprocess.run([sys.executable, "-I", cases["environ"][0]], env=env, capture_output=True, text=True)
report["environ-unsandboxed"] = {"returncode": plain.returncode, "stdout": plain.stdout, "stderr": plain.stderr}
report["pid"] = os.getpid()
print(json.dumps(report))
"""


@pytest.fixture(scope="module")
def witness() -> Iterator[Witness]:
    """A server on 127.0.0.9, an address no one named (tests/witness.py): it counts every connection that reaches it."""
    with Witness() as seen:
        yield seen


@dataclass
class Scene:
    outside: Path
    outside_text: str
    outside_mtime: int
    recipes: Path
    host_tmp: Path
    report: dict[str, Any]


SCENE = pytest.mark.slow
"""The tests that read the hostile scene: a resolver process running seven workflows, each in a sandbox of its own
(about 2 s, once per test worker), end to end as `live resolve --allow-workflows` runs them; `make test` runs them."""


@pytest.fixture(scope="module")
def scene(tmp_path_factory: pytest.TempPathFactory, witness: Witness) -> Scene:
    """Every hostile case run once by a resolver process holding HF_TOKEN, with a file placed outside the sandbox."""
    base = tmp_path_factory.mktemp("sandbox")
    outside = base / "outside" / "secret.txt"
    outside.parent.mkdir()
    outside_text = f"outside-secret-{uuid.uuid4().hex}"
    outside.write_text(outside_text)
    recipes = base / "recipes"
    recipes.mkdir()
    (recipes / "caton.yaml").write_text(f"recipe: 1\n# {outside_text}\n")  # beside the script, not bound with it
    host_tmp = Path("/tmp") / MARK
    homes = [workflow.HOME + "/ok.txt"]
    scripts = {
        "environ": (READS_ENVIRONMENTS, 10),
        "files": (READS_FILES.format(targets=[str(outside), str(outside.parent), str(recipes / "caton.yaml"),
                                              str(recipes), "/etc/shadow", "/etc/passwd", "/etc/hosts",
                                              "/proc/1/root/etc/shadow", str(ROOT / "pyproject.toml"),
                                              workflow.SCRIPT_AT]), 10),
        "writes": (WRITES.format(targets=[str(outside), str(outside.parent / "new.txt"), str(recipes / "new.py"),
                                          f"{workflow.SCRIPT_AT}/writes.py", str(host_tmp), "/new.txt",
                                          f"{sys.prefix}/{MARK}", "/dev/shm/new.txt", *homes]), 10),
        "socket": (CONNECTS.format(host=witness.address, port=witness.port), 10),
        "setsid": (LEAVES_PROCESSES.format(mark=MARK, end="print(1.0)"), 10),
        "timeout": (LEAVES_PROCESSES.format(mark=MARK, end="time.sleep(120)"), 1.0),
        "behaves": (BEHAVES, 10),
    }
    cases = {}
    for name, (body, timeout) in scripts.items():
        (recipes / f"{name}.py").write_text(body)
        cases[name] = (str(recipes / f"{name}.py"), timeout)
    env = {**os.environ, "HF_TOKEN": TOKEN,
           "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)}
    proc = subprocess.run([sys.executable, "-c", RESOLVER, json.dumps(cases), MARK], capture_output=True, text=True,
                          env=env, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    return Scene(outside, outside_text, outside.stat().st_mtime_ns, recipes, host_tmp, json.loads(proc.stdout))


def printed(scene: Scene, case: str) -> dict[str, Any]:
    ran = scene.report[case]
    assert ran["returncode"] == 0, ran["stderr"]
    return json.loads(ran["stdout"].splitlines()[-1])


@SCENE
def test_a_workflow_reads_no_credential_of_the_resolver_from_proc(scene: Scene) -> None:
    control = scene.report["environ-unsandboxed"]
    assert TOKEN in control["stdout"], "the probe works: unsandboxed, /proc/<resolver>/environ gives the token away"
    got = printed(scene, "environ")
    assert TOKEN not in scene.report["environ"]["stdout"] + scene.report["environ"]["stderr"]
    assert got[f"/proc/{scene.report['pid']}/environ"] == "FileNotFoundError", "the resolver is not in its /proc"
    visible = sorted({path.split("/")[2] for path in got if path.startswith("/proc/") and path.split("/")[2].isdigit()})
    assert len(visible) <= 3, f"a private /proc: only the sandbox's own processes ({visible})"


@SCENE
def test_a_workflow_reads_no_file_outside_the_sandbox(scene: Scene) -> None:
    got = printed(scene, "files")
    ran = scene.report["files"]
    assert scene.outside_text not in ran["stdout"] + ran["stderr"]
    for path in (str(scene.outside), str(scene.outside.parent), str(scene.recipes / "caton.yaml"), str(scene.recipes),
                 "/etc/shadow",
                 "/etc/passwd", "/etc/hosts", "/proc/1/root/etc/shadow", str(ROOT / "pyproject.toml")):
        assert got[path] in ("FileNotFoundError", "PermissionError"), f"{path}: {got[path]!r}"
    assert got[workflow.SCRIPT_AT] == ["files.py"], "of the recipes folder, only its own script is there"


@SCENE
def test_a_workflow_writes_nothing_outside_its_home(scene: Scene) -> None:
    got = printed(scene, "writes")
    written = [path for path, outcome in got.items() if outcome == "written"]
    assert written == [workflow.HOME + "/ok.txt"], f"only its private home is writable, not {written}"
    assert scene.outside.read_text() == scene.outside_text and scene.outside.stat().st_mtime_ns == scene.outside_mtime
    assert sorted(p.name for p in scene.outside.parent.iterdir()) == ["secret.txt"]
    assert not (scene.recipes / "new.py").exists() and not scene.host_tmp.exists()
    assert not (Path(sys.prefix) / MARK).exists()


@SCENE
def test_a_workflow_reaches_no_server(scene: Scene, witness: Witness) -> None:
    got = printed(scene, "socket")
    assert got["tcp"] == "ConnectionRefusedError", "127.0.0.9 inside is the sandbox's own loopback: nothing there"
    assert got["dns"] == "gaierror" and got["interfaces"] == ["lo"]
    time.sleep(0.2)
    assert witness.connections == 0


@SCENE
def test_a_workflow_leaves_no_process_behind(scene: Scene) -> None:
    ran = scene.report["setsid"]
    assert ran["returncode"] == 0 and ran["stdout"].split()[-1] == "1.0", ran["stderr"]
    assert "child started" in ran["stdout"] and "daemon started" in ran["stdout"], "both really ran"
    assert ran["left_running"] == [], "a setsid child and a double-forked daemon end with the sandbox"


@SCENE
def test_a_workflow_past_its_limit_is_killed_with_all_it_started(scene: Scene) -> None:
    ran = scene.report["timeout"]
    assert ran["returncode"] is None and ran["took"] < 3, ran
    assert "child started" in ran["stdout"] and "daemon started" in ran["stdout"]
    assert ran["left_running"] == []


@SCENE
def test_a_well_behaved_workflow_still_answers(scene: Scene) -> None:
    ran = scene.report["behaves"]
    assert (ran["returncode"], ran["stdout"].strip(), ran["stderr"]) == (0, "1.5", "")


# ---- no sandbox, no workflow --------------------------------------------------------------------------------------

def test_without_bubblewrap_no_workflow_runs(tmp_path: Path) -> None:
    script = tmp_path / "wf.py"
    script.write_text(f"import subprocess, sys\nsubprocess.run([sys.executable, '-c', 'pass', {MARK!r}])\n"
                      "print(1)\n")
    with pytest.raises(workflow.SandboxUnavailable) as refused:
        workflow.execute(script, {}, timeout=10, bwrap=tmp_path / "no-such-bwrap")
    assert str(refused.value) == (f"no bubblewrap at {tmp_path / 'no-such-bwrap'} (install Debian's bubblewrap, or "
                                  "set TIMELYQA_BWRAP); workflows never run outside the sandbox")


def test_where_user_namespaces_are_refused_no_workflow_runs(tmp_path: Path) -> None:
    """The resolver in an outer bubblewrap that forbids new user namespaces (as a locked-down machine or a
    container's default profile does): the real bwrap fails to build the sandbox, and the workflow is not run."""
    script = tmp_path / "wf.py"
    script.write_text("print(1)\n")
    code = ("import pathlib\nfrom timelyqa.official import workflow\n"
            f"try:\n    print(workflow.execute(pathlib.Path({str(script)!r}), {{}}, timeout=10))\n"
            "except workflow.SandboxUnavailable as exc:\n    print('refused:', exc)\n")
    proc = subprocess.run([str(workflow.bwrap_path()), "--unshare-user", "--disable-userns", "--bind", "/", "/",
                           "--dev", "/dev", "--proc", "/proc", sys.executable, "-c", code], capture_output=True,
                          text=True, timeout=60, env={**os.environ, "PYTHONPATH": str(ROOT)}, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("refused: bubblewrap could not start the sandbox (bwrap: "), proc.stdout
    assert proc.stdout.rstrip().endswith("; workflows never run outside the sandbox") and proc.stdout.count("\n") == 1


# ---- workflow paths stay in the recipes folder --------------------------------------------------------------------

RECIPE = """recipe: 1
id: {id}
question: What is the level at the Caton gauge?
level: L1
timezone: UTC
workflow: {script}
fetch: {{url: "https://gauges.example/caton?date={{today}}"}}
extract: {{css: "td.level", type: number}}
"""


def test_a_workflow_path_leading_out_of_the_recipes_folder_is_refused(tmp_path: Path) -> None:
    recipes, other = tmp_path / "recipes", tmp_path / "other"
    (recipes / "tools").mkdir(parents=True)
    other.mkdir()
    (other / "evil.py").write_text("print(1)\n")
    (recipes / "tools" / "good.py").write_text("print(1)\n")
    (recipes / "link.py").symlink_to(other / "evil.py")
    (recipes / "linked").symlink_to(other)
    cases = {"climbs": "../other/evil.py", "climbs-back": "tools/../tools/good.py", "links-out": "link.py",
             "folder-links-out": "linked/evil.py", "absolute": str(other / "evil.py"), "good": "tools/good.py"}
    for recipe_id, script in cases.items():
        (recipes / f"{recipe_id}.yaml").write_text(RECIPE.format(id=recipe_id, script=script))
    catalog = load(recipes, allow_workflows=True)
    assert [r.id for r in catalog.recipes] == ["good"]
    assert catalog.workflows == {"good": recipes / "tools" / "good.py"}
    refused = {Path(d.item["file"]).stem: d for d in catalog.refused}
    assert set(refused) == set(cases) - {"good"}
    for recipe_id, dropped in refused.items():
        assert dropped.reason == "recipe_invalid" and "\n" not in dropped.detail
    assert refused["climbs"].detail == (f"{recipes / 'climbs.yaml'}: workflow: '../other/evil.py' leads out of the "
                                        f"recipes folder {recipes}; a workflow is a file beside its recipe or below it")
    assert "'link.py' leads out of the recipes folder" in refused["links-out"].detail
    assert "'linked/evil.py' leads out of the recipes folder" in refused["folder-links-out"].detail
    # the path is named, cut to its first characters as every recipe message is (timelyqa.official.recipe)
    assert f"must be a .py file relative to the recipe file, not '{str(other / 'evil.py')[:20]}" in refused[
        "absolute"].detail
    # the flag or not: a recipe pointing out of the folder is refused when read
    assert [r.id for r in load(recipes).recipes] == ["good"]


# ---- the one way out, when given: a proxy's unix socket -----------------------------------------------------------

THROUGH_THE_PROXY = """import json, os, socket, urllib.request
got = {{"proxy": os.environ.get("HTTP_PROXY", "")}}
got["page"] = urllib.request.urlopen("http://gauges.example/caton?date=2026-11-16", timeout=10).read().decode()
try:
    socket.create_connection(({host!r}, {port}), timeout=3).close()
    got["direct"] = "connected"
except OSError as exc:
    got["direct"] = type(exc).__name__
print(json.dumps(got))
"""


def test_given_a_proxy_socket_a_workflow_reaches_the_web_through_it_alone(tmp_path: Path, witness: Witness) -> None:
    """A stand-in for spiders.proxy.PolicyProxy's unix socket (it answers every request itself, and records it): the
    workflow's HTTP goes there through the relay on its own loopback, and still nothing else is reachable."""
    import socketserver

    asked: list[str] = []

    class Proxy(socketserver.StreamRequestHandler):
        def handle(self) -> None:
            asked.append(self.rfile.readline().decode().strip())
            while self.rfile.readline() not in (b"\r\n", b""):
                pass
            self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nConnection: close\r\n\r\n1.5")

    sock = tmp_path / "proxy.sock"
    with socketserver.ThreadingUnixStreamServer(str(sock), Proxy) as server:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        script = tmp_path / "wf.py"
        script.write_text(THROUGH_THE_PROXY.format(host=witness.address, port=witness.port))
        ran = workflow.execute(script, {"PATH": "/usr/bin:/bin", "HOME": workflow.HOME}, timeout=20, proxy=sock)
        server.shutdown()
    assert ran.returncode == 0, ran.stderr
    got = json.loads(ran.stdout.splitlines()[-1])
    assert got["page"] == "1.5" and got["proxy"].startswith("http://127.0.0.1:")
    assert asked == ["GET http://gauges.example/caton?date=2026-11-16 HTTP/1.1"], "the proxy decides, by URL"
    assert got["direct"] == "ConnectionRefusedError" and witness.connections == 0
