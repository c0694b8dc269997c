"""The outbound guard, attacked with variants of real lines from both fixture codebases."""

from __future__ import annotations

import base64
import json
from collections import Counter
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pygments.token import Name, Number, String, is_token_subtype

from signoff.demo.incident_walkthrough import approver_for
from signoff.demo.payco_shopco.corpus import VARIANTS, code_corpus, prose_corpus, protected_lines
from signoff.demo.payco_shopco.fixture import code_files, language_of
from signoff.incident.approvals import disclosure_command
from signoff.incident.disclosure import Disclosure, draft, published_text
from signoff.incident.guard import Guard, GuardConfig, Post
from signoff.incident.notary import Notary
from signoff.incident.shapes import lexer
from signoff.incident.workspace import SHARED_ROOM, Workspace, private_room
from signoff.kernel.errors import RefusedError

ORGS = ("payco", "shopco")


@pytest.fixture()
def guards(workspace: Workspace) -> dict[str, Guard]:
    return {org: workspace.guard(org, logged=False) for org in ORGS}


def test_every_code_line_variant_is_blocked(guards: dict[str, Guard]) -> None:
    samples = code_corpus({o: code_files(o) for o in ORGS}, {o: language_of(o) for o in ORGS})
    seen = Counter(s.variant for s in samples)
    assert set(seen) == set(VARIANTS) and seen["verbatim"] > 80
    missed = [s for s in samples if guards[s.org].check_text(s.text).allowed]
    assert missed == []


@pytest.mark.parametrize("variant", ["renamed", "reformatted", "wrapped", "embedded", "base64", "hex"])
def test_signature_line_variants_name_their_rule(guards: dict[str, Guard], variant: str) -> None:
    payco_line = 'body = json.dumps(event, separators=(",", ":"), ensure_ascii=not keep_unicode).encode("utf-8")'
    shopco_line = "return Buffer.from(JSON.stringify(payload), 'utf8');"
    texts = {
        "renamed": ('out = ujson.encode(evt, seps=("a", "b"), flag=not raw).decode("x")',
                    "return Blob.of(Serial.write(thing), 'latin1');"),
        "reformatted": ("body=json.dumps( event,separators=( ',',':' ),ensure_ascii = not keep_unicode )"
                        ".encode( 'utf-8' )",
                        'return   Buffer.from( JSON.stringify( payload ) , "utf8" )'),
        "wrapped": ('body = json.dumps(\n    event,\n    separators=(",", ":"),\n    ensure_ascii=not keep_unicode,\n'
                    ').encode("utf-8")', "return Buffer.from(\n  JSON.stringify(payload),\n  'utf8'\n);"),
        "embedded": (f"we do roughly {payco_line} before signing", f"our worker does {shopco_line} then checks"),
        "base64": (base64.b64encode(payco_line.encode()).decode(), base64.b64encode(shopco_line.encode()).decode()),
        "hex": (payco_line.encode().hex(), shopco_line.encode().hex()),
    }[variant]
    rule = "encoded_code_line" if variant in ("base64", "hex") else "code_line"
    for org, text in zip(ORGS, texts, strict=True):
        verdict = guards[org].check_text(text)
        assert not verdict.allowed and rule in verdict.rules, (org, verdict)


def test_other_organisations_code_is_not_this_guards_business(guards: dict[str, Guard]) -> None:
    # PayCo's guard protects PayCo's code; plain prose about ShopCo's design passes it.
    assert guards["payco"].check_text("ShopCo's worker re-serialises the parsed payload.").allowed


def test_plain_incident_prose_passes(guards: dict[str, Guard]) -> None:
    prose = prose_corpus()
    assert len(prose) >= 150
    blocked = [(org, line, guards[org].check_text(line).rules) for line in prose for org in ORGS
               if not guards[org].check_text(line).allowed]
    assert blocked == []


