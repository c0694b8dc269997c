"""Orders put before the reader's task (seventeenth pass of issue #36): the shape of an indirect
injection in content an agent reads (a forum comment, a chat message, a web page, an e-mail).

The injection does not tell the agent to drop its task; it tells it that something must be done
*first*, and that the task needs it: "you must first ..., as this is required for installing the
package", "before doing anything else, you must ...", "it is required to complete your task". A
maintainer writes the same shape to a contributor ("you must first rebase onto main, as this is
required for CI"), so the shape alone is no order to an agent. It is held only with what honest
tracker text does not give it (each cue read in the same sentence or in the few lines after it,
where a fenced command follows its "run"):

- **a harm as the step** (the family is the harm's): the reader's own files deleted, tampered
  with, hidden or locked behind a password (a file or folder directly in a home folder, ssh keys,
  `/etc`; not caches, builds or temporary folders), a local file's contents sent to the writer
  ("then send the contents to me", "reply to this post with the contents"), a stranger's key put
  into `authorized_keys`, a remote-access or security service stopped (sshd, a VPN, the
  firewall), processes or files spawned by the hundred (`destructive_action`, `exfiltration`,
  `account_takeover`);
- **the reader's task named as what the step is for** ("to complete your task", "the user's
  request"), or a **shouted urgency** said twice ("URGENT! IMPORTANT!", "IMPORTANT!!") together
  with the pretext that the step is required for something (`agent_directive`).

A hit names the sentence of the order, never its words. Patterns are RE2 over the plain view's
sentences, each window bounded, so the whole is linear in the input."""

from __future__ import annotations

from collections.abc import Sequence

from signoff.airlock import families as fam
from signoff.airlock._re import alternation, compile_re

WINDOW = 6  # sentences read after the order: "you must first run", a fence, its command, its close
SHOUTS = 2  # urgency said twice ("URGENT! IMPORTANT!"): a maintainer's single "Warning!" is no cue

# a second-person obligation put before something else: "you must first", "first, you need to",
# "it is required that you ... before", "before doing anything else"
_OBLIGATION = (
    r"(?:you (?:must|need to|have to|are required to|should|will need to|are expected to)|"
    r"(?:it is|it's) (?:required|critical|mandatory|necessary|essential|imperative|crucial) (?:that you|to|for you to))"
)
_PREREQUISITE = compile_re(
    "(?m)"
    + alternation(
        [
            rf"\b{_OBLIGATION} (?:\S+ )?(?:first|immediately|initially)\b",
            rf"\b{_OBLIGATION} (?:\S+ ){{0,8}}?(?:before|prior to) (?:you |doing |proceeding|continuing|anything|"
            r"completing|starting|performing|executing|your|the user)",
            r"\bfirst(?:ly)?,? you (?:must|need to|have to|are required to)\b",
            rf"\bbefore (?:you (?:proceed|continue|start|begin|go on|do anything)|proceeding|continuing|starting)\b"
            rf"[^\n]{{0,20}}?\b{_OBLIGATION}",
            r"\bbefore (?:you do |doing |you proceed with |proceeding with )?anything else\b",
            # the same precedence as an imperative: "Before proceeding, run ...", "Before anything else, delete ..."
            r"(?:^|[:;!] )before (?:proceeding|continuing|anything else|doing anything else|you (?:proceed|continue|"
            r"start|begin))[^\n]{0,12}?,? (?:please )?(?:run|execute|delete|remove|send|stop|disable|open|create|"
            r"add|append|encrypt|zip|move|rename|type|go to|visit|navigate to)\b",
            # "in order to comment, you must ...": the step imposed as needed for something else
            rf"\bin order to (?:\S+ ){{1,8}}?\S+,? {_OBLIGATION}\b",
        ]
    )
)

