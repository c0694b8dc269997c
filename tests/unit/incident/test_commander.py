"""The commander's reasoning over the notary's comparisons with three organisations: every pair is
compared, and the root cause names which organisations share a behaviour. Real fingerprints of raw
bytes, compared by a real notary."""

from __future__ import annotations

from typing import Any

from signoff.incident.fingerprint import fingerprint
from signoff.incident.notary import Notary
from signoff.incident.rootcause import Finding, events_to_compare, pairs_to_compare, root_cause

ESCAPED = b'{"id":"e1","name":"Jos\\u00e9"}'  # the signer's bytes: \u-escaped
RAW = '{"id":"e1","name":"José"}'.encode()  # what a re-serialising verifier hashes


def comparisons(sent: dict[str, bytes]) -> list[dict[str, Any]]:
    notary = Notary()
    issued = notary.open_incident("INC-0001")
    fps = {org: dict(fingerprint("e1", raw, issued.salt, issued.incident), org=org) for org, raw in sent.items()}
    orgs = list(sent)
    return [notary.compare(fps[a], fps[b]).as_json() for i, a in enumerate(orgs) for b in orgs[i + 1:]]


def test_every_pair_is_compared_once_every_organisation_has_disclosed() -> None:
    orgs = ("payco", "shopco", "railco")
    two = {"e1": {"payco": "D-PAY-1", "shopco": "D-SHOP-1"}}
    assert pairs_to_compare(orgs, two) is None  # railco has not disclosed yet: nothing compared
    three = {"e0": {"payco": "D-PAY-2"}, "e1": {**two["e1"], "railco": "D-RAIL-1"}}
    assert pairs_to_compare(orgs, three) == ("e1", [("D-PAY-1", "D-SHOP-1"), ("D-PAY-1", "D-RAIL-1"),
                                                   ("D-SHOP-1", "D-RAIL-1")])


def test_two_verifiers_share_the_bug_against_one_signer() -> None:
    orgs = ["payco", "shopco", "railco"]
    done = comparisons({"payco": ESCAPED, "shopco": RAW, "railco": RAW})
    assert root_cause(orgs, done[:2]) is None  # a pair still being compared: no cause yet
    found = root_cause(orgs, done)
    assert found is not None and found.field == "name"
    assert found.cause == ("name is 4 bytes longer as payco signed it: payco signs JSON with \\u-escaped non-ASCII "
                           "characters and shopco and railco verify a re-serialised body with raw UTF-8, so the "
                           "HMACs differ for accented names.")
    assert "name: shared by shopco and railco: they match each other and each differs from payco" in found.hypotheses
    assert "payco vs railco: name: 4 bytes longer on payco's side; \\u-escaped by payco only; fits 1 non-ASCII " \
           "character(s) at +4 bytes each (\\uXXXX vs 2-byte UTF-8)" in found.hypotheses


def test_two_signers_share_the_escaping_whichever_order_they_are_configured_in() -> None:
    orgs = ["shopco", "payco", "railco"]
    found = root_cause(orgs, comparisons({"shopco": RAW, "payco": ESCAPED, "railco": ESCAPED}))
    assert found is not None and found.cause is not None
    assert found.cause.startswith("name is 4 bytes longer as payco and railco signed it: payco and railco sign JSON "
                                  "with \\u-escaped non-ASCII characters and shopco verifies")
    assert "name: shared by payco and railco: they match each other and each differs from shopco" in found.hypotheses


def test_no_cause_when_the_pairs_do_not_split_the_organisations_in_two() -> None:
    other = b'{"id":"e1","name":"Jose"}'  # a third, different value: every pair differs
    found = root_cause(["payco", "shopco", "railco"], comparisons({"payco": ESCAPED, "shopco": RAW, "railco": other}))
    assert found is not None and found.cause is None and found.hypotheses


def test_two_organisations_keep_the_demo_s_cause() -> None:
    found = root_cause(["payco", "shopco"], comparisons({"payco": ESCAPED, "shopco": RAW}))
    assert found is not None
    assert found.cause == ("name is 4 bytes longer as payco signed it: payco signs JSON with \\u-escaped non-ASCII "
                           "characters and shopco verifies a re-serialised body with raw UTF-8, so the HMACs differ "
                           "for accented names.")
    assert found.hypotheses == ["name: 4 bytes longer on payco's side; \\u-escaped by payco only; fits 1 non-ASCII "
                                "character(s) at +4 bytes each (\\uXXXX vs 2-byte UTF-8)"]


def test_a_number_written_with_other_digits_is_proposed_from_what_was_measured() -> None:
    """No escape on either side (Jackson's BigDecimal `42.50` against a re-serialised float `42.5`):
    the cause names the field, its type and each side's byte count, and claims nothing else."""
    found = root_cause(["kestrel", "mosaik"], comparisons({"kestrel": b'{"lines":[{"p":1},{"p":42.50}],"n":"\xc3\xb8"}',
                                                           "mosaik": b'{"lines":[{"p":1},{"p":42.5}],"n":"\xc3\xb8"}'}))
    assert found is not None and found.field == "lines[1].p"
    assert found.cause == ("lines[1].p: a number, 5 bytes as kestrel has it, 4 as mosaik has it. kestrel writes this "
                           "field with other bytes than mosaik for the same event, so a signature over one side's "
                           "bytes does not verify over the other's.")
    assert found.hypotheses == ["lines[1].p: 1 byte longer on kestrel's side; a number on both sides: fits the same "
                                "value written with other digits (trailing zeros, an exponent, another precision)"]


def test_bodies_that_differ_only_between_their_fields_are_a_cause_too() -> None:
    """A CRLF or a byte order mark (measured before the document) changes no field, only the body."""
    for sent in ({"a": b'{"p":1}\r\n', "b": b'{"p":1}\n'}, {"a": b'\xef\xbb\xbf{"p":1}', "b": b'{"p":1}'}):
        found = root_cause(["a", "b"], comparisons(sent))
        assert found is not None and found.field == "(between the fields)"
        assert found.cause is not None and found.cause.startswith("every field matches, but the whole body is")
        assert found.hypotheses[0].startswith("every field matches, but the bodies differ between the fields")
    assert root_cause(["a", "b"], comparisons({"a": b'{"p":1}', "b": b'{"p":1}'})) == Finding([], None, None)


def test_an_event_whose_bytes_match_everywhere_does_not_hold_the_next_one_back() -> None:
    """People asked first for an event that did not fail: its comparison proposes nothing, and the
    event they ask for next is compared too."""
    orgs = ("kestrel", "mosaik")
    by_event = {"KF-24-0411": {"kestrel": "D-KEST-2", "mosaik": "D-MOSAIK-2"},
                "KF-24-0413": {"kestrel": "D-KEST-3", "mosaik": "D-MOSAIK-3"}, "KF-24-0414": {"mosaik": "D-MOSAIK-4"}}
    assert events_to_compare(orgs, by_event) == [("KF-24-0411", [("D-KEST-2", "D-MOSAIK-2")]),
                                                 ("KF-24-0413", [("D-KEST-3", "D-MOSAIK-3")])]
    same = comparisons({"kestrel": b'{"p":42.5}', "mosaik": b'{"p":42.5}'})
    assert root_cause(orgs, same) == Finding([], None, None)
