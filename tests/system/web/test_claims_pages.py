"""The chat-accounts page: a signed-in person mints a claim code for their Matrix account, sees the
claim once the bridge redeemed it, and revokes it; a bad id, a forged form or someone else's claim
is an error page that changes nothing."""

from __future__ import annotations

import html

from signoff.rooms import RoomService
from signoff.rooms.client import InProcessUserTransport, RoomsUserClient
from tests.system.web.conftest import Clients, csrf_of, sign_in


def test_mint_a_code_see_the_claim_and_revoke_it(service: RoomService, clients: Clients) -> None:
    _, bridge_token = service.create_user("matrix-bridge", external=True)
    client = clients()
    assert sign_in(client) == 303
    minted = client.post("/claims/codes", data={"csrf": csrf_of(client, "/claims"),
                                                "external_id": "@alice:example.org", "bridge": "matrix-bridge"})
    assert minted.status_code == 200
    code = html.unescape(minted.text.split('<pre id="claim-code">claim ', 1)[1].split("</pre>", 1)[0])
    bridge = RoomsUserClient(InProcessUserTransport(service, bridge_token))
    claim = bridge.redeem_claim(code, "@alice:example.org")  # the direct message, as the bridge passes it on

    listed = client.get("/claims").text
    assert "@alice:example.org" in listed and "active" in listed and code not in listed  # shown once only
    revoked = client.post("/claims/revoke", data={"csrf": csrf_of(client, "/claims"), "claim_id": claim["claim_id"]})
    assert revoked.status_code == 303 and revoked.headers["location"] == "/claims"
    assert [c["state"] for c in bridge.claims()] == ["revoked"]


def test_bad_input_is_an_error_page_and_changes_nothing(service: RoomService, clients: Clients) -> None:
    service.create_user("matrix-bridge", external=True)
    bob, _ = service.create_user("bob")
    code = service.claims.issue_code(bob, "matrix-bridge", "@bob:example.org")["code"]
    bobs = service.claims.redeem(service.user_by_name("matrix-bridge"), code, "@bob:example.org")
    client = clients()
    assert sign_in(client) == 303
    head = service.ledger.head()
    csrf = csrf_of(client, "/claims")
    for path, data, status, text in (
            ("/claims/codes", {"csrf": csrf, "external_id": "alice"}, 400, "is not a chat account id"),
            ("/claims/codes", {"csrf": "forged", "external_id": "@alice:example.org"}, 403, "CSRF"),
            ("/claims/codes", {"csrf": csrf, "external_id": "@a:x", "bridge": "nobody"}, 404, "no user named"),
            ("/claims/revoke", {"csrf": csrf, "claim_id": bobs["claim_id"]}, 404, "of yours")):
        answer = client.post(path, data=data)
        assert answer.status_code == status and text in html.unescape(answer.text), (path, data)
        assert "Traceback" not in answer.text
    assert service.ledger.head() == head
