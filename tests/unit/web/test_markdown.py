"""Markdown on the pages, from the attacker's side: no raw HTML (script tags, event attributes,
anchors) becomes markup, no link leads anywhere but http(s), mailto or this server, and a
stranger's links are shown as text with their address."""

from __future__ import annotations

import re

import pytest

from signoff.web.markdown import markdown

HOSTILE = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    '<a href="https://evil.example" onclick="steal()">click</a>',
    "<svg/onload=alert(1)>",
    '<div style="position:fixed">overlay</div>',
    "<iframe src=https://evil.example></iframe>",
    "`code` <details open ontoggle=alert(1)>",
]
BAD_LINKS = [
    "javascript:alert(1)",
    "JAVASCRIPT:alert(1)",
    "java&#x09;script:alert(1)",
    "&#106;avascript:alert(1)",
    "java%0ascript:alert(1)",
    "vbscript:msgbox(1)",
    "data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==",
    "file:///etc/passwd",
    "//evil.example/phish",
    "/\\evil.example",
]


def _tags(html: str) -> set[str]:
    return set(re.findall(r"<([a-z][a-z0-9]*)", html))


@pytest.mark.parametrize("text", HOSTILE)
def test_raw_html_is_text(text: str) -> None:
    html = markdown(text)
    assert _tags(html) <= {"p", "code"}, html
    assert not re.search(r"<[^>]*\son[a-z]+=", html)


@pytest.mark.parametrize("url", BAD_LINKS)
@pytest.mark.parametrize("form", ["[click me]({})", "<{}>", "[click me][r]\n\n[r]: {}"])
def test_links_that_lead_elsewhere_stay_text(url: str, form: str) -> None:
    html = markdown(form.format(url))
    assert "<a " not in html, html


def test_images_load_nothing() -> None:
    assert "<img" not in markdown("![tracker](https://evil.example/pixel.png)")


@pytest.mark.parametrize("url", ["https://example.org/a?b=1", "http://example.org", "mailto:sec@example.org",
                                 "/bugs/BUG-0001", "#f1", "notes/v1.2"])
def test_ordinary_links_work_and_say_whose_they_are_not(url: str) -> None:
    html = markdown(f"[see]({url})")
    assert re.fullmatch(r'<p><a href="[^"]+" rel="nofollow noopener noreferrer">see</a></p>\n', html), html


def test_markdown_formats() -> None:
    html = markdown("# Notes\n\nA **bold** move.\n\n- one\n- two\n\n```\n<b>x</b>\n```")
    assert "<h1>Notes</h1>" in html and "<strong>bold</strong>" in html and "<li>one</li>" in html
    assert "<pre><code>&lt;b&gt;x&lt;/b&gt;\n</code></pre>" in html


def test_a_strangers_links_are_text_with_their_address() -> None:
    html = markdown("Logs at [our portal](https://evil.example/login) and <https://evil.example/x>.", links=False)
    assert "<a " not in html
    assert "our portal &lt;https://evil.example/login&gt;" in html
    assert markdown("[x](javascript:alert(1))", links=False) == "<p>[x](javascript:alert(1))</p>\n"


def test_nothing_is_empty() -> None:
    assert markdown(None) == "" and markdown("") == ""


def test_headings_start_below_the_page_heading_they_sit_under() -> None:
    assert markdown("# Notes\n\n## Facts", under=2) == "<h3>Notes</h3>\n<h4>Facts</h4>\n"
    assert markdown("###### deep", under=3) == "<h6>deep</h6>\n"
