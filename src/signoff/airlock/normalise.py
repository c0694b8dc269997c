"""Normalisation: one canonical reading of untrusted text, and the folded views the scanner reads.

`normalise(text)` returns
- `text`: NFKC, invisible characters removed, whitespace collapsed -- what a dossier shows;
- `plain`: `text` case-folded with accents stripped from Latin letters (Cyrillic, Devanagari and
  other scripts keep theirs) -- what the multilingual rules read;
- `folded`: `plain` with confusable lookalikes (Cyrillic or Greek letters posing as Latin) and
  digit-for-letter spellings ("1gn0re") folded to Latin -- what the English rules read;
- `hidden`: how many invisible characters of each kind were removed, and `smuggled`: ASCII hidden
  in Unicode tag characters, decoded, so the scanner can read it too.

The folded views are for scanning only: they are never stored or shown."""

from __future__ import annotations

import unicodedata
from collections import Counter
from dataclasses import dataclass, field

from signoff.airlock._re import compile_re

# Invisible characters by kind. Zero-width joiners are legitimate inside emoji sequences and some
# scripts (Persian, Indic); they are still removed for scanning, but only count as *suspicious*
# where they split Latin letters (see `_suspicious`).
_ZERO_WIDTH = frozenset(
    [0x200B, 0x200C, 0x200D, 0x2060, 0x2061, 0x2062, 0x2063, 0x2064, 0xFEFF, 0x180E, 0x00AD, 0x034F,
     0x115F, 0x1160, 0x3164, 0xFFA0]
)
_BIDI = frozenset([0x200E, 0x200F, 0x061C, *range(0x202A, 0x202F), *range(0x2066, 0x206A)])
_BIDI_OVERRIDES = frozenset([*range(0x202A, 0x202F), *range(0x2066, 0x206A)])
_TAG_RANGE = range(0xE0000, 0xE0080)
_VARIATION = frozenset([*range(0xFE00, 0xFE10), *range(0xE0100, 0xE01F0)])
_LINE_BREAKS = {"\r\n": "\n", "\r": "\n", "\u2028": "\n", "\u2029": "\n", "\x85": "\n", "\x0b": "\n"}

# Lookalikes, keyed on the original character (before case folding, since e.g. Greek capital Eta
# looks like H while small eta looks like n).
_CONFUSABLES: dict[str, str] = {
    # Cyrillic capitals and smalls
    "А": "a", "В": "b", "Е": "e", "К": "k", "М": "m", "Н": "h", "О": "o", "Р": "p", "С": "c",
    "Т": "t", "Х": "x", "У": "y", "Ѕ": "s", "І": "i", "Ј": "j", "Ү": "y", "Ԛ": "q", "Ԝ": "w",
    "а": "a", "е": "e", "о": "o", "р": "p", "с": "c", "у": "y", "х": "x", "і": "i", "ј": "j",
    "ѕ": "s", "һ": "h", "ԁ": "d", "ԛ": "q", "ԝ": "w", "ӏ": "l", "к": "k", "г": "r", "п": "n",
    "т": "t", "м": "m", "в": "b", "н": "h", "ь": "b", "ё": "e", "ї": "i", "ү": "y", "ɡ": "g",
    # Greek capitals and smalls
    "Α": "a", "Β": "b", "Ε": "e", "Ζ": "z", "Η": "h", "Ι": "i", "Κ": "k", "Μ": "m", "Ν": "n",
    "Ο": "o", "Ρ": "p", "Τ": "t", "Υ": "y", "Χ": "x", "α": "a", "ο": "o", "ρ": "p", "ι": "i",
    "κ": "k", "ν": "v", "υ": "u", "τ": "t", "χ": "x", "ε": "e", "γ": "y", "ω": "w", "μ": "u",
    "η": "n", "ϲ": "c", "ϳ": "j",
    # Latin and symbol lookalikes that NFKC leaves alone
    "ı": "i", "ɑ": "a", "ɩ": "i", "ℓ": "l", "ǀ": "l", "ꓲ": "i", "ꭰ": "d", "ᴀ": "a", "ʀ": "r",
    "ꜱ": "s", "ᴇ": "e", "ɪ": "i", "ɢ": "g", "ᴏ": "o", "ᴛ": "t", "ᴜ": "u", "ɴ": "n", "ᴍ": "m",
}  # fmt: skip
_CONFUSABLE_TABLE = str.maketrans(_CONFUSABLES)
_LEET = str.maketrans({"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a", "$": "s"})
_LEET_CHARS = frozenset("0134579@$")


