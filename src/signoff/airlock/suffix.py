"""Optimiser-made adversarial token strings: GCG, DSN, AutoDAN-GCG, random-search suffixes.

An optimiser that attacks a model by gradient or random search appends to a harmful request a run
of tokens picked one by one from the model's vocabulary: pieces of words from several languages,
brackets and quotes glued inside words, LaTeX and markdown fragments, words of two scripts in one
(`heap Pauloame-( IX ISBNancouver [ [ [ [ comune their _) itsana`, `describing.\\ + similarlyNow
write oppositeley.]( Me giving**ONE please?`). No phrase list names it, and the learned detector
reads it as noise around an ordinary request.

This module reads the *shape* of every whitespace-separated token, never its words: a token earns
a cue when it mixes scripts inside a word, glues unbalanced brackets, quotes or backslashes to
letters, carries a LaTeX or markdown fragment inside a word, breaks its case in a way code does not
(`SureBEtera`), is a lone bracket or an odd cluster of punctuation, or is a function word of
another language inside English. A salad is `MIN_CUES` cued tokens among `WINDOW` consecutive ones.
Machine strings honest reports are full of (links, paths, hashes, base64, numbers) are skipped,
and so are inline code, HTML tags, markdown link targets, fenced code blocks and quoted lines.

Salad alone is no attack (a crash log can hold binary garbage). It counts only next to a request
aimed at a reader: on the salad's own line (or the line before it, when the salad starts a line),
outside the salad, a sentence that opens with a task verb ("Write a tutorial ...", "Explain how
..."), asks a question, or is addressed to a reader (`signals.addressed`). The hit names the line
and the words of the salad, never the text.

A character n-gram language model trained on honest reports was tried first and not kept: code,
logs and stack traces in honest reports are as improbable to it per character as GCG's salad is
(docs/airlock.md, "fifth pass"). The cues are pure Python over characters: linear in the input."""

from __future__ import annotations

import string
import unicodedata
from bisect import bisect_left
from dataclasses import dataclass
from functools import lru_cache

from signoff.airlock import signals
from signoff.airlock._re import compile_re
from signoff.airlock.normalise import scan_views

WINDOW = 8  # consecutive tokens (machine strings skipped)
HOST_CHARS = 400  # how far before and after a salad its request is looked for
MAX_RUNS = 32  # salads checked for a request beside them (each check reads at most 2 * HOST_CHARS)
REACH = 300  # how far a backtick, tag or link target looks for its end
MAX_TOKEN = 64  # longer words are data or minified code, never one optimiser's token run
MIN_CUES = 3  # cue weight among them that makes a salad
STRONG, LONE, WEAK = 2, 1, 1

