"""The MCP server: signoff's sign-off step as tools any MCP client (a coding agent) can call.

Every tool acts as the calling rooms agent against the rooms server (`signoff serve`), with that
agent's own key, so the rooms server's rules decide who may read, post, ask and answer: an agent can
ask for an approval but never answer one (only people answer cards). Verifiers run here, on the
machine the agent's repositories are on, with the harness store of this server's home.
"""

from __future__ import annotations

import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from signoff.gate.approvals import Approvals
from signoff.kernel.errors import RefusedError, SignoffError, UsageError
from signoff.kernel.settings import Settings
from signoff.mcp.auth import Caller
from signoff.mcp.harness import QUESTION, frozen, harness_content
from signoff.rooms.domain.bound import CardDecision

T = TypeVar("T")
INSTRUCTIONS = (
    "signoff: people sign off, code verifies. request_approval asks named people (or a role:NAME) to approve "
    "exact content (bound to its digest) and await_approval waits for their answer; you cannot answer approvals "
    "yourself. "
    "verify_fix judges a candidate with a frozen harness a person approved (request_harness_approval). "
    "check_claims checks sentences against git history; scan_text screens untrusted text."
)


def _fail(exc: SignoffError) -> ToolError:
    return ToolError(f"error: {exc.message}" + (f"\nfix: {exc.fix}" if exc.fix else ""))


async def _guarded(work: Callable[[], Awaitable[T]]) -> T:
    try:
        return await work()
    except SignoffError as exc:
        raise _fail(exc) from exc


class Tools:
    def __init__(self, caller: Caller, settings: Settings, default_room: str | None) -> None:
        self.caller = caller
        self.settings = settings
        self.default_room = default_room

    def approvals(self) -> Approvals:
        return Approvals(self.caller.agent().transport)

    def room(self, room: str) -> str:
        chosen = room or self.default_room
        if not chosen:
            raise UsageError("no room given", "pass room (a room id or name), or start the server with --room")
        return chosen

    async def request_approval(self, question: str, content: str, responders: list[str], room: str,
                               options: list[dict[str, str]] | None, expires_in: float) -> dict[str, Any]:
        card = await self.approvals().request(self.room(room), question, content, responders, expires_in, options)
        return _card_summary(card)

    async def await_approval(self, request_id: str, timeout: float, content: str | None) -> dict[str, Any]:
        return (await self.approvals().wait(request_id, timeout, content)).to_dict()

    async def request_harness_approval(self, harness: str, responders: list[str], room: str,
                                       expires_in: float) -> dict[str, Any]:
        content = harness_content(self.settings, frozen(self.settings, harness))
        card = await self.approvals().request(self.room(room), QUESTION, content, responders, expires_in)
        return _card_summary(card)

    async def approved_harness(self, harness: str, approval: str) -> CardDecision:
        """The decision on `approval`, if it approves exactly this frozen harness; else refused."""
        content = harness_content(self.settings, frozen(self.settings, harness))
        decision = await self.approvals().decision(approval, content)
        if not decision.approved:
            raise RefusedError(f"harness {harness[:12]} is not approved by {approval!r}: "
                               f"{decision.reason or decision.state}",
                               "call request_harness_approval for this harness and wait until a person approves it")
        return decision

    async def verify_fix(self, repo: str, base: str, candidate: str, harness: str, approval: str, expect: str,
                         regression: list[str], runner: str, pythonpath: list[str], allow: list[str],
                         timeout: float) -> dict[str, Any]:
        decision = await self.approved_harness(harness, approval)
        from signoff.repair import HarnessApproval, VerifyRequest
        from signoff.repair import verify_fix as verify_approved

        req = VerifyRequest(repo=Path(repo), base=base, candidate=candidate, harness=None, expect=expect,
                            regression=list(regression), allow=list(allow), pythonpath=list(pythonpath),
                            runner=runner, timeout=timeout, approved_digest=harness, frozen_digest=harness)
        # The repair service holds the rule (the harness approved, as this home shows it) and runs it.
        approved = HarnessApproval(approval, decision.approved, decision.content_digest, decision.responder,
                                   decision.reason)
        result = await anyio.to_thread.run_sync(lambda: verify_approved(self.settings, req, approved))
        return {"verdict": result.verdict, "reasons": result.reasons,
                "evidence": str(result.evidence) if result.evidence else None,
                "fingerprint": result.fingerprint, "harness_digest": result.harness_digest,
                "approved_by": decision.responder_name, "approval": approval, "tamper": result.tamper,
                "approved": decision.approval.model_dump(mode="json") if decision.approval else None}

    async def check_claims(self, text: str, repo: str, range_: str) -> dict[str, Any]:
        return await anyio.to_thread.run_sync(lambda: _check_claims(text, Path(repo), range_))

    async def scan_text(self, text: str) -> dict[str, Any]:
        from signoff.airlock import scan

        verdict = scan(text)
        out: dict[str, Any] = verdict.to_dict()
        return out

    async def post_message(self, body: str, room: str, targets: list[str]) -> dict[str, Any]:
        approvals = self.approvals()
        room_id = await approvals.room_id(self.room(room))
        async with approvals.connected(room_id) as client:
            receipt = await (client.send_targeted_message(body, targets) if targets else client.post_message(body))
        return {"message_id": receipt.message_id, "room_id": receipt.room_id, "sender": receipt.sender,
                "body": receipt.body, "addressed": receipt.addressed, "target_statuses": receipt.target_statuses,
                "sequence": receipt.sequence}

    async def read_room(self, room: str, limit: int) -> dict[str, Any]:
        approvals = self.approvals()
        room_id = await approvals.room_id(self.room(room))
        async with approvals.connected(room_id) as client:
            context = await client.read_context(limit=limit)
        return {"room_id": room_id, "context": context}