_HIDDEN_RUN = compile_re(
    r"[\x{200B}-\x{200F}\x{2060}-\x{2064}\x{FEFF}\x{180E}\x{00AD}\x{034F}\x{115F}\x{1160}\x{3164}"
    r"\x{FFA0}\x{061C}\x{202A}-\x{202E}\x{2066}-\x{2069}\x{E0000}-\x{E007F}\x{FE00}-\x{FE0F}"
    r"\x{E0100}-\x{E01EF}]+"
)

_MARK = compile_re(r"\p{Mn}")
_MAYBE_MARKS = compile_re(r"[^\x00-\x{2FF}]+")  # combining marks start at U+0300
_FORMAT_TAG = compile_re(
    r"</?(?:b|i|u|em|strong|span|font|mark|s|del|ins|sub|sup|code|a|small|big|tt)(?: [^<>\n]{0,120})?>"
)
_EMPHASIS = str.maketrans({"*": "", "`": "", "~": "", "_": " "})
# four or more single letters separated by single spaces: "i g n o r e"
_SPACED_LETTERS = compile_re(r"\b\pL(?: \pL){3,}\b")


@dataclass(frozen=True)
class Normalised:
    text: str
    plain: str
    folded: str
    hidden: dict[str, int] = field(default_factory=dict)
    suspicious: tuple[str, ...] = ()
    smuggled: str = ""

    @property
    def hidden_total(self) -> int:
        return sum(self.hidden.values())


def normalise(text: str) -> Normalised:
    """Normalise `text` (already size- and binary-checked by the caller)."""
    for old, new in _LINE_BREAKS.items():
        text = text.replace(old, new)
    hidden: Counter[str] = Counter()
    suspicious: set[str] = set()
    smuggled: list[str] = []
    # Only the runs of invisible characters are visited in Python; the rest is one RE2 pass.
    for run in _HIDDEN_RUN.finditer(text):
        before = text[run.start - 1] if run.start > 0 else ""
        after = text[run.end] if run.end < len(text) else ""
        for ch in run.text:
            code = ord(ch)
            kind = _hidden_kind(code) or "zero_width"
            hidden[kind] += 1
            if kind == "tag":
                suspicious.add("tag")
                if 0xE0020 <= code <= 0xE007E:
                    smuggled.append(chr(code - 0xE0000))
            elif kind == "bidi" and code in _BIDI_OVERRIDES:
                suspicious.add("bidi")
            elif kind in ("zero_width", "variation_selector") and _splits_latin(before, after, code, kind):
                suspicious.add(kind)
    kept = _HIDDEN_RUN.sub("", text) if hidden else text
    shown = unicodedata.normalize("NFKC", kept)
    shown = _collapse_whitespace(shown)
    plain, folded = scan_views(shown)
    return Normalised(
        text=shown,
        plain=plain,
        folded=folded,
        hidden=dict(hidden),
        suspicious=tuple(sorted(suspicious)),
        smuggled="".join(smuggled),
    )


def scan_views(text: str) -> tuple[str, str]:
    """Just the two scanning views of already-shown text (used for decoded payloads)."""
    stripped = _strip_latin_marks(text)
    confusables = _fold_confusables(text)
    # most text has no lookalike letters: its marks are stripped once for both views
    folded_base = stripped if confusables == text else _strip_latin_marks(confusables)
    return stripped.casefold(), _fold(_deformat(folded_base.casefold()))


def _hidden_kind(code: int) -> str | None:
    if code in _ZERO_WIDTH:
        return "zero_width"
    if code in _BIDI:
        return "bidi"
    if code in _TAG_RANGE:
        return "tag"
    if code in _VARIATION:
        return "variation_selector"
    return None