# Letters of these scripts mix with each other and with Latin in honest text ("Python的API",
# "Pythonで", "Python은"), so only other mixes are cues.
_EAST_ASIAN = frozenset({"CJK", "HIRAGANA", "KATAKANA", "HANGUL", "HALFWIDTH", "IDEOGRAPHIC"})
_CODE_MARKS = frozenset('"\\()[]{}<>$^|`')
_STRONG_MARKS = frozenset('"\\[]{}<>$^|`;')  # not parentheses: "(“normal”", "framework)?" are prose
_ASCII_LETTERS = frozenset(string.ascii_letters)
_PLAIN = frozenset(string.ascii_letters + string.digits + ".,;:!?'-")
_PLAIN_TEXT = _PLAIN | frozenset(" \t\n")
_HEXISH = frozenset("0123456789abcdefABCDEFxX:.-_#")
_BASE64ISH = frozenset(string.ascii_letters + string.digits + "+/=_-%")
_LATIN, _NONE = frozenset({"LATIN"}), frozenset[str]()
# mu, and the micro sign, take the script of the word they stand in: Latin in "10μs", Greek in
# "αυτοματοποιημένης" (read as Latin, it made every Greek word with a mu a word of two scripts)
MICRO = frozenset("\u03bc\u00b5")
_OPENERS = {")": "(", "]": "[", "}": "{", ">": "<"}
_LONE_PROSE = frozenset(
    "- -- --- — – * ** | || # ## ### #### > >> = == + & / ... … • → ← -> <- => <= >= --> <-- ~ ( ) : ; , . ? ! "
    "` ``` $ % \" ' « » ¡ ¿ · × ÷ ± +1 -1 :) :-) ;) [x] [X] [] {} () === !== != && || += -= :: ::: "
    "<= >= << >> ?? ?. */ /* // -> $ ${ }} {{ }; });".split()
) - {"[", "]", "(", ")"}
# clusters honest prose and code write all the time
_COMMON_CLUSTERS = frozenset(
    '), ). ); ): ", ". ") (" [" "] \' \') (\' \', \'. () [] {} ." ," ?" !" .) ?) !) :) ;) ("" ""). '
    '(` `) `, `. `: `( ]( [` `] ` ( ) [ ] { } " ; ." ),'.split()
)
_OPERATORS = ("==", "!=", "&&", "||", "=>", "+=", "-=", "::", "->", "<=", ">=", "++")
_PAIRS = frozenset("() [] {} <> ([]) ({}) [{}] (). (), (); [], ]. ). ]) {}, </ /> ()) ((".split())
_LATEX_PIECES = ("usepackage", "newcommand", "documentclass", "textrm", "tikz", "mathbf", "mathrm", "begin{", "\\(")
_MARKUP_PIECES = ("](", "![", "{%", "%{", "$(", "^{", "_{", "**")
# function words of other languages that are not English words too (no "die", "also", "come")
FOREIGN = frozenset(
    "und der das ein eine einer nicht ist mit auf aus dieser diese auch oder wenn nach bei kein sind wird werden "
    "etwa zum zur het een deze kunnen niet tussen zijn worden naar ook les des une avec pour dans voir soit "
    "toujours quelque sont cette mais los las una para cuando nuevo pero porque muy sobre también della degli "
    "che sono comune questo anche perché dois não uma com mais przed jest się dla oraz który nebo jsou vagy hogy "
    "egy och inte att för".split()
)
_ENGLISH = frozenset("the a an to of and is are for with on that this it in be by as or not you your".split())
_BRACKET = frozenset('()[]{}"')
_SPECIAL = frozenset("`<({")
_COMMENT_MARKS = ("# ", "// ")
_REQUEST = compile_re(
    r"^(?:please |now |also |then |so |and )?(?:write|create|develop|design|draft|compose|generate|produce|"
    r"provide|give|explain|describe|outline|list|tell|show|teach|instruct|publish|post|suggest|offer|share|"
    r"build|code|program|craft|make|plan|detail|summari[sz]e|translate|help|convince|persuade|encourage|"
    r"can you|could you|would you|will you|i want you|i need you|how (?:to|do|can|would|should|does))\b",
    ignore_case=True,
)


@dataclass(frozen=True, slots=True)
class Salad:
    first_line: int  # 1-based lines of the text where the salad starts and ends
    last_line: int
    first_word: int  # 1-based words of those lines (every word counted) where it starts and ends
    last_word: int
    cues: int  # the strongest window's cue weight

    def where(self) -> str:
        if self.first_line == self.last_line:
            return f"token salad, line {self.first_line}, words {self.first_word}-{self.last_word}"
        start, end = f"line {self.first_line} word {self.first_word}", f"line {self.last_line} word {self.last_word}"
        return f"token salad, {start} to {end}"


@dataclass(frozen=True, slots=True)
class _Token:
    line: int
    word: int  # 1-based position among the line's words
    start: int  # offsets in the line
    end: int
    cue: int
    weak: bool  # the cue is broken case only
    english: bool
    foreign: bool
    scripts: frozenset[str]


def find(text: str) -> Salad | None:
    """The first salad next to a request aimed at a reader, or None."""
    if set(text) <= _PLAIN_TEXT:
        return None  # letters, digits, sentence punctuation: no cue but broken case can be there
    lines, comments = text.split("\n"), frozenset[int]()
    if "```" in text or "~~~" in text:  # comments are read only inside fenced blocks
        lines, comments = _comments_blanked(lines)
    tokens = _tokens(lines, comments)
    for run_start, run_end, cues in _runs(tokens)[:MAX_RUNS]:
        first, last = tokens[run_start], tokens[run_end]
        if _beside_request(lines, first, last):
            return Salad(first.line + 1, last.line + 1, first.word, last.word, cues)
    return None


