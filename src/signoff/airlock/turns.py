"""Fake turns of a conversation: orders behind a role label.

A model reads its prompt as turns: the user's instruction, the data, its own response. An attacker
who writes into the data ends it with a fake turn: a fake response (`### response:`, `[chatbot
output]:`, `Assistant Output:`) and then a fake user turn (`### instruction:`, `'''user task''':`,
`<|Prompter Rule|>:`) carrying the order, so the model takes the order as the next thing its user
asked ("completion" attacks, StruQ; Willison's "fake completion"). Chat-template tokens
(`<|im_start|>`, `[INST]`) are named by the pattern rules; this module reads the label *lines*,
whatever delimiters decorate them (`###`, `***`, `'''`, `<|`, `[|`) and whatever case or typo:

- a **label line** is a line that holds only a role and a kind of turn, 1 to 3 words from two short
  lists (roles: user, human, prompter, system, assistant, AI, bot, GPT ...; kinds: instruction,
  command, rule, prompt, task, response, output, answer, reply, input, data ...), set off by a colon
  or by decoration. "Expected output:" and "Steps to reproduce" are not: they have other words;
- it sits on the **assistant's side** (an assistant role, or a response, output, answer or reply)
  or on the **user's side** (a user or system role, or an instruction, command, rule, prompt or
  task);
- a fake turn is a **user's-side label that follows an assistant's-side one** (the conversation
  turned back to the user after a fake answer) or a fake end of the data (`</user_input>`,
  `[/DATA]`, `--- END OF DOCUMENT ---`; not "END OF LOG"), or a user's-side label that names its role and its
  kind with decoration (`***User Prompt***:`, `'''HUMAN TASK''':`; "### System" alone heads an
  issue template's environment section); in both the next line is
  **prose**: four words or more, not code, not a question (a repro's "Output:" then "Command:
  `npm run build`" is a log; a FAQ's next "Question:" asks).

Labels are read in any language's order only in English words; the order after them may be in any
language, since a label, not the order's words, makes the shape. One pass over the lines: linear.
The hit names the line of the user's-side label, never the text."""

from __future__ import annotations

from signoff.airlock import families as fam
from signoff.airlock._re import compile_re

_DECORATION = "#*'\"<>[]|(){}=~_-`"
_USER_ROLES = frozenset("user human prompter system developer operator".split())
_ASSISTANT_ROLES = frozenset("assistant ai bot chatbot gpt model llm chatgpt claude copilot".split())
_USER_KINDS = frozenset("instruction instructions command commands rule rules prompt task".split())
# a log's "Command: npm run build" and a linter's "Rule: no-undef": these are labels only when decorated
_LOG_KINDS = frozenset("command commands rule rules".split())
_ASSISTANT_KINDS = frozenset("response output answer reply completion".split())
_DATA_KINDS = frozenset("input data context text".split())
_WORDS = _USER_ROLES | _ASSISTANT_ROLES | _USER_KINDS | _ASSISTANT_KINDS | _DATA_KINDS
_DATA_NAMES = frozenset(
    "input data document documents context text report email content ticket issue untrusted".split()
)
# a line that may be a label (a colon, or decoration at either end) or a data end ("end of")
_EDGE = r"[#*'\"<>\[\]|(){}=~_\-`]"
_CANDIDATE = compile_re(rf"(?m)^[ \t]*{_EDGE}[^\n]*$|^[^\n]*(?::|{_EDGE}[ \t]*$|(?i:end of))[^\n]*$")
REACH = 40  # lines from a fake answer's label to the user's label it hands back to
MIN_PROSE = 4  # words of the order after a label
_CODE = frozenset("`{}|")
_SIMILAR = frozenset(w for w in _USER_KINDS | _ASSISTANT_KINDS if len(w) >= 6)  # typos are read in these

USER, ASSISTANT, DATA = "user", "assistant", "data"


