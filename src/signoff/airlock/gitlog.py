"""A pasted `git log` or `git show`: the merge subjects git itself wrote are records, not orders.

"Merge pull request #412 from jane/fix-build" on a line of its own reads as an order to merge (and
is held: an attacker can write it bare). Inside a git log, under a `commit <hash>` line and its
`Author:` and `Date:` headers, the same words are the subject git gave a merge that already
happened. `settle_merges` rewrites only those subjects into the past tense ("Merged pull request
...") before the text is read, so every rule still reads them, as the fact they are; the rest of
the message (where an order can be hidden) and a merge subject outside a git log stay as written.
One pass over the lines; RE2 patterns."""

from __future__ import annotations

from signoff.airlock._re import Pattern, compile_re

# `git log --graph` draws its lanes before every line: "*   commit ...", "|\  Merge: ...", "| | ..."
_LANES = r"[*|\\/ ]*"
_COMMIT = compile_re(rf"^{_LANES}commit [0-9a-f]{{7,40}}(?: \(.*\))?\s*$")
_HEADER = compile_re(rf"^{_LANES}(?:Merge|Author|AuthorDate|Commit|CommitDate|Date): ")
_AUTHOR = compile_re(rf"^{_LANES}Author: ")
_PARENTS = compile_re(rf"^{_LANES}Merge: [0-9a-f]{{7,40}}(?: [0-9a-f]{{7,40}})+\s*$")
# The subjects `git merge` and the forges write, and nothing after them on the line.
_REF = r"'[^'\n]{1,200}'"
_GIT_MERGE = compile_re(
    rf"^({_LANES}[ \t]{{4}}[ \t]*)Merge (?:pull request (?:#[0-9]+ )?from [^\s]+|"
    rf"(?:remote-tracking )?branch {_REF}|branches {_REF}(?:, {_REF})*,? and {_REF}|tag {_REF}|"
    rf"commit {_REF})(?: of [^\s]+)?(?: into [^\s]+)?\s*$"
)
# A maintainer's own words for a merge ("Merge stable into main.  (#3674)"), only as the subject of
# a commit whose `Merge:` header names its parents: a merge that happened. One ref into another,
# then the end of the line, of the sentence, or a PR number; what follows is read as written.
_NAMED_MERGE = compile_re(
    rf"^({_LANES}[ \t]{{4}}[ \t]*)Merge [^\s]+ into (?:the )?[^\s.]+(?: branch)?(?:\.?\s*$|\.\s|\s+\(#[0-9]+\))"
)

# In a commit's message, text a bot or a forge wrote into the pull request it merged: Dependabot's
# list of the commands it takes ("- `@dependabot ignore this major version` will close this PR ...":
# a bot addressed, an override word, a PR closed) and a quoted changelog's merge subjects, wrapped
# inside an HTML list ("Merge pull request <a" before the link to the PR). The command list is
# rewritten as the description it is; an order in the message is still read as written.
_BOT_COMMAND = compile_re(rf"^({_LANES}[ \t]{{4}}[ \t]*)- `@dependabot [a-z <>-]{{1,60}}` will ")
_HTML_MERGE = compile_re(rf"^({_LANES}[ \t]{{4}}[ \t]*)Merge pull request (?:<a|&lt;a)\s*$")

# The lanes `git log --graph` draws ("|\ \ \ Merge: ...", "| | | Author: ..."): glyphs, no words,
# which the shape cues of step 8 read as token salad. Only in a text with a graph's commit line, and
# only a prefix with at least one lane glyph (a Markdown bullet "* item" alone is not one).
_GRAPH_COMMIT = compile_re(r"(?m)^[*|\\/ ]*[*|\\/][*|\\/ ]* commit [0-9a-f]{7,40}\b")
_LANE_PREFIX = compile_re(r"(?m)^[*|\\/ ]*[|\\/][*|\\/ ]*")


# The same list in the pull request itself, as the forge's API returns it (an issues endpoint
# lists pull requests too): under Dependabot's own heading for it, and only there.
_BOT_COMMANDS_HEADING = compile_re(r"(?m)^(?:<summary>)?Dependabot commands and options(?:</summary>)?\s*$")
_PR_BOT_COMMAND = compile_re(r"^()- `@dependabot [a-z <>-]{1,60}` will ")


def settle_merges(text: str) -> str:
    """`text` with the merge subjects of a pasted git log in the past tense, the lanes of a `git
    log --graph` drawn as one, and Dependabot's list of its commands in a pull request's body
    described; unchanged without them."""
    if "@dependabot" in text and (heading := _BOT_COMMANDS_HEADING.search(text)) is not None:
        text = text[: heading.end] + "\n".join(
            _described_command(line, _PR_BOT_COMMAND) for line in text[heading.end :].split("\n"))
    if "commit " not in text:
        return text
    if "Merge" in text or "@dependabot" in text:
        text = _settle(text)
    if _GRAPH_COMMIT.search(text) is not None:
        text = _LANE_PREFIX.sub("| ", text)  # one lane left: a subject after it opens no sentence, as before
    return text


def _settle(text: str) -> str:
    lines = text.split("\n")
    in_headers = authored = parents = False
    subject_due = False  # the next non-blank line is a commit's subject
    for number, line in enumerate(lines):
        if _COMMIT.search(line) is not None:
            in_headers, authored, parents, subject_due = True, False, False, False
            continue
        if in_headers:
            if _HEADER.search(line) is not None:
                authored = authored or _AUTHOR.search(line) is not None
                parents = parents or _PARENTS.search(line) is not None
                continue
            in_headers, subject_due = False, authored
        if authored and not subject_due:
            lines[number] = _settle_body_line(line)
        if not subject_due or not line.strip(" \t|*\\/"):
            continue
        subject_due = False
        found = next(_GIT_MERGE.groups(line), None) or (next(_NAMED_MERGE.groups(line), None) if parents else None)
        if found is not None:
            indent = found[2][0] or ""
            lines[number] = indent + "Merged" + line[len(indent) + len("Merge"):]
    return "\n".join(lines)


def _settle_body_line(line: str) -> str:
    """A line of a commit's message body with what a bot or a forge wrote there settled."""
    if "@dependabot" in line:
        line = _described_command(line, _BOT_COMMAND)
    if "Merge pull request" in line and (merge := next(_HTML_MERGE.groups(line), None)) is not None:
        indent = merge[2][0] or ""
        return indent + "Merged" + line[len(indent) + len("Merge"):]
    return line


def _described_command(line: str, command_line: Pattern) -> str:
    """A line of Dependabot's command list ("- `@dependabot rebase` will rebase this PR") as the
    description it is; any other line as it is."""
    command = next(command_line.groups(line), None) if "@dependabot" in line else None
    if command is None:
        return line
    indent = command[2][0] or ""
    rest = line[command[1]:]
    name = line[len(indent) + len("- `@dependabot "): command[1] - len("` will ")]
    return f"{indent}- the Dependabot command '{name}' is described: it would {rest}"