def _comments_blanked(lines: list[str]) -> tuple[list[str], frozenset[int]]:
    """The lines with the marker of every whole-line comment inside a fenced block blanked (`# `,
    `// `), and those lines' numbers: a comment is prose, and salad hides in it as in prose."""
    out, comments, fenced = list(lines), set(), False
    for number, line in enumerate(lines):
        stripped = line.lstrip()
        if stripped.startswith(("```", "~~~")):
            fenced = not fenced
        elif fenced and stripped.startswith(_COMMENT_MARKS) and not stripped.startswith(("#!", "#include", "#define")):
            marker = 2 if stripped.startswith("//") else 1
            at = len(line) - len(stripped)
            out[number] = line[:at] + " " * marker + line[at + marker :]
            comments.add(number)
    return out, frozenset(comments)


# A Python traceback pasted without a fence: a frame's header, the source line under it, and the
# exception's own line after the last frame are code and a program's message, not a sentence
# ("raise self.__createException(status, responseHeaders, output)" is no optimiser's salad).
_FRAME = compile_re(r'^\s*File "[^"]+", line [0-9]+(?:, in \S+)?\s*$')
_EXCEPTION_LINE = compile_re(r"^[A-Za-z_][\w.]*(?:Error|Exception|Warning|Exit|Interrupt|Fault)\b[^\n]*$")


def _traceback_lines(lines: list[str]) -> frozenset[int]:
    """The numbers of the lines of unfenced Python tracebacks: frame headers, the source line under
    each, and the exception line that closes them."""
    out: set[int] = set()
    state = ""  # "frame": a header was read, its source line is next; "source": a frame is complete
    for number, line in enumerate(lines):
        if _FRAME.search(line) is not None:
            out.add(number)
            state = "frame"
        elif state == "frame" and line.strip():
            out.add(number)  # the frame's source line (the scan reads text whose indentation is gone)
            state = "source"
        elif state == "source" and _EXCEPTION_LINE.search(line.strip()) is not None:
            out.add(number)
            state = ""
        else:
            state = ""
    return frozenset(out)


def _tokens(lines: list[str], comments: frozenset[int] = frozenset()) -> list[_Token]:
    out: list[_Token] = []
    fenced = False
    traceback = _traceback_lines(lines) if any('File "' in line for line in lines) else frozenset()
    for number, line in enumerate(lines):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            continue
        if (fenced and number not in comments) or line.lstrip().startswith(">"):  # code, quoted mail
            continue
        if number in traceback:
            continue
        line = _neutralised(line)
        unmatched = _unmatched(line)
        pieces = line.split()
        # a line of code (minified JavaScript, a pasted condition) writes operators; salad hardly does
        code = any(operator in line for operator in _OPERATORS) and (
            sum(1 for piece in pieces if any(operator in piece for operator in _OPERATORS)) >= 2
        )
        position = 0
        for word, piece in enumerate(pieces, start=1):
            start = line.index(piece, position)
            position = start + len(piece)
            token = _token(piece, number, word, start, unmatched, code)
            if token is not None:
                out.append(token)
    return out


def _token(piece: str, line: int, word: int, start: int, unmatched: list[int], code: bool) -> _Token | None:
    """One word's cues, or None for a machine string (skipped: it is no word of a sentence)."""
    if len(piece) > MAX_TOKEN:
        return None  # a salad's pieces are short; minified code, data and links are long
    known = _plain_piece(piece)
    if known is None:
        return None
    end = start + len(piece)
    if known:  # letters, digits and sentence punctuation: read once per distinct word
        cue, weak, scripts, english, foreign = known
        return _Token(line, word, start, end, cue, weak, english, foreign, scripts)
    if _machine(piece):
        return None
    at = bisect_left(unmatched, start)
    cue, weak = _cued(piece, at < len(unmatched) and unmatched[at] < end, code)
    scripts = frozenset(_window_script(ch) for ch in piece if ch.isalpha() and ch not in MICRO)
    bare = piece.strip(".,;:!?\"'()[]{}*_`").casefold()
    return _Token(line, word, start, end, cue, weak, bare in _ENGLISH, bare in FOREIGN, scripts)


