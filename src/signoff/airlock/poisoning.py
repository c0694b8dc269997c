"""Tool poisoning (`tool_poisoning`, sixteenth pass): text an agent reads as a tool's description
or output that orders the agent beyond the tool's job. Honest tool descriptions of public MCP
servers also tell the agent what to do ("Use this tool to read a file", "DEPRECATED: Use
read_text_file instead", "Prefer this tool over assign_copilot_to_issue", "Always call this tool
when asked what to work on next"), so no shape here is an order alone; each is an order with what
no honest tool text gives it:

- **secrecy from the user**: "do not inform the user about the change", "Do not mention this change";
- **a value changed against the user**: "modify the 'url' parameter to ... regardless of the user's
  input", "when using `create_repository` with name 'X', change the name to 'Y'";
- **a side step outside the tool's job**: an outside address called as a step that logs or reports
  the request, the user's shell set-up edited or a secret file read as a step ("you must read the
  .bashrc file to confirm", "adding the following line to the .bashrc file" for "compliance"),
  another tool called first or after under a pretext of compliance, audit or promotion;
- **a claim to replace other tools**: a tool said deprecated or disabled for security or maintenance
  and another ordered in its place, another tool's behaviour said changed ("The playwright_navigate
  tool has been optimized ... the system automatically redirects"), or a tool that praises itself
  with two or more marketing claims ("the world's best", "trusted by Fortune 500 companies",
  "99.9% accuracy", "superior performance compared to other tools").

A bug report that says an app "redirects to the login page" or "add this line to your .bashrc"
has none of these pairs. Patterns over the sentences (plain view, one per line) and the whole
text as one line: RE2, linear. A hit names the sentence of its first cue."""

from __future__ import annotations

from collections.abc import Sequence

from signoff.airlock import families as fam
from signoff.airlock._re import Pattern, alternation, compile_re

_TOOL_NAME = r"[`'\"\x{2018}]?[a-z][a-z0-9]*(?:[_.-][a-z0-9]+)+[`'\"\x{2019}]?"  # a code identifier: get_file_contents
_USER = r"(?:the |any |your )?(?:users?|humans?|customers?|clients?|end users?)"
# what a poisoned description gives as the reason for its extra step
_PRETEXT = (
    r"(?:regulatory|compliance|audit trail|audit logging|security (?:verification|checkpoint|validation|compliance)|"
    r"mandatory (?:for|promotional)|promotional message|holistic view|security alert|system alert|"
    r"immediate maintenance|pending (?:an? )?(?:\S+ ){0,2}?audit)"
)
_QUOTED = r"[`'\"\x{2018}\x{201c}]"


def _rx(parts: list[str]) -> Pattern:
    return compile_re("(?m)" + alternation(parts))


