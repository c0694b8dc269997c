"""`signoff serve --demo` after a real `signoff demo` run: a real server process whose pages answer
with the demo's rooms, bugs and evidence once the printed one-time link is redeemed."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from signoff.kernel.tls import tls_context
from tests.support.cli import Result, run_cli
from tests.support.requires import require_sandbox
from tests.support.serve import Process, signoff
from tests.support.web import HTTP_WAIT, csrf_of

LINK = re.compile(r"^(http://127\.0\.0\.1:\d+)/signin/link#(sol_\S+)$")


def _env() -> dict[str, str]:
    # As after `make demo`: the default home (.signoff in the working folder), nothing configured.
    return {k: v for k, v in os.environ.items() if not k.startswith("SIGNOFF_")}


def _signoff(folder: Path, *args: str) -> Result:
    return run_cli(args, _env(), cwd=folder)


def _serve(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`signoff serve` expected to refuse: a process, since one that started would serve on."""
    return subprocess.run(signoff("serve", *args), cwd=folder, env=_env(), capture_output=True, text=True,
                          timeout=240)


@pytest.fixture(scope="module")
def demo_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    require_sandbox()  # the demos reproduce and verify in the real sandbox
    folder = tmp_path_factory.mktemp("newcomer")
    for name in ("repair", "desk"):
        done = _signoff(folder, "demo", name, "--json")
        assert done.exit_code == 0, f"signoff demo {name} failed: {done.stdout[-2000:]}{done.stderr[-2000:]}"
    return folder


@pytest.fixture(scope="module")
def demo_server(demo_folder: Path) -> Iterator[tuple[str, str]]:
    server = Process(signoff("serve", "--demo", "--port", "0"), _env(), cwd=demo_folder)
    try:
        found = server.printed(LINK)  # the base URL and the sign-in secret of the link printed at start
        yield found.group(1), found.group(2)
    finally:
        server.stop()


def _redeem(base: str, secret: str) -> tuple[httpx.Client, httpx.Response]:
    client = httpx.Client(base_url=base, verify=tls_context(), timeout=HTTP_WAIT)
    return client, client.post("/signin/link", data={"csrf": csrf_of(client, "/signin/link"), "code": secret})


def _text(html: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


@pytest.mark.slow
def test_the_printed_link_signs_in_and_the_pages_show_the_demos_data(demo_server: tuple[str, str]) -> None:
    base, secret = demo_server
    anonymous = httpx.get(f"{base}/bugs", verify=tls_context(), timeout=HTTP_WAIT)
    assert anonymous.status_code in (303, 401) and "Coupon larger" not in anonymous.text
    client, signed = _redeem(base, secret)
    try:
        assert signed.status_code == 303 and signed.headers["location"] == "/"
        assert "Signed in as Demo visitor (visitor)" in _text(client.get("/").text)
        # The repair demo's room, with the operator's report and the refusals it provoked.
        rooms = client.get("/rooms")
        assert rooms.status_code == 200
        room_id = re.search(r'href="/rooms/([0-9a-f]+)">repair coupon', rooms.text)
        assert room_id, rooms.text
        room = _text(client.get(f"/rooms/{room_id.group(1)}").text)
        assert "A 10% coupon is applied twice" in room and "refused" in room
        # The desk demo's last run: its bug, reopened by the second reporter's "no", then round 2 on the
        # fixed code reproduces nothing twice, so it waits for a human.
        waiting = _text(client.get("/bugs?state=needs_human").text)
        assert "Coupon larger than the cart gives a negative total" in waiting
        bug = client.get("/bugs/BUG-0001")
        assert bug.status_code == 200 and "UNTRUSTED REPORTER CONTENT" in bug.text
        evidence = _text(client.get("/evidence").text)
        assert "repair-" in evidence and "verified" in evidence
    finally:
        client.close()
    # The link was spent by its first use.
    again, second = _redeem(base, secret)
    again.close()
    assert second.status_code == 403 and "not valid" in second.text


def test_serve_demo_refuses_a_folder_the_demos_never_ran_in(tmp_path: Path) -> None:
    done = _serve(tmp_path, "--demo", "--port", "0")
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert lines[0].startswith("error: ") and "holds no demo state" in lines[0]
    assert lines[1].startswith("fix: ") and "make demo" in lines[1]
    assert "Traceback" not in done.stderr
    assert not (tmp_path / ".signoff").exists()  # nothing opened, nothing written


@pytest.mark.slow
def test_serve_demo_will_not_take_over_a_visitor_it_did_not_create(tmp_path: Path) -> None:
    # A home where someone else's `visitor` exists (not an admin): the demo never hands it a link.
    (tmp_path / ".signoff" / "demo-repair").mkdir(parents=True)
    made = _signoff(tmp_path, "rooms", "user", "add", "visitor", "--json")
    assert made.exit_code == 0, made.stderr
    done = _serve(tmp_path, "--demo", "--port", "0")
    assert done.returncode == 4 and "sol_" not in done.stdout  # a conflict
    assert done.stderr.startswith("error: ") and "not the demo's visitor" in done.stderr
    listed = _signoff(tmp_path, "rooms", "user", "list", "--json")
    assert listed.exit_code == 0
    assert [(u["name"], u["admin"]) for u in json.loads(listed.stdout)] == [("visitor", False)]


def test_serve_says_clearly_when_the_port_is_taken(tmp_path: Path) -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        done = _serve(tmp_path, "--port", str(port))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert lines[0].startswith(f"error: cannot listen on 127.0.0.1:{port}") and lines[1].startswith("fix: ")
    assert not (tmp_path / ".signoff").exists()  # refused before the database was opened
