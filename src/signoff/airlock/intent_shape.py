"""Structural marks for the learned detector (a model trained with `--shape` only): what an
order does and whom it is for, whatever its words.

Hashed n-grams read phrasing: a bare order ("Send the deploy key to ...") and a maintainer's
request ("Please include the output of pip freeze") share their words. These marks name the
parts that tell them apart, so the weights can learn them from data: an opening imperative and
its kind (acting on assets, dictating the reader's output, asking a reporter for facts), the
reader addressed as an assistant or model, an asset or a destination in the same sentence,
orders that change the reader's output, and the marks of an honest reporter (first person,
thanks, a failure described, a filled-in value, a question). English only: other languages keep their n-grams.

Each mark is a feature string like the n-grams ("s ..."), hashed into the same buckets. Marks
were chosen from development data (the training sources and the development thirds), never from
a final or held-out set."""

from __future__ import annotations

import itertools

# Words skipped before an opening imperative: list markers are punctuation tokens already.
_SOFTENERS = frozenset(
    "please kindly now then also and just so first next finally immediately additionally important note "
    "urgent quickly simply instead afterwards after that".split()
)
# What an opening verb does. An order to act on assets or send something somewhere ...
_ACT = frozenset(
    "send forward email e-mail transfer wire pay delete remove erase wipe drop destroy grant give invite add "
    "share upload post publish push commit merge approve change reset update rotate disable revoke create "
    "download install execute run copy paste move leak exfiltrate export dump fetch visit open navigate "
    "click book buy purchase order schedule cancel unsubscribe subscribe follow star fork rename set modify "
    "insert append replace make".split()
)
# ... an order that dictates the reader's own output ...
_SAY = frozenset(
    "reply respond answer say print output write tell repeat list summarize summarise translate compose "
    "generate begin start end recommend mention state return produce act pretend roleplay imagine".split()
)
# ... and a reporter asked for facts about their own machine.
_REPORT = frozenset("fill provide attach describe include complete check try confirm verify test".split())
_ASSETS = frozenset(
    "key keys token tokens password passwords passcode credential credentials secret secrets ssh repository "
    "repositories repo repos account accounts file files folder directory database money funds payment "
    "payments wallet bitcoin btc eth crypto iban bank card message messages email emails e-mail inbox "
    "contacts calendar document documents permission permissions access collaborator collaborators owner "
    "admin webhook webhooks branch cookie cookies session otp 2fa code history data".split()
)
_DESTINATIONS = frozenset("http https www server url endpoint address webhook attacker gist pastebin".split())
_SEND = frozenset("send forward email e-mail transfer wire pay upload post share exfiltrate leak submit copy".split())
_MODELS = frozenset("ai assistant llm llms chatbot gpt chatgpt claude gemini copilot".split())
_AGENT_KINDS = frozenset("ai coding autonomous llm automated browsing web".split())
_YOU = frozenset("you your you're yours yourself".split())
_MODALS = frozenset("must should need will have shall".split())
_DICTATE = (
    ("reply", "with"), ("respond", "with"), ("respond", "only"), ("reply", "only"), ("answer", "with"),
    ("answer", "only"), ("your", "response"), ("your", "answer"), ("your", "output"), ("output", "only"),
    ("say", "only"), ("begin", "your"), ("start", "your"), ("end", "your"), ("now", "on"), ("only", "output"),
)
_FACTS = frozenset(
    "output version versions log logs traceback stack screenshot screenshots repro reproduction steps "
    "environment os browser error config configuration minimal example template details information "
    "questions freeze console trace crash platform reproduce issue bug".split()
)
_FIRST = frozenset("i i'm i've my we we're our me us".split())
_THANKS = frozenset("thanks thank great love awesome appreciate kudos amazing nice".split())
# A reporter's request comes with the failure it is about ("...; publishing fails with 403"); an
# order planted for the reader needs no reason.
_SYMPTOMS = frozenset(
    "fail fails failed failing error errors crash crashes crashed broken exception bug doesn't don't can't "
    "cannot won't didn't isn't wrong hangs freezes frozen missing empty unexpected expected actual works "
    "working warning warnings regression".split()
)


def marks(tokens: list[str]) -> list[str]:
    """The structural marks of one sentence (or a window's text), from its folded tokens."""
    words = [token for token in tokens if any(ch.isalnum() for ch in token)]
    if not words:
        return []
    present = set(words)
    out: list[str] = []
    opener, softened = _opener(words)
    kind = ""
    if opener in _ACT:
        kind = "act"
    elif opener in _SAY:
        kind = "say"
    elif opener in _REPORT:
        kind = "report"
    if kind:
        out.append("s open " + kind)
        if softened:
            out.append("s open please " + kind)
    you = bool(present & _YOU)
    model = _addresses_model(tokens, words)
    if model:
        out.append("s reader model")
    ordered = bool(kind) or (you and bool(present & _MODALS))
    if you and present & _MODALS:
        out.append("s you must")
    assets = bool(present & _ASSETS)
    if ordered and assets:
        out.append("s order asset" + (" " + kind if kind else ""))
    if present & _SEND and (present & _DESTINATIONS or "@" in tokens):
        out.append("s send somewhere" + (" ordered" if ordered else ""))
    pairs = set(itertools.pairwise(words))
    if pairs.intersection(_DICTATE):
        out.append("s dictates output")
    if model and (ordered or kind):
        out.append("s model ordered")
    facts = bool(present & _FACTS)
    if facts and (kind == "report" or softened or "could" in present or "can" in present):
        out.append("s asks facts")
    if present & _FIRST:
        out.append("s first person")
    if present & _THANKS:
        out.append("s thanks")
    if present & _SYMPTOMS:
        out.append("s symptom" + (" ordered" if ordered else ""))
    if tokens[-1] == "?":
        out.append("s question")
    if len(words) <= 4 and any(ch.isdigit() for word in words for ch in word):
        out.append("s value")
    return out


def _opener(words: list[str]) -> tuple[str, bool]:
    """The first word after list markers and softeners ("please", "now", "then"), and whether
    "please" was among them."""
    softened = False
    for word in words[:6]:
        if word == "please" or word == "kindly":
            softened = True
        if word in _SOFTENERS or word.isdigit() or len(word) == 1:
            continue
        return word, softened
    return "", softened


def _addresses_model(tokens: list[str], words: list[str]) -> bool:
    """The reader named as a model: "you"/"your" within four words of a model's name ("you are an
    AI assistant", "as a language model, you ..."), or a vocative that opens the sentence
    ("Assistant, ...", "AI agent: ..."). "agent" alone is no model ("an agent of change")."""
    named = [i for i, word in enumerate(words) if _is_model(words, i)]
    if not named:
        return False
    you = [i for i, word in enumerate(words) if word in _YOU]
    if any(abs(i - j) <= 4 for i in named for j in you):
        return True
    first = named[0]
    return first <= 2 and first + 1 < len(words) and _vocative(tokens, words[first])


def _is_model(words: list[str], i: int) -> bool:
    word = words[i]
    if word in _MODELS:
        return i + 1 >= len(words) or words[i + 1] not in ("user", "users", "developer", "developers", "team")
    if word in ("agent", "agents", "model"):
        before = words[i - 1] if i else ""
        return before in _AGENT_KINDS or before == "language"
    return False


def _vocative(tokens: list[str], name: str) -> bool:
    """The name followed by a comma or a colon: "Assistant, ...", "AI: ..."."""
    for position, token in enumerate(tokens[:-1]):
        if token == name:
            return tokens[position + 1] in (",", ":")
    return False