@lru_cache(maxsize=16384)  # reports repeat their words: each distinct one is read once
def _plain_piece(piece: str) -> tuple[int, bool, frozenset[str], bool, bool] | tuple[()] | None:
    """(cue, weak, scripts, English, foreign) of a word of letters, digits and sentence punctuation
    (its cues depend on the word alone: only broken case is possible), None for a machine string
    among them (a number, a hash), () for any other word (its cues depend on its line)."""
    chars = set(piece)
    if not chars <= _PLAIN:
        return ()
    if not chars.isdisjoint(string.digits) and _machine(piece):
        return None
    cue, weak = (WEAK, True) if broken_case(piece) else (0, False)
    scripts = _LATIN if not chars.isdisjoint(_ASCII_LETTERS) else _NONE
    bare = piece.strip(".,;:!?\"'()[]{}*_`").casefold()
    return cue, weak, scripts, bare in _ENGLISH, bare in FOREIGN


def _runs(tokens: list[_Token]) -> list[tuple[int, int, int]]:
    """(first index, last index, weight) of each maximal run of windows that hold a salad. Counts
    are prefix sums, so a window costs the same whatever its size; most are rejected at once."""
    shape, weak, english, foreign, other, gaps = ([0] for _ in range(6))
    for index, token in enumerate(tokens):
        shape.append(shape[-1] + (0 if token.weak else token.cue))
        weak.append(weak[-1] + (token.cue if token.weak else 0))
        english.append(english[-1] + token.english)
        foreign.append(foreign[-1] + token.foreign)
        other.append(other[-1] + (not token.scripts <= _LATIN))
        gap = index + 1 < len(tokens) and tokens[index + 1].line - token.line > 1
        gaps.append(gaps[-1] + gap)
    runs: list[tuple[int, int, int]] = []
    for end in range(WINDOW - 1, len(tokens)):
        start = end - WINDOW + 1
        strong = shape[end + 1] - shape[start]
        scripts = 0
        if other[end + 1] > other[start]:
            # three scripts or more among eight words: no honest sentence writes Latin, Hangul and Arabic
            window = tokens[start : end + 1]
            scripts = 2 * max(0, len(frozenset().union(*(token.scripts for token in window))) - 2)
        if strong + scripts < STRONG or gaps[end] > gaps[start]:
            continue  # only broken case and foreign words (camelCase in a JavaScript report), or a gap
        # a function word of another language counts only inside English
        foreign_words = foreign[end + 1] - foreign[start] if english[end + 1] - english[start] >= 2 else 0
        weight = strong + scripts + weak[end + 1] - weak[start] + foreign_words
        if weight < MIN_CUES:
            continue
        if runs and runs[-1][1] >= start - 1:
            first, _, best = runs[-1]
            runs[-1] = (first, end, max(best, weight))
        else:
            runs.append((start, end, weight))
    # a salad is its cued words: the words of the request around them stay outside it
    trimmed = []
    for first, last, best in runs:
        cued_at = [i for i in range(first, last + 1) if tokens[i].cue or tokens[i].foreign]
        if cued_at:
            trimmed.append((cued_at[0], cued_at[-1], best))
    return trimmed


def _beside_request(lines: list[str], first: _Token, last: _Token) -> bool:
    before = lines[first.line][: first.start][-HOST_CHARS:]
    after = lines[last.line][last.end :][:HOST_CHARS]
    if word_count(before) < 3 and first.line > 0:
        before = (lines[first.line - 1] + " " + before)[-HOST_CHARS:]
    for host in (before, after):
        if word_count(host) >= 3 and aimed(host):
            return True
    return False


def aimed(host: str) -> bool:
    sentences = [s.strip() for s in host.replace("? ", "?\n").replace(". ", ".\n").replace("! ", "!\n").split("\n")]
    sentences = [s for s in sentences if s]
    if any(_REQUEST.search(sentence) is not None or sentence.endswith("?") for sentence in sentences):
        return True
    views = [scan_views(sentence) for sentence in sentences]
    return any(signals.addressed([plain for plain, _ in views], [folded for _, folded in views]))


def word_count(text: str) -> int:
    return sum(1 for piece in text.split() if sum(ch.isalpha() for ch in piece) >= 2)


def _neutralised(line: str) -> str:
    """The line with the markup honest reports and docs write blanked out (every other character
    becomes `0`, a number, which is skipped; spaces and offsets stay): inline code in backticks,
    HTML tags and comments, markdown link targets, attribute lists (`{.internal-link}`)."""
    if not any(mark in line for mark in _SPECIAL):
        return line  # nothing to blank: the common line, found by C-speed substring checks
    chars: list[str] | None = None
    done = 0  # everything before this offset is decided
    for i in [i for i, ch in enumerate(line) if ch in _SPECIAL]:  # plain loops: C-speed enough
        if i < done:
            continue
        end = _markup_end(line, i)
        if end < 0:
            continue
        chars = chars if chars is not None else list(line)
        for j in range(i, end + 1):
            if not chars[j].isspace():
                chars[j] = "0"
        done = end + 1
    return line if chars is None else "".join(chars)


