"""A room message's body as the page reads it: text stays text; a protocol message is a summary in
words with its exact JSON kept; hostile values are escaped either way."""

from __future__ import annotations

import json

from signoff.web.message_body import body_html, read_body


def test_plain_text_is_shown_as_sent() -> None:
    for text in ("fixed in 3f2a", "{not json", "[1, 2", "  indented\nlines "):
        assert read_body(text) == (None, text)


def test_a_protocol_message_reads_as_words_and_keeps_its_json() -> None:
    body = {"action": "propose_fix", "case_id": "c-1", "attempt": 1, "base": "f" * 40, "command_id": "9" * 24,
            "ok": True, "diff": "x\n" * 50}
    found = read_body(json.dumps(body))
    assert found.summary == "Propose fix · attempt: 1 · case id: c-1 · ok: yes"
    assert json.loads(found.raw) == body


def test_other_shapes() -> None:
    assert read_body('{"a": 1, "b": "two"}').summary == "Structured message (2 fields) · a: 1 · b: two"
    assert read_body("[1, 2, 3]").summary == "Structured message: a list of 3 items"
    assert read_body('"just a string"').summary is None


def test_hostile_values_are_escaped() -> None:
    html = body_html(json.dumps({"type": "<img src=x onerror=alert(1)>", "x": "</pre><script>1</script>"}))
    assert "<img" not in html and "<script>" not in html and "</pre><script>" not in html
    assert body_html("<b>hi</b>") == '<p class="body">&lt;b&gt;hi&lt;/b&gt;</p>\n'