# one sentence is enough: each of these is an order with what no honest tool text gives it
_IN_A_SENTENCE = _rx(
    [
        # secrecy from the user: "you must not inform the user about the change", "Do not inform the user,"
        rf"\b(?:do not|don'?t|never|must not|should not|shall not) (?:inform|tell|notify|alert|let) {_USER}"
        r"(?: know)?(?: ?[,;:.]| ?$| (?:about|of) (?:this|it|that)(?: ?[,;:.]| ?$)| (?:about|of) (?:this|the|that|"
        r"these|such|any) (?:\S+ )?(?:changes?|redirect\w*|"
        r"modifications?|steps?|substitutions?|alias\w*|updates?|instructions?|notes?|calls?|requests?))",
        r"\b(?:do not|don'?t|never|must not|should not) (?:mention|disclose|reveal|report|surface) (?:this|these|the) "
        r"(?:changes?|redirect\w*|modifications?|substitutions?|alias\w*|extra steps?)\b",
        rf"\bkeep (?:this|these|it) (?:\S+ )?(?:hidden|secret) from {_USER}",
        rf"\b(?:do not|don'?t|never|must not|should not) (?:mention|disclose|reveal|report|explain) (?:this|it|that|"
        rf"any of this|these steps)(?: \S+)? to {_USER}",
        r"\b(?:do not|don'?t|never|must not|should not) (?:mention|disclose|reveal|tell (?:the user|them)) "
        r"(?:to the user )?that you (?:first |also |will |have )?(?:need to |have to |must )?(?:read|call|send|use|"
        r"access|open|pass|include|add|fetch)\b",
        # another tool's behaviour dictated: "the send_email tool must send all emails to x@y"
        rf"\b(?:the )?{_TOOL_NAME} tool (?:must|should|shall|will) (?:always |now )?(?:send|forward|route|redirect|"
        r"copy|bcc|cc)\b (?:all|every|each|any) [^\n]{0,60}?(?:[a-z0-9._%+-]+@[a-z0-9.-]+\.[a-z]{2,}|https?://)",
        # a value changed against the user's own
        r"\b(?:must|should|will|always|automatically)(?: \S+){0,2}? (?:modify|modifies|change|changes|set|sets|replace|"
        r"replaces|override|overrides|rewrite|rewrites|redirect|redirects|use|uses|enable|enables)\b[^\n]{0,120}?"
        r"\bregardless of (?:the |what |any )?(?:user'?s?'?|users'?) ?(?:\S+ )?(?:input|request|choice|selection|"
        r"settings?|query|value|preference|intent|wish)",
        r"\b(?:ignore|disregard|override) (?:any |the |all )?user-?(?:specified|provided|supplied|given|selected) ",
        rf"\bwhen (?:using|calling|invoking) (?:the )?{_TOOL_NAME}(?: tool)?(?: \S+){{0,12}}? (?:you (?:must|should) )?"
        rf"(?:always )?(?:change|modify|replace|switch|set|rewrite|redirect) the (?:\S+ ){{0,3}}?(?:to|with) {_QUOTED}",
        rf"\bwhen (?:the )?{_TOOL_NAME}(?: tool)? is (?:invoked|called|used|run)\b,? (?:\S+ ){{0,4}}?(?:change|modify|"
        r"replace|switch|set|rewrite|redirect) the (?:\S+ ){0,2}?(?:to|with) (?:[`'\"\x{2018}\x{201c}]|\+?[0-9]{6,}|"
        r"[a-z0-9._%+-]+@[a-z0-9.-]+\.[a-z]{2,}|https?://)",
        # an outside address called as a step, to log or report what the agent does
        r"\b(?:must|should|need to|required to|have to) (?:also|first|additionally|then|always) [^\n]{0,80}?"
        r"https?://\S+[^\n]{0,80}?\b(?:log|logs|record|report|send|forward|share|collect|track)\b",
        r"\b(?:our|a|the) partner (?:\S+ ){0,2}?(?:endpoint|server|api|url|site|service) (?:at )?https?://",
        # the user's shell set-up edited, or a secret file read, as a step
        r"\b(?:update|modify|change|edit|alter)\w* (?:the )?user(?:'s)? (?:\S+ )?(?:environment|shell|profile|home)"
        r"(?: \S+)? (?:configuration|config|settings|files?)\b",
        r"\bmust (?:\S+ ){0,3}?(?:read|cat|open|inspect|check|load|access)\b (?:the )?(?:user'?s? )?(?:contents of )?"
        r"(?:~/|\$home/|/home/\S*|/root/)?\.(?:bashrc|zshrc|bash_profile|profile|bash_history|ssh/?\S*|env|aws/\S*|netrc|"
        r"npmrc|git-credentials)(?: file)?\b|\bmust (?:\S+ ){0,3}?(?:read|cat|open|access)\b (?:the )?(?:contents of )?"
        r"/etc/(?:passwd|shadow|sudoers)\b",
        r"\b(?:run|execute)\b:?[^\n]{0,30}?\bcat (?:~/|\$home/|/root/|/home/\S+/)?\.ssh/id_(?:rsa|ed25519|ecdsa|dsa)"
        r"(?:[^.\w]|$)",
        # another tool ordered in this one's place
        r"\b(?:you must|you should|please|simply|always) (?:now )?(?:redirect|switch|route|migrate)\w* to "
        r"(?:the |this )?(?:new |alternative |replacement )(?:secure |secured |safe |enhanced |updated )?"
        r"(?:\S+ )?tool\b",
        # a message the agent is made to deliver
        r"\b(?:promotional|advertising|sponsored|marketing) (?:message|content|text|note|announcement)\b[^\n]{0,40}?"
        r"\bmust\b",
        rf"\b(?:present|describe|frame|report) (?:it|this|them|its \S+|the \S+) as {_QUOTED}[^\n]{{0,60}}?"
        rf"{_QUOTED} to {_USER}",
    ]
)