# a path the reader owns: a file or folder directly in a home folder (not a dot folder, a cache, a
# build or a temporary folder, nor anything deeper: "~/Documents/Arduino/libraries/x" is an app's),
# ssh keys, the system's security configuration
_HOME = r"(?:/home/[a-z0-9_.-]+|/users/[a-z0-9_.-]+|~|\$home)"
# what troubleshooting advice deletes: read as no path of the reader's (masked before the harms are read)
_KEPT_PATH = compile_re(
    rf"{_HOME}/(?:cache|caches|tmp|temp|build|dist|node_modules|library|appdata|downloads|snap|go/pkg)\b[^\s`'\"]*"
)
_OWNED_PATH = (
    rf"(?:{_HOME}/\.ssh\b|\bid_(?:rsa|ed25519|ecdsa|dsa)\b|\bauthorized_keys\b|/etc/(?:security|passwd|shadow|sudoers|ssh)\b|"
    rf"{_HOME}/[a-z0-9_-][^\s/`'\"]*(?:[\s`'\"]|$))"  # directly in the home folder: nothing deeper
)
_DELETE = r"(?:rm|del|shred|unlink|remove|delete|erase|wipe|destroy)"
_HARMS: tuple[tuple[str, str], ...] = (
    # the reader's files deleted, hidden, tampered with or locked behind a password
    (fam.DESTRUCTIVE_ACTION, rf"\b{_DELETE}\b(?: -[a-z]+)*[^\n]{{0,60}}?{_OWNED_PATH}"),
    (fam.DESTRUCTIVE_ACTION, rf"\b(?:rename|mv|move|hide)\b[^\n]{{0,20}}?{_OWNED_PATH}[^\n]{{0,60}}?/\.[a-z0-9_]"),
    (fam.DESTRUCTIVE_ACTION, r"\b(?:zip|7z|rar)\b[^\n]{0,10}? -r?m\b[^\n]{0,10}?-p\b|\bencrypt\w*\b[^\n]{0,120}?"
                             r"\b(?:password|passphrase)\b[^\n]{0,120}?\b(?:delete|remove)\b"),
    (fam.DESTRUCTIVE_ACTION, rf"\brandomly (?:modify|change|edit|alter|overwrite|corrupt)\b|\b{_DELETE} the (?:\S+ )?"
                             r"last (?:line|row|entry|record)s? of\b|\bsed -i '\$d'|/dev/u?random\b[^\n]{0,60}?"
                             rf"{_OWNED_PATH}"),
    # a remote-access or security service stopped
    (fam.DESTRUCTIVE_ACTION, r"\b(?:stop|disable|kill|turn off|shut down|mask)\b (?:the )?(?:sshd?|openssh|openvpn|"
                             r"wireguard|vpn|firewalld?|ufw|iptables|apparmor|selinux|auditd|fail2ban|antivirus|"
                             r"defender|clamav)\b"),
    # processes or files spawned by the hundred, or windows by the ten
    (fam.DESTRUCTIVE_ACTION, r"\bfor\b[^\n]{0,30}?(?:\{1\.\.[0-9]{2,}\}|<= ?[0-9]{3,}|seq [0-9]{3,})[^\n]{0,80}?"
                             r"(?:& done|truncate|fallocate|dd |touch|mkdir|fork)|\b(?:create|make|spawn|open|launch|"
                             r"start) (?:[0-9]{2,}|ten|twenty|fifty|hundreds of|thousands of) (?:new )?(?:\S+ ){0,2}"
                             r"(?:files|folders|directories|processes|terminals|browsers|windows|tabs|instances)\b"),
    # keys or the system's security files opened to everyone
    (fam.DESTRUCTIVE_ACTION, r"\bchmod\b(?: -[a-z]+)* (?:0?777|0?666|a\+rwx|o\+rw?x?|ugo\+rwx)\b[^\n]{0,40}?"
                             rf"(?:{_HOME}/\.ssh\b|\bid_(?:rsa|ed25519|ecdsa)\b|/etc/(?:shadow|passwd|sudoers|security)\b|"
                             r"/etc/?(?:\s|$))"),
    # a stranger's key put where it opens the reader's machine
    (fam.ACCOUNT_TAKEOVER, r"\b(?:ssh-rsa|ssh-ed25519|ecdsa-sha2-\S+) aaaa[0-9a-z+/=]{8,}[^\n]{0,200}?authorized_keys|"
                           r"authorized_keys[^\n]{0,200}?\b(?:ssh-rsa|ssh-ed25519|ecdsa-sha2-\S+) aaaa[0-9a-z+/=]{8,}"),
    # a local file's contents sent to the writer, or one of the reader's files to an outside address
    (fam.EXFILTRATION, rf"\b(?:send|email|e-mail|mail|upload|post|forward|share|copy)\b[^\n]{{0,40}}?{_OWNED_PATH}"
                       r"[^\n]{0,60}?\bto (?:\S+@\S+\.[a-z]+|https?://|ftp://|\S+:/)"),
    (fam.EXFILTRATION, r"\b(?:send|reply|post|share|paste|message|dm|email|e-mail|forward)\b[^\n]{0,40}?\b(?:contents?|"
                       r"the file|its output|the output)\b[^\n]{0,30}?\b(?:to me|to us|to this (?:post|thread|message|"
                       r"channel|chat|comment))\b|\breply to this (?:post|thread|message|comment) with (?:the|its) "
                       r"(?:contents?|output)\b"),
)
_HARM = [(family, compile_re(rx)) for family, rx in _HARMS]
# the reader's task named as what the step is for: "to complete your task", "the user's request",
# "the task you were asked to do" ("before starting your task" is a contributor's, and not read)
_READER_TASK = compile_re(
    r"\b(?:complete|accomplish|solve|carry out|fulfil+) (?:your|the user'?s?|the original|the assigned|the given) "
    r"(?:current |original )?(?:task|goal|objective|mission|request)\b|\bthe user'?s? (?:task|goal|request|"
    r"instructions?)\b|\bthe task (?:that |which )?(?:you (?:are|were|have been) (?:asked|given|told|assigned)|"
    r"(?:i|we|the user) (?:gave|assigned|sent)(?: to)? you)\b"
)
_SHOUT = compile_re(r"\b(?:important|urgent|critical|attention|warning|alert|notice|mandatory|required)\b ?!")
_BANGS = compile_re(r"! ?!")  # "IMPORTANT!!": the second mark says it again
# the pretext that the step is needed by something else ("requried" and the like: typing errors kept)
_PRETEXT = compile_re(
    r"\b(?:as|since|because|for) (?:this|it|that) is (?:\S+ )?(?:requ[a-z]{2,4}d|needed|necessary|mandatory|"
    r"essential|a prerequisite|a must)\b|\b(?:is|are) (?:\S+ )?requ[a-z]{2,4}d (?:for|to|before)\b"
)


def find(plain: Sequence[str]) -> list[tuple[str, str]]:
    """(family, where) of the first order put before the reader's task with a cue above; the
    sentences are the plain view's, one per item."""
    whole = "\n".join(plain)
    if _PREREQUISITE.search(whole) is None:
        return []
    for index, sentence in enumerate(plain):
        if _PREREQUISITE.search(sentence) is None:
            continue
        window = _KEPT_PATH.sub("a kept path", "\n".join(plain[index : index + 1 + WINDOW]))
        where = f"order put before the reader's task, sentence {index + 1}"
        for family, rx in _HARM:
            if rx.search(window) is not None:
                return [(family, where)]
        before = plain[index - 1] if index else ""
        loud = before + "\n" + sentence
        shouts = sum(1 for _ in _SHOUT.finditer(loud)) + sum(1 for _ in _BANGS.finditer(loud))
        if _READER_TASK.search(sentence) is not None or (shouts >= SHOUTS and _PRETEXT.search(window) is not None):
            return [(fam.AGENT_DIRECTIVE, where)]
    return []