def _splits_latin(before: str, after: str, code: int, kind: str) -> bool:
    """A zero-width character between two letters or digits hides a word from a reader (not between
    two Han or kana characters; joiners only between Latin ones)."""
    if kind == "variation_selector":
        if code == 0xFE0F and after == "\u20e3" and before in "0123456789":
            return False  # a keycap emoji: 1, the emoji selector, the enclosing keycap (1️⃣ open the app)
        return before.isascii() and before.isalnum()  # emoji take selectors; letters never need them
    if code == 0xFEFF and not before:
        return False  # a byte-order mark at the very start is an editor artefact
    if code == 0x00AD:
        return False  # soft hyphens are typographic
    if not (before.isalnum() and after.isalnum()):
        return False
    if code in (0x200C, 0x200D):  # joiners are needed between Persian or Indic letters, never Latin
        return _latinish(before) and _latinish(after)
    # Chinese and Japanese put no spaces between words: a zero-width space there marks where a line
    # may break and hides no word (the scanning views drop it, and phrases are read unbroken)
    return not (_cjk(before) and _cjk(after))


def _latinish(ch: str) -> bool:
    return (ch.isascii() or _is_latin(ch)) or ch in _CONFUSABLES


def _cjk(ch: str) -> bool:
    """Han ideographs and kana: scripts written without spaces between words (Korean has them)."""
    code = ord(ch)
    return 0x3040 <= code <= 0x30FF or 0x3400 <= code <= 0x9FFF or 0xF900 <= code <= 0xFAFF


def _collapse_whitespace(text: str) -> str:
    lines = [" ".join(line.split()) for line in text.split("\n")]
    out: list[str] = []
    blank = 0
    for line in lines:
        if not line:
            blank += 1
            if blank > 1:
                continue
        else:
            blank = 0
        out.append(line)
    return "\n".join(out).strip("\n")


def _is_latin(ch: str) -> bool:
    code = ord(ch)
    return code < 0x250 or 0x1E00 <= code <= 0x1EFF


def _strip_latin_marks(text: str) -> str:
    if text.isascii():
        return text
    decomposed = unicodedata.normalize("NFD", text)
    if _MARK.search(decomposed) is None:
        return text
    out: list[str] = []
    base_is_latin = False
    cursor = 0
    # only characters from U+0300 on can be combining marks: the runs before them are copied whole,
    # and the last of a run is the base the marks after it sit on
    for run in _MAYBE_MARKS.finditer(decomposed):
        if run.start > cursor:
            out.append(decomposed[cursor : run.start])
            last = decomposed[run.start - 1]
            base_is_latin = _is_latin(last) and last.isalpha()
        for ch in run.text:
            if unicodedata.category(ch) == "Mn":
                if base_is_latin:
                    continue  # accents and stacked "zalgo" marks on Latin letters
                out.append(ch)
                continue
            base_is_latin = _is_latin(ch) and ch.isalpha()
            out.append(ch)
        cursor = run.end
    out.append(decomposed[cursor:])
    return unicodedata.normalize("NFC", "".join(out))


def _fold_confusables(text: str) -> str:
    return text if text.isascii() else text.translate(_CONFUSABLE_TABLE)


def _deformat(text: str) -> str:
    """Formatting an attacker can wrap words in: inline HTML tags, markdown emphasis, under_scores,
    s p a c e d letters. Removed in the folded view only (the plain view keeps chat-template markers)."""
    if "<" in text:
        text = _FORMAT_TAG.sub("", text)
    if any(ch in text for ch in "*`~_"):
        text = text.translate(_EMPHASIS)
    if _SPACED_LETTERS.search(text) is not None:
        text = _SPACED_LETTERS.sub_fn(lambda run: run.replace(" ", ""), text)
    return "\n".join(" ".join(line.split()) for line in text.split("\n"))


def _fold(text: str) -> str:
    """Undo digit-for-letter spellings, but only inside words that also have letters."""
    if not any(ch in _LEET_CHARS for ch in text):
        return text
    words = text.split(" ")
    for i, word in enumerate(words):
        # two letters, or one letter and two digits-for-letters ("7h15"): "p0" and "v2" are words in
        # their own right ("sev1" is read on the plain view)
        if _LEET_CHARS.isdisjoint(word):
            continue
        leet = sum(ch in _LEET_CHARS for ch in word)
        letters = sum(ch.isalpha() for ch in word)
        if letters >= 2 or (letters == 1 and leet >= 2):
            words[i] = word.translate(_LEET)
    return " ".join(words)