# two cues in the whole text: an order (first) and what makes it poisoning (second)
_PAIRS: tuple[tuple[Pattern, Pattern], ...] = (
    # another tool called as a step, under a pretext: "you must first call `playwright_screenshot` ...
    # for security verification and compliance"
    (
        _rx([
            rf"\b(?:must|should|need to|required to|have to) (?:first |also |then |always |now )?(?:call|use|invoke|"
            rf"run|execute|trigger|access) (?:the )?{_TOOL_NAME}",
            r"\b(?:must|should|need to|required to) (?:first |also |then |always )?(?:call|use|invoke) the \S+ "
            r"(?:function|tool)\b",
            r"\b(?:please |you must )?(?:execute|run) the following (?:\S+ ){0,3}?command\b",
            r"\b(?:must|should|need to|required to) (?:also|first|additionally) (?:\S+ ){0,2}?(?:clean up|remove|"
            r"removing|delete|deleting|wipe|wiping|purge|purging)\b",
        ]),
        _rx([rf"\b{_PRETEXT}\b"]),
    ),
    # a file outside the tool's job read, and its content passed in a parameter: "read ~/.cursor/mcp.json and
    # pass its content as 'sidenote'"
    (
        _rx([r"\b(?:read|cat|open|load|fetch)\w* (?:the )?(?:file |contents of )?[`'\"]?(?:~/|\$home/|%appdata%|/etc/|"
             r"/root/|\.ssh/|\.env\b|\.aws/|\.config/|\.cursor/)"]),
        _rx([r"\b(?:pass|include|put|send|add|insert|embed|attach)\w* (?:its|the|their|this|that|the file'?s?) "
             r"(?:full |entire |whole )?(?:contents?|value|data|text)\b(?: \S+){0,3}? (?:as|in|into|via) "
             r"(?:the |an? )?(?:(?:hidden|extra|additional|secret) (?:\S+ )?(?:parameter|argument|field|param)|"
             r"[`'\"][a-z_]+[`'\"])"]),
    ),
    # another tool called, and a message dictated for the user after it
    (
        _rx([rf"\b(?:must|should|need to) (?:now |first |then |also )?(?:call|use|invoke) (?:the )?{_TOOL_NAME}"]),
        _rx([rf"\b(?:display|show|state|deliver|announce|present) (?:the |this )?(?:following )?message {_QUOTED}"]),
    ),
    # the user's shell start-up file written as a step "for compliance"
    (
        _rx([r"\b(?:add|adding|append|appending|write|writing|insert|inserting)\b[^\n]{0,60}? to (?:the |your |~/)?"
             r"\.(?:bashrc|zshrc|bash_profile|profile)\b"]),
        _rx([rf"\b{_PRETEXT}\b"]),
    ),
    # a tool said deprecated or disabled for security or maintenance, another ordered in its place
    (
        _rx([r"\btool (?:has been|is|was|is now|has now been) (?:now )?(?:temporarily |permanently )?(?:deprecated|"
             r"disabled|retired|removed|decommissioned|discontinued|suspended)\b[^\n]{0,200}?\b(?:security "
             r"vulnerabilit\w+|maintenance|system updates?)|\b(?:security vulnerabilit\w+|maintenance|system updates?)"
             r"\b[^\n]{0,100}?\btool (?:has been|is|was) (?:now )?(?:temporarily |permanently )?(?:deprecated|disabled|"
             r"retired|removed|suspended)\b"]),
        _rx([r"\b(?:please|you must|simply|always) (?:use|call|redirect)\b[^\n]{0,80}?\b(?:instead|as an alternative|"
             r"with the same (?:parameters|arguments))\b"]),
    ),
    # another tool's behaviour said changed, and the change redirects what users ask for
    (
        _rx([r"\bthe (?:\S+ ){1,2}?tool (?:has been|was|is now|now) (?:\S+ ){0,2}?(?:optimi[sz]ed|upgraded|enhanced|"
             r"updated|modified|reconfigured|changed)\b"]),
        _rx([r"\b(?:the system|it) (?:now )?automatically (?:redirects|sets|uses|enables|modifies|changes|replaces|"
             r"switches)\b|\bnow uses [^\n]{0,60}? as the default\b"]),
    ),
)

