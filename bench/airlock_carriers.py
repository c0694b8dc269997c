"""Carriers for the learned detector (issue #36, thirteenth pass): honest text in the shapes the
hidden corpus plants its orders in and the training lacked (an e-mail, a Markdown or CSV table,
code's comments, docstrings and string literals, a web page's text), each built from honest
material already read by `airlock_train.py` (real reports, real records, real code of pinned
mirrors, FastAPI's docs), honest as it is and with an attack planted in the same shape, in the
same numbers, so the model cannot learn "this carrier is an attack".

Everything is content-defined (inputs sorted, a seeded generator), so the same inputs give the
same texts byte for byte."""

from __future__ import annotations

import random
import re
from collections.abc import Callable

CARRIERS = ("e-mail", "markdown table", "csv table", "code", "web page")
CODE_LINES = 18  # lines of a source file kept around a comment or docstring
# names and addresses for the e-mail headers, written here (the bodies are real reports)
SENDERS = ("Dana Whitfield", "Rahul Menon", "Sofia Lindqvist", "Tomás Aguilar", "Mei Chen", "Kwame Mensah")
DOMAINS = ("example.org", "example.com", "mail.example.net")


def email(body: str, subject: str, rng: random.Random) -> str:
    sender, receiver = rng.sample(SENDERS, 2)
    domain = rng.choice(DOMAINS)

    def address(name: str) -> str:
        return f"{name} <{name.split()[0].lower()}@{domain}>"

    day = rng.randrange(1, 28)
    return (f"From: {address(sender)}\nTo: {address(receiver)}\nSubject: {subject}\n"
            f"Date: Tue, {day:02d} Oct 2024 09:{rng.randrange(60):02d}:00 +0000\n\n"
            f"Hi {receiver.split()[0]},\n\n{body.strip()}\n\nBest,\n{sender.split()[0]}")


def _cell(value: object) -> str:
    return " ".join(str(value).split()).replace("|", "/")[:200]


def columns(rows: list[dict[str, object]]) -> list[str]:
    """The first row's first keys, and its first free-text key last (a table of records shows one)."""
    first = rows[0]
    text = [k for k in first if isinstance(first[k], str) and len(str(first[k]).split()) >= 2]
    keys = [k for k in first if not isinstance(first[k], (list, dict)) and k not in text[:1]][:4]
    return keys + text[:1]


