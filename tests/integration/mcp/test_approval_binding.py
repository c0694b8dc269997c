"""The MCP approval tools check through the one content-bound approval (signoff.ledger.approval),
from the attacker's side: an agent that holds other content than the card showed gets no approval
(nothing is made, nothing is recorded), and an answered card for exactly its content gives the
approval record: what was shown, its digest, who, the face, what the option meant."""

from __future__ import annotations

import asyncio
from pathlib import Path

from signoff.kernel.settings import Settings
from signoff.kernel.shown import shown_digest
from signoff.ledger import SqlLedger
from signoff.mcp.auth import Caller
from signoff.mcp.local import ROOM, first_admin, local_agent
from signoff.mcp.server import Tools
from tests.support.cards import answer_in

PLAN = "DROP TABLE sessions;\n"
QUESTION = "Run this migration?"


class TestMcpCardApproval:
    def _answered(self, home: Path) -> tuple[Tools, str, SqlLedger]:
        settings = Settings.load(home=home, env={})
        agent = local_agent(settings)
        tools = Tools(Caller(agent.url, agent), settings, ROOM)
        card = asyncio.run(tools.request_approval(QUESTION, PLAN, ["admin"], "", None, 600))
        answer_in(agent.service, first_admin(agent.service), card["request_id"], "yes")
        return tools, card["request_id"], SqlLedger.open(settings)

    def test_an_approval_for_other_content_is_refused_and_records_nothing(self, tmp_path: Path) -> None:
        tools, request_id, ledger = self._answered(tmp_path / "home")
        head = ledger.head()
        other = asyncio.run(tools.await_approval(request_id, 0, PLAN.replace("sessions", "users")))
        assert (other["state"], other["approved"], other["approval"]) == ("unbound", False, None)
        assert ledger.head() == head

    def test_an_approval_of_the_content_shown_is_the_approval_record(self, tmp_path: Path) -> None:
        tools, request_id, _ = self._answered(tmp_path / "home")
        mine = asyncio.run(tools.await_approval(request_id, 0, PLAN))
        assert mine["approved"] is True
        made = mine["approval"]
        assert made["digest"] == shown_digest({"question": QUESTION, "content": PLAN})
        assert (made["via"], made["option"], made["meaning"]) == ("room", "yes", "approve") and made["by"]