def _markup_end(line: str, i: int) -> int:
    """Where the markup opening at `i` ends (inclusive), or -1; every search stops after REACH."""
    ch = line[i]
    if ch == "`":
        ticks = 1
        while ticks < 8 and line[i + ticks : i + ticks + 1] == "`":
            ticks += 1
        end = line.find("`" * ticks, i + ticks, i + REACH)
        return end + ticks - 1 if end >= 0 else -1
    if ch == "<" and line.startswith("<!--", i):
        end = line.find("-->", i, i + REACH)
        return end + 2 if end >= 0 else -1
    if ch == "<" and (line[i + 1 : i + 2].isalpha() or line[i + 1 : i + 2] == "/"):
        end = line.find(">", i, i + REACH)
        inner = line[i + 1 : end].lstrip("/")
        name = inner.split(" ", 1)[0]
        if end < 0 or "<" in inner or not name.isalnum() or (" " in inner and "=" not in inner):
            return -1  # `a < b`, `\\<VERSION`: no tag
        return end
    if ch == "(" and line[i - 1 : i] == "]":  # a link's target; its text stays
        end = line.find(")", i, i + REACH)
        target = line[i + 1 : end]
        return end if end >= 0 and " " not in target and any(mark in target for mark in "/.#") else -1
    if ch == "{" and line[i + 1 : i + 2] in (".", "#", ":"):
        end = line.find("}", i, i + 80)
        return end if end >= 0 and "{" not in line[i + 1 : end] else -1
    return -1


# --- the shape of one token ---------------------------------------------------------------------


def _machine(token: str) -> bool:
    """Links, paths, addresses, hashes, base64, numbers: honest reports are full of them."""
    if "://" in token or token[:4].lower() == "www." or token.count("/") + token.count("\\") >= 2:
        return True
    core = token.strip(".,;:()[]<>\"'`")
    if not core:
        return False
    chars = set(core)
    if "@" in chars and "." in core.rpartition("@")[2]:
        return True
    digits = sum(map(str.isdigit, core))
    if chars <= _HEXISH and digits >= 2:
        return True  # hex, hashes, versions, times, numbers
    if len(core) >= 16 and chars <= _BASE64ISH and digits:
        return True  # base64, tokens, ids
    return digits > 0 and not any(map(str.isalpha, core))


def _unmatched(line: str) -> list[int]:
    """Offsets (sorted) of the brackets and double quotes of a line that nothing closes or opens:
    a markdown link's text or a parenthesis spans words, a salad's brackets pair with nothing."""
    out: list[int] = []
    if not any(mark in line for mark in _BRACKET):
        return out
    stack: list[int] = []
    quote = -1
    for i in [i for i, ch in enumerate(line) if ch in _BRACKET]:
        ch = line[i]
        if ch in "([{":
            stack.append(i)
        elif ch in _OPENERS:
            if stack and line[stack[-1]] == _OPENERS[ch]:
                stack.pop()
            else:
                out.append(i)
        else:
            quote = i if quote < 0 else -1
    out.extend(stack)
    if quote >= 0:
        out.append(quote)
    return sorted(out)


def _cued(token: str, unbalanced: bool, code: bool) -> tuple[int, bool]:
    """The weight of a token's cue, and whether it is broken case only: `STRONG` for what honest
    text hardly ever writes inside a word (two scripts, glued unbalanced marks, a LaTeX or markdown
    fragment), `LONE` for a lone bracket or odd punctuation, `WEAK` for broken case, which code
    and chat also write. On a line of code only two scripts in a word count."""
    if not any(ch.isalnum() for ch in token):
        lone = not code and len(token) <= 4 and token.isascii() and token not in _LONE_PROSE
        return (LONE if lone else 0), False
    if _mixed_script(token):
        return STRONG, False
    if code or any(operator in token for operator in _OPERATORS):
        return 0, False
    if _code_glue(token, unbalanced) or _fragment(token):
        return STRONG, False
    return (WEAK, True) if broken_case(token) else (0, False)