def markdown_table(rows: list[dict[str, object]]) -> str:
    keys = columns(rows)
    lines = ["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
    lines += ["| " + " | ".join(_cell(r.get(k, "")) for k in keys) + " |" for r in rows]
    return "\n".join(lines)


def csv_table(rows: list[dict[str, object]]) -> str:
    keys = columns(rows)

    def field(value: object) -> str:
        text = _cell(value)
        return f'"{text}"' if "," in text or '"' in text else text
    return "\n".join([",".join(keys), *(",".join(field(r.get(k, "")) for k in keys) for r in rows)])


def code_excerpts(source: str) -> list[tuple[int, list[str]]]:
    """(index of a comment or docstring line, the excerpt's lines) for every such spot of a file."""
    lines = source.splitlines()
    out = []
    for at, line in enumerate(lines):
        stripped = line.strip()
        if stripped.startswith(("# ", "// ", '"""', "/**", " * ")) and len(stripped.split()) >= 4:
            start = max(0, at - CODE_LINES // 2)
            out.append((at - start, lines[start: start + CODE_LINES]))
    return out


def plant_in_code(lines: list[str], at: int, attack: str, mode: str) -> str:
    indent = re.match(r"\s*", lines[at]).group(0) if lines else ""  # type: ignore[union-attr]
    comment = "//" if lines[at].strip().startswith(("//", "/*", "*")) else "#"
    one_line = " ".join(attack.split())
    if mode == "comment":
        added = [f"{indent}{comment} {one_line}"]
    elif mode == "docstring":
        added = [f"{indent}{one_line}"] if '"""' in lines[at] else [f"{indent}{comment} {one_line}"]
    else:  # a string literal
        quoted = one_line.replace("\\", "\\\\").replace('"', '\\"')
        added = [f'{indent}message = "{quoted}"']
    return "\n".join([*lines[: at + 1], *added, *lines[at + 1:]])


def web_page(title: str, paragraphs: list[str]) -> str:
    body = "\n".join(f"<p>{p}</p>" for p in paragraphs)
    return (f"<html><head><title>{title}</title></head><body>\n<nav><a href=\"/\">Home</a> | "
            f"<a href=\"/docs\">Docs</a></nav>\n<h1>{title}</h1>\n{body}\n<footer>© 2024</footer></body></html>")


def build(
    reports: list[str], records: list[dict[str, object]], code: list[str], docs: list[str], attacks: list[str],
    seed: int,
) -> tuple[list[tuple[str, str]], list[tuple[str, str, str]]]:
    """(carrier, honest text) and (carrier, attack, planted text): the attacks dealt round the carriers
    in a seeded order, each carrier given as many honest texts as attacks, from disjoint material."""
    rng = random.Random(seed)
    excerpts = [(at, lines) for source in code for at, lines in code_excerpts(source)]
    rng.shuffle(excerpts)
    pools: dict[str, list[object]] = {
        "e-mail": list(reports), "markdown table": list(range(0, len(records) - 4, 8)),
        "csv table": list(range(4, len(records) - 4, 8)), "code": list(excerpts), "web page": list(docs),
    }
    for name in ("e-mail", "web page"):
        rng.shuffle(pools[name])
    honest: list[tuple[str, str]] = []
    planted: list[tuple[str, str, str]] = []
    makers: dict[str, Callable[[object, str], str]] = {
        "e-mail": lambda m, a: _email_of(str(m), a, rng),
        "markdown table": lambda m, a: _table_of(records, int(m), a, rng, markdown_table),  # type: ignore[call-overload]
        "csv table": lambda m, a: _table_of(records, int(m), a, rng, csv_table),  # type: ignore[call-overload]
        "code": lambda m, a: _code_of(m, a, rng),
        "web page": lambda m, a: _page_of(str(m), a, rng),
    }
    for number, attack in enumerate(attacks):
        carrier = CARRIERS[number % len(CARRIERS)]
        pool = pools[carrier]
        if len(pool) < 2:
            continue
        planted.append((carrier, attack, makers[carrier](pool.pop(), attack)))
        honest.append((carrier, makers[carrier](pool.pop(), "")))
    return honest, planted


def _email_of(report: str, attack: str, rng: random.Random) -> str:
    lines = report.strip().split("\n")
    subject = lines[0].removeprefix("Title: ")[:90] if lines[0].startswith("Title: ") else "Question about the build"
    body = "\n".join(lines[1:] if lines[0].startswith("Title: ") else lines)[:1500]
    if attack:
        paragraphs = body.split("\n\n")
        cut = rng.randrange(len(paragraphs) + 1)
        body = "\n\n".join([*paragraphs[:cut], attack, *paragraphs[cut:]])
    return email(body, subject, rng)


def _table_of(records: list[dict[str, object]], start: int, attack: str, rng: random.Random,
              render: Callable[[list[dict[str, object]]], str]) -> str:
    rows = [dict(r) for r in records[start: start + 4]]
    if attack:
        row = rows[rng.randrange(len(rows))]
        key = columns(rows)[-1]  # the free-text column
        row[key] = attack if rng.random() < 0.5 else f"{row.get(key, '')} {attack}"
    return render(rows)


def _code_of(excerpt: object, attack: str, rng: random.Random) -> str:
    at, lines = excerpt  # type: ignore[misc]
    if not attack:
        return "\n".join(lines)
    return plant_in_code(lines, at, attack, rng.choice(("comment", "docstring", "string literal")))


def _page_of(doc: str, attack: str, rng: random.Random) -> str:
    paragraphs = [" ".join(p.split()) for p in doc.split("\n\n")
                  if p.strip() and not p.startswith(("```", "#", "////", "{*", "<"))]
    title = next((p.lstrip("# ") for p in doc.split("\n") if p.startswith("#")), "Documentation")[:80]
    if attack:
        paragraphs.insert(rng.randrange(len(paragraphs) + 1), attack)
    return web_page(title, paragraphs[:6])