@pytest.mark.parametrize(("text", "rule"), [
    ("reach me at priya.k@payco.example", "email"),
    ("the key is sk_live_4eC39HqLyjWDarjtT1zdp7dc", "secret"),
    ("export API_KEY=abc123def456", "secret"),
    ("Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2ln", "secret"),
    ("-----BEGIN OPENSSH PRIVATE KEY-----", "secret"),
    ("token 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", "token"),
    ("try Zk3mQ9xT2vLp8RwN4yHs7BcD1", "token"),
    ("the customer is José Álvarez", "customer_name"),
    ("the customer is JOSE ALVAREZ", "customer_name"),
    ("Alvarez, Jose complained", "customer_name"),
    ("name was Jos\\u00e9 \\u00c1lvarez in the body", "customer_name"),
    ("Łukasz Nowak", "customer_name"),
    ("lukasz nowak", "customer_name"),
    (base64.b64encode("customer Zoë Lindqvist".encode()).decode(), "encoded_other"),
    ("Jo\u200bsé Ál\u200dvarez", "customer_name"),  # zero-width characters inside the name
    ("Jоsé Аlvarez", "customer_name"),  # Cyrillic о and А
    ("the name is J o s e", "customer_name"),  # spelled out
    ("reach me at " + b"priya.k@payco.example".hex(), "encoded_other"),
    (base64.b64encode(b"sk_live_4eC39HqLyjWDarjtT1zdp7dc").decode(), "encoded_other"),
])
def test_content_rules(guards: dict[str, Guard], text: str, rule: str) -> None:
    for org in ORGS:
        verdict = guards[org].check_text(text)
        assert not verdict.allowed and rule in verdict.rules, (org, text, verdict)


def test_guard_holds_no_names_and_no_code(workspace: Workspace) -> None:
    raw = workspace.guard_config_path("payco").read_text(encoding="utf-8")
    assert "Álvarez" not in raw and "alvarez" not in raw and "json.dumps" not in raw and "dumps" not in raw
    cfg = GuardConfig.read(workspace.guard_config_path("payco"))
    assert cfg.protected_lines > 40 and len(cfg.name_hashes) > 60


def _approved(ws: Workspace, notary: Notary,
              text: str = "field data.customer.name differs by 8 bytes.") -> tuple[Disclosure, dict[str, Any]]:
    d = draft("payco", 1, notary.current.incident, {"rows": [{"path": "data.customer.name", "delta": 8}]}, text,
              prefix="PAY")
    m1 = ws.rooms.post("payco-agent", private_room("payco"), d.text)
    m2 = ws.rooms.post("priya", private_room("payco"), disclosure_command(d))
    record = approver_for(ws, "payco", notary).approve(d, m1, m2)
    return d, record


def test_disclosure_rules(workspace: Workspace) -> None:
    notary = Notary()
    notary.open_incident()
    guard = workspace.guard("payco")
    d = draft("payco", 1, notary.current.incident, {"rows": [{"path": "data.customer.name", "delta": 8}]},
              "field data.customer.name differs by 8 bytes.", prefix="PAY")
    published = published_text(d, workspace.parties.get("payco").approver)
    # Unapproved: the approved form, but no signed record exists yet.
    assert guard.check(Post(SHARED_ROOM, published, d)).rules == ("disclosure_unapproved",)
    # A draft may sit in the private room but not cross.
    assert guard.check(Post(private_room("payco"), d.text)).allowed
    assert "draft_outside_private_room" in guard.check(Post(SHARED_ROOM, d.text)).rules
    assert "draft_outside_private_room" in guard.check(Post("some-other-room", d.text)).rules
    # Looks like a published disclosure but carries none.
    assert "disclosure_unapproved" in guard.check(Post(SHARED_ROOM, published)).rules

    d, _ = _approved(workspace, notary)
    assert guard.check(Post(SHARED_ROOM, published_text(d, "priya"), d)).allowed
    changed_text = type(d)(d.d_id, d.incident, d.org, d.evidence, d.text.replace("8 bytes", "9 bytes"))
    assert guard.check(Post(SHARED_ROOM, published_text(changed_text, "priya"), changed_text)).rules == (
        "disclosure_altered",)
    changed_evidence = type(d)(d.d_id, d.incident, d.org, {"rows": []}, d.text)
    assert guard.check(Post(SHARED_ROOM, published_text(changed_evidence, "priya"), changed_evidence)).rules == (
        "disclosure_altered",)
    extra = published_text(d, "priya") + "\nP.S. the customer was José Álvarez"
    assert set(guard.check(Post(SHARED_ROOM, extra, d)).rules) == {"disclosure_altered", "customer_name"}
    later = workspace.guard("payco", current_incident=lambda: "INC-0099")
    assert later.check(Post(SHARED_ROOM, published_text(d, "priya"), d)).rules == ("disclosure_stale",)
    shop = draft("shopco", 1, d.incident, {"x": 1}, "shopco's", prefix="SHOP")
    assert guard.check(Post(SHARED_ROOM, published_text(shop, "sam"), shop)).rules == ("foreign_disclosure",)