@lru_cache(maxsize=8192)  # a text repeats its letters: the Unicode name is looked up once each
def script_of(ch: str) -> str:
    if ch.isascii():
        return "LATIN"
    name = unicodedata.name(ch, "")
    first = name.split(" ", 1)[0].split("-", 1)[0]  # KATAKANA-HIRAGANA PROLONGED SOUND MARK
    return "EAST ASIAN" if first in _EAST_ASIAN else first


def _window_script(ch: str) -> str:
    """Scripts as a window counts them: Hangul apart from Chinese and Japanese."""
    script = script_of(ch)
    if script == "EAST ASIAN" and "\uac00" <= ch <= "\ud7af":
        return "HANGUL"
    return script


def _mixed_script(token: str) -> bool:
    """Letters of two scripts inside one word (`Alfмичеnon`, `منزلriamemoized`); East Asian scripts
    with each other or next to Latin are honest ("Python的API")."""
    word: set[str] = set()
    for ch in token + " ":
        if ch in MICRO:
            continue
        if ch.isalpha():
            word.add(script_of(ch))
            continue
        others = word - {"LATIN", "EAST ASIAN"}
        if len(word - {"EAST ASIAN"}) > 1 or (others and "EAST ASIAN" in word):
            return True
        word = set()
    return False


def _code_glue(token: str, unbalanced: bool) -> bool:
    """Brackets, quotes, backslashes or `$ ^ | ;` glued to letters the way code never writes them: a
    cluster of marks that do not pair (`({`, `"))`, `{%`, `\\]`) or any cluster in a token whose
    brackets do not balance (`dois]=setAttribute^{+sizeof`, `kindly({\\printf)$.`, `vue'],`). A
    call or an index that closes (`require('lodash'),`, `a[i]`) is code, and `"word",` is prose."""
    clusters: list[str] = []
    run: list[str] = []
    for ch in token.replace("*", "").replace("_", "") + " ":  # markdown emphasis is prose
        if ch.isalnum() or ch == " ":
            if run:
                clusters.append("".join(run))
                run = []
        else:
            run.append(ch)
    # a call or an index that closes at once is code: `"Pool()"`, `x[]`
    clusters = [c.replace("()", "").replace("[]", "").replace("{}", "") for c in clusters]
    odd = [c for c in clusters if c not in _COMMON_CLUSTERS and any(ch in _STRONG_MARKS for ch in c)]
    if not odd:
        return False
    if unbalanced:
        return True
    # a backslash glued to other punctuation (`representation\,`, `println\]`) escapes nothing
    return any(
        (len({ch for ch in c if ch in _CODE_MARKS}) >= 2 or ("\\" in c and len(c) > 1)) and c not in _PAIRS for c in odd
    )


def _fragment(token: str) -> bool:
    """LaTeX or markdown inside a word (`$(ttoEnglishusepackage`, `oppositeley.](`, `giving**ONE`)."""
    lowered = token.lower()
    for i in range(len(token) - 2):
        if token[i] == "\\" and token[i + 1].isalpha() and token[i + 2].isalpha():
            return True  # \usepackage, \textrm (a \n escape has one letter)
    if any(piece in lowered for piece in _LATEX_PIECES):
        return True
    for piece in _MARKUP_PIECES:
        at = token.find(piece)
        if at > 0 and (piece != "**" or (token[at - 1].isalpha() and token[at + 2 : at + 3].isalpha())):
            return True  # opening mid-word: `oppositeley.](`, `giving**ONE`, `Klaus...{%`
    return False


def broken_case(token: str) -> bool:
    """Case that code does not write: a capital run inside a lowercase word (`SureBEtera`,
    `nonINSTár`) or two words glued with no code around them (`similarlyNow` in prose is one,
    `setAttribute(` is code)."""
    if token.islower() or token.isupper() or any(ch in token for ch in "._()=:/#@$"):
        return False
    letters = "".join(ch if ch.isalpha() else " " for ch in token).split()
    for run in letters:
        if not run[0].islower():
            continue  # brands are capitalised: JavaScript, NodeJS, DevTools, GitHub
        for i in range(2, len(run) - 1):
            if run[i - 1].islower() and run[i - 2].islower() and run[i].isupper() and run[i + 1].islower():
                return True  # similarlyNow, cheerEn, mismatchInst; macOS is a name
    return False
