"""Plain-word salad: an optimiser's suffix made of ordinary words, with no odd glyph in it.

`suffix` reads the glyphs of GCG-style salad (brackets glued to letters, LaTeX inside words, two
scripts in one word). An optimiser restricted to word tokens, or a suffix whose glyphs were
stripped, leaves a run of real words with no sentence in it: `supervisor archivo Megan PEN
IllegalAccessException Want opción greens نظامی booklet quantities einzel take`. What no sentence
of any report has is the *mix*, not any one word:

- at most one English function word in `MIN_RUN` consecutive words of letters (a sentence needs
  "the", "to", "of", "is" ...; a list of names or packages has none either, hence the cues below);
- **case chaos**: three or more of lower case, capitalised, upper case and mixed case words in the
  run (a list of packages is lower case; of products, capitalised);
- **scripts between words**: words of another script between Latin ones (Arabic, Cyrillic, Greek;
  Chinese, Japanese or Korean next to Latin count once, as honest bilingual text writes them);
- **foreign function words** (`einzel`, `toujours`, `archivo` is not one; `quelque`, `und`) and
  words glued with broken case (`cheerEn`), as in `suffix`.

A window with more than `MAX_FOREIGN` foreign function words or short lower-case words that are not
English ("de", "o", "et"), or fewer than `LATIN_SHARE` ASCII
words, is prose in another language with English names in it ("Se você está comparando o Uvicorn,
compare com ... Daphne, Hypercorn"), not salad inside English.

A run with `MIN_CUES` points or more counts only right after a request on its line (or with the
request on the line before, when the run starts a line): the same test `suffix` uses. Pure Python
over the words of each line: linear in the input. The hit names the line and the words."""

from __future__ import annotations

from functools import lru_cache

from signoff.airlock import suffix

MIN_RUN = 10  # consecutive words of letters read together
MAX_FUNCTION = 1  # English function words among them: a sentence has three or more
MIN_CUES = 3
MAX_FOREIGN = 2  # more function words of other languages: a sentence in another language
LATIN_SHARE = 0.8  # salad inside English: most of its words are ASCII
_FUNCTION = frozenset(
    "the a an to of and or in on at by for from with without into onto is are was were be been being am it its "
    "this that these those there here you your i me my we our us he she his her they them their not no how what "
    "which who when where why can could will would should may might must do does did has have had if then than "
    "as so but also just only very all any some each every about after before over under up out".split()
)
_EAST_ASIAN = "EAST ASIAN"


def find(text: str) -> suffix.Salad | None:
    """The first plain-word salad right after a request, or None."""
    lines = text.split("\n")
    for number, line in enumerate(lines):
        words = line.split()
        if len(words) < MIN_RUN:
            continue
        letters = [_letters(word) for word in words]
        # prefix counts: English function words, and words that can carry a cue (anything but a
        # lower-case ASCII word of no other language), so most windows cost two subtractions
        function, marked = [0], [0]
        for word in letters:
            function.append(function[-1] + (word.casefold() in _FUNCTION))
            marked.append(marked[-1] + (bool(word) and _marked(word)))
        start = 0
        for end in range(1, len(words) + 1):  # windows of MIN_RUN consecutive words of letters
            if not letters[end - 1]:
                start = end
                continue
            if end - start < MIN_RUN or function[end] - function[end - MIN_RUN] > MAX_FUNCTION:
                continue
            if marked[end] == marked[end - MIN_RUN]:
                continue  # lower-case ASCII words only: no cue can be there
            first = end - MIN_RUN
            cues = _cues(letters[first:end])
            if cues < MIN_CUES:
                continue
            before = " ".join(words[:first])
            if suffix.word_count(before) < 3 and number > 0:
                before = lines[number - 1] + " " + before
            if suffix.word_count(before) >= 3 and suffix.aimed(before[-suffix.HOST_CHARS :]):
                return suffix.Salad(number + 1, number + 1, first + 1, end, cues)
            break  # a line's first salad window has its request before it, or none has
    return None


@lru_cache(maxsize=8192)  # a text repeats its words
def _marked(word: str) -> bool:
    return not (word.islower() and word.isascii()) or word.casefold() in suffix.FOREIGN


def _letters(token: str) -> str:
    """The word of letters a token is (sentence punctuation after it allowed), or ""."""
    word = token.rstrip(".,;:!?")
    return word if word.isalpha() else ""


def _cues(words: list[str]) -> int:
    foreign = sum(1 for word in words if word.casefold() in suffix.FOREIGN)
    # short lower-case words that are not English ones: "de", "o", "com", "et", "par", "ou"
    short = sum(1 for word in words if len(word) <= 3 and word.islower() and word.casefold() not in suffix.FOREIGN)
    latin = sum(1 for word in words if word.isascii())
    if foreign + short > MAX_FOREIGN or latin < LATIN_SHARE * len(words):
        return 0  # prose in another language (with English names in it), not salad inside English
    cases = {_case(word) for word in words}
    points = len(cases) - 1 if len(cases) >= 3 else 0
    scripts: set[str] = set()
    for word in words:
        found = {suffix.script_of(ch) for ch in word if ch not in suffix.MICRO}
        if len(found) > 1:
            points += 1  # two scripts glued in one word: "Want績", "comfortable的Defs"
        scripts |= found
    others = scripts - {"LATIN", _EAST_ASIAN}
    points += 2 * len(others) + (1 if _EAST_ASIAN in scripts and "LATIN" in scripts else 0)
    return points + foreign + sum(1 for word in words if suffix.broken_case(word))


def _case(word: str) -> str:
    if word.islower() or not any(ch.isascii() for ch in word):
        return "lower"  # and words of scripts without case
    if word.isupper():
        return "upper" if len(word) > 1 else "title"
    if word[:1].isupper() and word[1:].islower():
        return "title"
    return "mixed"
