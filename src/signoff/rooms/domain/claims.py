"""Identity claims: a person binds a chat account (a Matrix id) to their signoff user, through one
bridge user, with a one-time code; the bridge may then speak and answer approval cards for that
person, and for nobody else.

The rules live here, on the rooms server, not in the bridge:
- only the person mints a code (with their own token), for one bridge and one chat account;
- the code works once, within `CODE_SECONDS`, only for the bridge it names and only from the chat
  account it names (so a code that leaks into a public room cannot be redeemed by someone else);
- a bridge relays a chat message as the claimed person only while the claim is active, only into
  rooms the bridge itself is a member of, and only for claims made through that bridge; any other
  chat account is an outsider, posted as the bridge user with the account written in front;
- the person, the bridge or an admin revokes a claim; a newer claim of the same chat account
  supersedes an older one.

Each bridge's claims are one ledger case (`rooms.claims.<bridge user id>`), decided through
`Ledger.update`, so that two redemptions of one code decide once."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from signoff.kernel.clock import utc_iso
from signoff.kernel.errors import NotFoundError, RefusedError, UsageError
from signoff.kernel.ids import new_id
from signoff.ledger import Event, NewEvent
from signoff.rooms.domain import tokens
from signoff.rooms.domain.approvals import Approvals
from signoff.rooms.domain.identities import Identities
from signoff.rooms.domain.membership import Membership
from signoff.rooms.domain.messages import Messages
from signoff.rooms.domain.model import Principal, check_text
from signoff.rooms.domain.receipts import Receipt
from signoff.rooms.storage.store import RoomStore

CODE_SECONDS = 600.0
MAX_WAITING_CODES = 5  # unused, unexpired codes per person and bridge
CASE_PREFIX = "rooms.claims."
MAX_EXTERNAL_ID = 255
SERVER_RECORDED = frozenset({"bridge", "external_id", "claim_id"})  # of a relayed answer
# Matrix's user id grammar: a localpart of printable ASCII but ':' and '@' (historical ids allow
# more than a-z0-9._=-/+), then a server name (a host name or an IP literal, and a port). Nothing else:
# the account id is recorded with every relayed post and answer.
MATRIX_USER = re.compile(r"@[\x21-\x39\x3b-\x3f\x41-\x7e]+:(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(:[0-9]{1,5})?\Z")
_BAD_CODE = ("this claim code is unknown, already used, expired, or for another account or bridge",
             "ask for a new code (`signoff bridge matrix claim-code`) and send it from the account it names")


@dataclass
class Code:
    code_id: str
    code_hash: str
    user_id: str
    external_id: str
    expires_at: float
    claim_id: str | None = None  # the claim it made, once used


@dataclass
class Claim:
    claim_id: str
    bridge_user_id: str
    user_id: str
    external_id: str
    made_at: str
    revoked_at: str | None = None
    revoked_by: str | None = None
    reason: str | None = None

    @property
    def active(self) -> bool:
        return self.revoked_at is None


@dataclass
class BridgeClaims:
    codes: list[Code] = field(default_factory=list)
    claims: dict[str, Claim] = field(default_factory=dict)

    def active_for(self, external_id: str) -> Claim | None:
        return next((c for c in self.claims.values() if c.active and c.external_id == external_id), None)


def fold(bridge_user_id: str, history: list[Event]) -> BridgeClaims:
    state = BridgeClaims()
    for event in history:
        p = event.payload
        if event.type == "claim.code_issued":
            state.codes.append(Code(p["code_id"], p["code_hash"], p["user_id"], p["external_id"],
                                    float(p["expires_at"])))
        elif event.type == "claim.made":
            for code in state.codes:
                if code.code_id == p["code_id"]:
                    code.claim_id = p["claim_id"]
            state.claims[p["claim_id"]] = Claim(p["claim_id"], bridge_user_id, p["user_id"], p["external_id"],
                                                event.recorded_at)
        elif event.type == "claim.revoked":
            claim = state.claims[p["claim_id"]]
            claim.revoked_at, claim.revoked_by, claim.reason = event.recorded_at, p["by"], p["reason"]
    return state


def check_external_id(external_id: Any) -> str:
    """A Matrix user id, `@localpart:server` (people on Slack or Mattermost reach us through a
    Matrix bridge, so their accounts have one too)."""
    if not isinstance(external_id, str) or len(external_id) > MAX_EXTERNAL_ID or not MATRIX_USER.match(external_id):
        raise UsageError(f"{str(external_id)[:80]!r} is not a chat account id",
                         "pass the account's full id, e.g. @alice:example.org")
    check_text("account id", external_id, allow_newlines=False)
    return external_id


def outsider_text(external_id: str, text: str) -> str:
    """An unclaimed account's message as the bridge posts it. The leading `@` is dropped so that
    who spoke can never address an agent: only the words typed can mention one."""
    return f"{external_id.lstrip('@')}: {text}"


class Claims:
    def __init__(self, store: RoomStore, identities: Identities, membership: Membership, messages: Messages,
                 approvals: Approvals) -> None:
        self.store = store
        self.identities = identities
        self.membership = membership
        self.messages = messages
        self.approvals = approvals

    def _state(self, bridge_user_id: str) -> BridgeClaims:
        return fold(bridge_user_id, self.store.ledger.read(CASE_PREFIX + bridge_user_id))

    def issue_code(self, actor: Principal, bridge_name: str, external_id: str) -> dict[str, Any]:
        """A one-time code (shown once) with which `external_id` claims to be `actor`, through the
        bridge user `bridge_name`."""
        if actor.kind != "user":
            raise RefusedError("only people claim chat accounts", "use your user token, not an agent key")
        external_id = check_external_id(external_id)
        bridge = self.identities.user_by_name(bridge_name) if isinstance(bridge_name, str) else None
        if bridge is None:
            raise UsageError("name the bridge user", "pass the bridge's signoff user name")
        if bridge.id == actor.id:
            raise UsageError("a bridge does not claim accounts for itself", "mint the code with your own token")
        code = tokens.mint("claim")
        now = self.store.clock.now()
        expires_at = now + CODE_SECONDS
        code_id = new_id()

        def decide(history: list[Event]) -> tuple[list[NewEvent], list[Any]]:
            # A bridge's claims are read on every relay: nobody may pile codes into them.
            waiting = [c for c in fold(bridge.id, history).codes
                       if c.user_id == actor.id and c.claim_id is None and now < c.expires_at]
            if len(waiting) >= MAX_WAITING_CODES:
                raise RefusedError(f"you have {len(waiting)} unused claim codes for this bridge",
                                   "use one, or wait until they expire (ten minutes after each was made)")
            return [NewEvent("claim.code_issued", {
                "code_id": code_id, "code_hash": tokens.digest(code), "user_id": actor.id,
                "external_id": external_id, "expires_at": expires_at})], []

        self.store.ledger.update(CASE_PREFIX + bridge.id, decide)
        return {"code": code, "code_id": code_id, "bridge": bridge.name, "external_id": external_id,
                "expires_at": utc_iso(expires_at)}

    def redeem(self, bridge: Principal, code: str, external_id: str) -> dict[str, Any]:
        """The bridge saw `code` in a direct message from `external_id`: make the claim. Redeeming
        the same code from the same account again returns the claim it made (a bridge that
        crashed after redeeming retries safely)."""
        if bridge.kind != "user" or not isinstance(code, str) or not code or len(code) > 200:
            raise RefusedError(*_BAD_CODE)
        external_id = check_external_id(external_id)
        made: dict[str, Claim] = {}

        def decide(history: list[Event]) -> tuple[list[NewEvent], list[Any]]:
            made.clear()
            state = fold(bridge.id, history)
            found = next((c for c in state.codes if tokens.same_digest(c.code_hash, code)), None)
            if found is None or found.external_id != external_id:
                raise RefusedError(*_BAD_CODE)
            if found.claim_id is not None:
                claim = state.claims[found.claim_id]
                if not claim.active:
                    raise RefusedError(*_BAD_CODE)
                made["claim"] = claim
                return [], []
            if self.store.clock.now() >= found.expires_at:
                raise RefusedError(*_BAD_CODE)
            claim_id = new_id()
            events = [NewEvent("claim.revoked", {"claim_id": old.claim_id, "by": bridge.sender,
                                                 "reason": "superseded"})
                      for old in state.claims.values() if old.active and old.external_id == external_id]
            events.append(NewEvent("claim.made", {"claim_id": claim_id, "code_id": found.code_id,
                                                  "user_id": found.user_id, "external_id": external_id}))
            return events, []

        self.store.ledger.update(CASE_PREFIX + bridge.id, decide)
        claim = made.get("claim") or self._state(bridge.id).active_for(external_id)
        assert claim is not None
        return self._view(claim)

    def _view(self, claim: Claim) -> dict[str, Any]:
        user, bridge = self.identities.user(claim.user_id), self.identities.user(claim.bridge_user_id)
        return {"claim_id": claim.claim_id, "external_id": claim.external_id, "user_id": user.id,
                "user_name": user.name, "sender": user.sender, "bridge": bridge.name,
                "state": "active" if claim.active else "revoked", "made_at": claim.made_at,
                "revoked_at": claim.revoked_at, "reason": claim.reason}

    def _all(self) -> list[Claim]:
        out: list[Claim] = []
        for case_id in self.store.ledger.case_ids(CASE_PREFIX):
            out += self._state(case_id[len(CASE_PREFIX):]).claims.values()
        return out

    def claims(self, actor: Principal) -> list[dict[str, Any]]:
        """The claims `actor` may see: their own, those made through them (a bridge), or all (an admin)."""
        if actor.kind != "user":
            raise RefusedError("claims are listed by people", "use a user token")
        return [self._view(c) for c in self._all()
                if actor.is_admin or actor.id in (c.user_id, c.bridge_user_id)]

    def revoke(self, actor: Principal, claim_id: str) -> dict[str, Any]:
        """The claimed person, the bridge or an admin ends a claim: from now on the account is an
        outsider again. Revoking a revoked claim changes nothing."""
        claim = next((c for c in self._all() if c.claim_id == claim_id), None) \
            if actor.kind == "user" and isinstance(claim_id, str) else None
        if claim is None or not (actor.is_admin or actor.id in (claim.user_id, claim.bridge_user_id)):
            raise NotFoundError(f"no claim {str(claim_id)[:80]!r} of yours",
                                "list your claims with `signoff bridge matrix claims`")

        def decide(history: list[Event]) -> tuple[list[NewEvent], list[Any]]:
            if not fold(claim.bridge_user_id, history).claims[claim.claim_id].active:
                return [], []
            return [NewEvent("claim.revoked", {"claim_id": claim.claim_id, "by": actor.sender,
                                               "reason": "revoked"})], []

        self.store.ledger.update(CASE_PREFIX + claim.bridge_user_id, decide)
        return self._view(self._state(claim.bridge_user_id).claims[claim.claim_id])

    def _speaker(self, bridge: Principal, room_id: str, external_id: str) -> tuple[Principal | None, Claim | None]:
        """Who `external_id` is when `bridge` relays for it into `room_id`: the claimed person, or
        None (an outsider). The bridge must itself be in the room: a claim never lets it reach a
        room it could not read."""
        if bridge.kind != "user":
            raise RefusedError("only a bridge's user token relays for chat accounts", "use the bridge's user token")
        external_id = check_external_id(external_id)
        self.membership.require_read(bridge, room_id)
        claim = self._state(bridge.id).active_for(external_id)
        if claim is None:
            return None, None
        person = self.identities.user(claim.user_id)
        if tokens.live_user_token(self.store, person.id) is None:  # revoked: nobody speaks for them
            raise RefusedError(f"{external_id} speaks for {person.name}, whose token is revoked",
                               f"an admin gives them a token again: signoff rooms token rotate user {person.name}")
        return person, claim

    def relay_message(self, bridge: Principal, room_id: str, external_id: str, text: str,
                      thread_id: str | None = None) -> tuple[Receipt, dict[str, Any] | None]:
        """Post what `external_id` typed: as the claimed person (the rooms server's policies then
        see that person) or, unclaimed, as the bridge with the account written in front. Returns
        the receipt and the claim it spoke under (None: as an outsider)."""
        person, claim = self._speaker(bridge, room_id, external_id)
        if person is None or claim is None:
            return self.messages.post_message(bridge, room_id, outsider_text(external_id, text), thread_id), None
        receipt = self.messages.post_message(person, room_id, text, thread_id, via={
            "bridge": bridge.sender, "external_id": external_id, "claim_id": claim.claim_id})
        return receipt, self._view(claim)

    def relay_answer(self, bridge: Principal, request_id: str, external_id: str, option_id: str, digest: str,
                     evidence: dict[str, Any]) -> dict[str, Any]:
        """An answer to an approval card given in chat by `external_id`: decided as the claimed
        person's answer (a claimed person who is not a responder is discarded and recorded, as on
        the API). An unclaimed account is refused: nobody speaks for it. `digest` is the card's as
        the bridge showed it; `evidence` is the bridge's own (where in chat), and may not restate
        what the server records itself (which bridge, which account, which claim)."""
        if not isinstance(evidence, dict) or set(evidence) & SERVER_RECORDED:
            raise UsageError(f"evidence may not name {sorted(set(evidence) & SERVER_RECORDED)} "
                             "(the server records which bridge, account and claim relayed the answer)",
                             "send only the bridge's own evidence (e.g. the chat event id and room)")
        card = self.approvals.approval(bridge, request_id)
        person, claim = self._speaker(bridge, card.room_id, external_id)
        if person is None or claim is None:
            raise RefusedError(f"{external_id} has not claimed a signoff identity, so it cannot answer",
                               "claim the account first (`signoff bridge matrix claim-code`)")
        via = {**evidence, "bridge": bridge.sender, "external_id": external_id, "claim_id": claim.claim_id}
        return self.approvals.answer_approval(person, card.card_id, option_id, digest, via=via)