def find(text: str) -> list[tuple[str, str]]:
    """(role_impersonation, where) for the first fake user turn in `text` (normalised), or []."""
    lines = text.split("\n")
    answered = -REACH - 1  # the line of the last assistant's-side label
    number, cursor = 0, 0
    for candidate in _CANDIDATE.finditer(text):  # most lines of a long text are no label: skipped in C
        number += text.count("\n", cursor, candidate.start)
        cursor = candidate.start
        line = candidate.text
        if _data_end(line):
            answered = number  # the data "ended": what follows is a turn of its own
            continue
        label = _label(line)
        if label is None:
            continue
        side, decorated, role_named, rest = label
        if side == ASSISTANT:
            answered = number
            continue
        if side != USER:
            continue
        turned = number - answered <= REACH
        if not (turned or (decorated and role_named)):
            continue
        order = rest or next((following for following in lines[number + 1 : number + 3] if following.strip()), "")
        if _prose(order, question=turned):
            return [(fam.ROLE_IMPERSONATION, f"fake conversation turn, line {number + 1}")]
    return []


def _data_end(line: str) -> bool:
    """A line that closes the data the reader was given: `</user_input>`, `[/DATA]`, `--- END OF
    DOCUMENT ---` (not "END OF LOG": a log's end is the report's own)."""
    stripped = line.strip().casefold()
    if len(stripped) > 60:
        return False
    if stripped[:2] in ("</", "[/") and stripped[-1:] in (">", "]"):
        name = stripped[2:-1].replace("-", "_").replace(" ", "_")
        return any(part in _DATA_NAMES for part in name.split("_"))
    words = "".join(" " if ch in _DECORATION else ch for ch in stripped).split()
    if words[:2] != ["end", "of"]:
        return False
    return len(words) <= 5 and any(word in _DATA_NAMES for word in words[2:])


def _label(line: str) -> tuple[str, bool, bool, str] | None:
    """(side, decorated, names a role, text after it on the line) of a label line, or None."""
    stripped = line.strip()
    if not stripped or (":" not in stripped and len(stripped) > 60):
        return None
    head, colon, rest = stripped.partition(":")
    decorated = head[:1] in _DECORATION or head[-1:] in _DECORATION
    words = "".join(" " if ch in _DECORATION else ch for ch in head).casefold().split()
    if decorated:  # "### reyponse:", "### instrumtion:": one letter off under a delimiter
        words = [_known(word) for word in words]
    if not words or len(words) > 3 or not all(word in _WORDS for word in words):
        return None
    rest = rest.strip(_DECORATION + " ")
    if not colon and not decorated:
        return None  # a bare word on a line is a heading
    if rest and not decorated:
        return None  # a transcript's "User: hi" and "Bot: please enter ..." are lines of a log
    # "### System" alone heads an issue template's environment: a role names a turn with its kind
    role_named = any(word in _USER_ROLES for word in words) and any(word in _USER_KINDS for word in words)
    if any(word in _USER_ROLES for word in words):
        side = USER
    elif any(word in _ASSISTANT_ROLES for word in words) or any(word in _ASSISTANT_KINDS for word in words):
        side = ASSISTANT
    elif any(word in _USER_KINDS for word in words) and (decorated or not any(word in _LOG_KINDS for word in words)):
        side = USER
    else:
        side = DATA
    return side, decorated, role_named, rest


def _known(word: str) -> str:
    """The label word `word` is one letter off from, or `word`."""
    if word in _WORDS or len(word) < 6:
        return word
    for known in _SIMILAR:
        if len(known) == len(word) and sum(a != b for a, b in zip(known, word, strict=True)) == 1:
            return known
    return word


def _prose(line: str, *, question: bool) -> bool:
    """Words of a sentence (a question only if `question`), not code: no backticks, braces or
    pipes, no assignment, no statement's semicolon, no shell prompt."""
    line = line.strip()
    if not line or (line.endswith("?") and not question) or any(ch in _CODE for ch in line):
        return False
    if " = " in line or line.endswith(";") or line.startswith(("$ ", "> ", "#", "//")):
        return False
    words = line.split()
    if sum(1 for ch in line if "\u3040" <= ch <= "\u9fff" or "\uac00" <= ch <= "\ud7af") >= 6:
        return True  # Chinese, Japanese, Korean: no spaces between words
    return len(words) >= MIN_PROSE and sum(1 for word in words if word.strip(".,;:!'\"()").isalpha()) >= 3