def _card_summary(card: dict[str, Any]) -> dict[str, Any]:
    return {"request_id": card["request_id"], "room_id": card["room_id"], "content_digest": card["content_digest"],
            "responders": card["responders"], "expires_at": card["expires_at"], "state": card["state"]}


def _check_claims(text: str, repo: Path, range_: str) -> dict[str, Any]:
    from signoff.notes import check_claims, sentences_of, snapshot_support, take_snapshot

    if not isinstance(text, str) or not text.strip():
        raise UsageError("no text to check", "pass the sentences to check")
    with tempfile.TemporaryDirectory(prefix="signoff-claims-") as tmp:
        snap = take_snapshot(repo, range_ or None, Path(tmp) / "snapshot.json")
        support = snapshot_support(snap.path)
    sentences = []
    for sentence in sentences_of(text):
        errors = check_claims(sentence, support)
        sentences.append({"sentence": sentence, "ok": not errors, "codes": sorted({e["code"] for e in errors}),
                          "errors": errors})
    return {"range": snap.range, "head": snap.head, "ok": all(s["ok"] for s in sentences),
            "sentences": sentences}


def build_server(caller: Caller, settings: Settings, default_room: str | None = None,
                 **server_options: Any) -> MCPServer:
    tools = Tools(caller, settings, default_room)
    mcp: MCPServer = MCPServer("signoff", instructions=INSTRUCTIONS, log_level="WARNING", **server_options)

    @mcp.tool()
    async def request_approval(question: str, content: str, responders: list[str], room: str = "",
                               options: list[dict[str, str]] | None = None,
                               expires_in: float = 3600.0) -> dict[str, Any]:
        """Ask named people (`responders`: names, or `role:NAME` for whoever holds that people's role when
        answering) to approve the exact `content` (one-line `question`). The approval is bound to the
        content's SHA-256; returns the request id for await_approval."""
        return await _guarded(lambda: tools.request_approval(question, content, responders, room, options,
                                                             expires_in))

    @mcp.tool()
    async def await_approval(request_id: str, timeout: float = 60.0, content: str | None = None) -> dict[str, Any]:
        """Wait up to `timeout` seconds for the answer. `approved` is true only for an accepted answer by a
        listed person to a card bound to this content (pass `content` to check it is yours)."""
        return await _guarded(lambda: tools.await_approval(request_id, timeout, content))

    @mcp.tool()
    async def request_harness_approval(harness: str, responders: list[str], room: str = "",
                                       expires_in: float = 3600.0) -> dict[str, Any]:
        """Ask named people to approve a frozen repair harness (its digest) for verify_fix."""
        return await _guarded(lambda: tools.request_harness_approval(harness, responders, room, expires_in))

    @mcp.tool()
    async def verify_fix(repo: str, base: str, candidate: str, harness: str, approval: str, expect: str,
                         regression: list[str] | None = None, runner: str = "pytest",
                         pythonpath: list[str] | None = None, allow: list[str] | None = None,
                         timeout: float = 120.0) -> dict[str, Any]:
        """Judge `candidate` against `base` with the frozen harness `harness` (its digest), which the
        approval `approval` must approve. Returns the verdict, the reasons and the evidence path."""
        return await _guarded(lambda: tools.verify_fix(repo, base, candidate, harness, approval, expect,
                                                       regression or [], runner, pythonpath or [], allow or [],
                                                       timeout))

    @mcp.tool()
    async def check_claims(text: str, repo: str, range: str = "") -> dict[str, Any]:
        """Check every hash and number in `text` against the git range (e.g. v1.0..v1.1) of `repo`;
        returns the error codes per sentence."""
        return await _guarded(lambda: tools.check_claims(text, repo, range))

    @mcp.tool()
    async def scan_text(text: str) -> dict[str, Any]:
        """Screen untrusted text with the airlock: quarantined (injection found) or clean."""
        return await _guarded(lambda: tools.scan_text(text))

    @mcp.tool()
    async def post_message(body: str, room: str = "", targets: list[str] | None = None) -> dict[str, Any]:
        """Post in a room as this agent (targets: names to address); returns the server's receipt."""
        return await _guarded(lambda: tools.post_message(body, room, targets or []))

    @mcp.tool()
    async def read_room(room: str = "", limit: int = 50) -> dict[str, Any]:
        """The room's recent messages, as far as this agent may read them."""
        return await _guarded(lambda: tools.read_room(room, limit))

    return mcp