def test_guard_log_has_rules_and_counts_never_text(workspace: Workspace) -> None:
    guard = workspace.guard("payco")
    marker = "José Álvarez wrote from jose@example.com with sk_live_4eC39HqLyjWDarjtT1zdp7dc"
    verdict = guard.check(Post(SHARED_ROOM, marker))
    assert not verdict.allowed
    db = workspace.records_db_path("payco")
    raw = b"".join(p.read_bytes() for p in (db, db.with_name(db.name + "-wal")) if p.exists())  # every stored byte
    assert b"guard-log" in raw  # the decision is in there
    for piece in ("José", "Jos\\u00e9", "Álvarez", "jose@", "sk_live", "wrote"):
        assert piece.encode() not in raw
    body = guard.log.records()[-1]["body"] if guard.log else {}
    assert body["rules"] == ["customer_name", "email", "secret", "token"] and body["allowed"] is False
    assert body["chars"] == len(marker)


def test_changed_guard_configuration_refuses_to_run(workspace: Workspace) -> None:
    path = workspace.guard_config_path("shopco")
    path.write_text(path.read_text().replace('"approver":"sam"', '"approver":"mallory"'))
    with pytest.raises(RefusedError, match="differs from its pin"):
        workspace.guard("shopco").check(Post(SHARED_ROOM, "hello"))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow])
@given(data=st.data())
def test_any_renaming_of_an_own_line_is_blocked(guards: dict[str, Guard], data: st.DataObject) -> None:
    org = data.draw(st.sampled_from(ORGS))
    language = language_of(org)
    lines = [ln for p in code_files(org) for _, ln in protected_lines(p.read_text(), language)]
    line = data.draw(st.sampled_from(lines))
    ident = st.from_regex(r"[a-z][A-Za-z0-9]{0,8}", fullmatch=True).map(lambda s: "v_" + s)
    names: dict[str, str] = {}
    out = []
    in_string = False
    for ttype, value in lexer(language).get_tokens(line):
        if is_token_subtype(ttype, String):
            if not in_string:
                out.append(json.dumps(data.draw(st.text(st.characters(min_codepoint=32, max_codepoint=126)))))
            in_string = True
            continue
        in_string = False
        if is_token_subtype(ttype, Name):
            out.append(names.setdefault(value, data.draw(ident)))
        elif is_token_subtype(ttype, Number):
            out.append(str(data.draw(st.integers(0, 10**6))))
        else:
            out.append(value)
    renamed = "".join(out).strip()
    verdict = guards[org].check_text(renamed)
    assert not verdict.allowed and "code_line" in verdict.rules, renamed


def test_the_guards_decision_is_pure_given_the_approvals_and_the_current_incident(guards: dict[str, Guard]) -> None:
    """`Guard.decide` reads nothing: the same post is passed or blocked by the approval records and
    the current incident it is given, and its log entry holds rules and counts, never the text."""
    from signoff.incident.model import RecordChain

    guard = guards["payco"]
    d = draft("payco", 1, "INC-0001", {"rows": [{"path": "data.customer.name", "delta": 8}]}, "Finding 1.",
              prefix="PAY")
    post = Post(SHARED_ROOM, published_text(d, "priya"), d)
    record = {"seq": 1, "prev": "0" * 64, "keyid": "k", "sig": "s",
              "body": {"d_id": d.d_id, "incident": d.incident, "approver": "priya",
                       "evidence_sha256": d.evidence_sha256, "text_sha256": d.text_sha256}}
    approved = RecordChain("payco/approvals", [record])
    verdict, entry = guard.decide(post, approved, "INC-0001")
    assert verdict.allowed and entry["d_id"] == d.d_id and "time" not in entry
    assert d.prose not in json.dumps(entry)
    assert guard.decide(post, None, "INC-0001")[0].rules == ("disclosure_unapproved",)
    assert guard.decide(post, RecordChain("payco/approvals"), "INC-0001")[0].rules == ("disclosure_unapproved",)
    assert guard.decide(post, approved, "INC-0002")[0].rules == ("disclosure_stale",)