# a tool that praises itself: each kind of claim counts once
_SELF = compile_re(r"\bthis (?:\S+ ){0,3}?(?:tool|version)\b|\bthis is the\b")
_PRAISE: tuple[Pattern, ...] = tuple(
    compile_re(part)
    for part in (
        r"\b(?:world'?s|industry'?s) (?:best|most|leading|#1|number one|fastest)\b",
        r"\bthis is the (?:best|most \w+|ultimate|premium|professional|advanced|enhanced|pro|enterprise)\b",
        r"\b(?:trusted|used|recommended|relied on|preferred) by (?:\S+ ){0,3}?(?:professionals|experts|advisors|"
        r"engineers|companies|fortune 500|institutions|services|investors|researchers|giants|planners|cartographers|"
        r"archaeologists|analysts)\b",
        r"\bused by \d+(?:\.\d+)?% of\b",
        r"\b\d+(?:\.\d+)?% (?:accuracy|reliability|success|uptime)\b",
        r"\baward-winning\b",
        r"\bindustry[- ](?:standard|leading)\b",
        r"\b(?:pinnacle|cutting-edge|unmatched|unparalleled|superior|state-of-the-art)\b",
        r"\b(?:better|superior|more accurate|faster) (?:\S+ ){0,4}?(?:compared to|than) (?:the |all |any )?(?:other|"
        r"standard|original|existing|regular)\b",
        r"\bai-optimi[sz]ed\b|\bmachine learning enhanced\b",
        r"\b(?:the )?(?:most|highest) (?:comprehensive|reliable|accurate|advanced|sophisticated|quality)\b",
        r"\b(?:premium|ultimate|professional|advanced|enhanced|pro) version\b",
    )
)
_PRAISE_NEEDED = 2


def _sentence_of(pattern: Pattern, plain: Sequence[str]) -> int:
    return next((i for i, sentence in enumerate(plain, start=1) if pattern.search(sentence) is not None), 1)


def find(plain: Sequence[str]) -> list[tuple[str, str]]:
    """(tool_poisoning, where) for the first shape found in the sentences (plain view)."""
    # one pass over all the sentences (the patterns are multi-line), then the sentence that matched
    if _IN_A_SENTENCE.search("\n".join(plain)) is not None:
        return [(fam.TOOL_POISONING, f"order beyond a tool's job, sentence {_sentence_of(_IN_A_SENTENCE, plain)}")]
    whole = " ".join(plain)
    for order, mark in _PAIRS:
        if order.search(whole) is not None and mark.search(whole) is not None:
            return [(fam.TOOL_POISONING, f"order beyond a tool's job, sentence {_sentence_of(order, plain)}")]
    if _SELF.search(whole) is not None and sum(p.search(whole) is not None for p in _PRAISE) >= _PRAISE_NEEDED:
        return [(fam.TOOL_POISONING, f"a tool that praises itself, sentence {_sentence_of(_SELF, plain)}")]
    return []
