"""Markdown as the pages show it (advisory notes, the release notes preview, reporters' text):
markdown-it-py's CommonMark with raw HTML off, so `<script>`, `<a id>` or an `onerror=` attribute
are text on the page, never markup; images off (a page loads nothing a text names); and links
validated: only http(s), mailto and addresses on this server become links; anything else
(`javascript:`, `data:`, `vbscript:`, a scheme hidden by entities or control characters) stays
text. Links open with `rel="nofollow noopener noreferrer"`.

Untrusted text (a reporter's, after the airlock) is rendered with `links=False`: its links are
shown as text with their address beside them, so no click on the page goes where a stranger chose
without the reader seeing where."""

from __future__ import annotations

from collections.abc import Sequence

from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict
from markupsafe import Markup, escape

SAFE_SCHEMES = ("http://", "https://", "mailto:")


def safe_link(url: str) -> bool:
    """An address a page may link to: http(s), mailto, or a path on this server (never `//host`,
    which is another server). markdown-it has decoded entities and percent-encoded what it must
    before it asks, so the text checked is the one the browser would follow; control characters,
    spaces and backslashes are refused."""
    if any(ord(c) < 0x21 or c == "\\" for c in url):
        return False
    lowered = url.lower()
    if lowered.startswith(SAFE_SCHEMES):
        return True
    if lowered.startswith(("//", "/%5c")):  # another server; `/\` (encoded), which some browsers read as `//`
        return False
    before_path = lowered.split("/", 1)[0].split("?", 1)[0].split("#", 1)[0]
    return ":" not in before_path  # a relative address: no scheme of its own


def _link_open(self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
    token = tokens[idx]
    token.attrSet("rel", "nofollow noopener noreferrer")
    return self.renderToken(tokens, idx, options, env)


def _as_text_open(self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
    return ""


def _as_text_close(self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
    # The address a link named, after its text: found by walking back to its opening token.
    depth = 0
    for token in reversed(tokens[:idx]):
        if token.type == "link_close":
            depth += 1
        elif token.type == "link_open":
            if depth == 0:
                return f" &lt;{escape(str(token.attrGet('href') or ''))}&gt;"
            depth -= 1
    return ""


def _parser(links: bool) -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.disable("image")
    md.enable("table")
    md.validateLink = safe_link  # type: ignore[method-assign]
    if links:
        md.add_render_rule("link_open", _link_open)
    else:
        md.add_render_rule("link_open", _as_text_open)
        md.add_render_rule("link_close", _as_text_close)
    return md


_TRUSTED_LINKS, _TEXT_LINKS = _parser(True), _parser(False)


def markdown(text: str | None, links: bool = True, under: int = 0) -> Markup:
    """`text` (Markdown) as safe HTML; with `links=False`, links as text with their address.
    `under`: the level of the page's heading the text sits under; the text's own headings start
    below it (a `#` under an h2 is an h3), so the page's outline stays whole."""
    if not text:
        return Markup("")
    md = _TRUSTED_LINKS if links else _TEXT_LINKS
    tokens = md.parse(text, {})
    for token in tokens:
        if token.type in ("heading_open", "heading_close") and under:
            token.tag = f"h{min(6, int(token.tag[1]) + under)}"
    return Markup(md.renderer.render(tokens, md.options, {}))  # noqa: S704 -- html off, links checked
