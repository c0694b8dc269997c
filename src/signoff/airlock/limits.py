"""What the airlock accepts at all: text, not binary, and not more than a size limit.

The limit is on the UTF-8 bytes of the raw input, checked before any other work, so a huge
submission costs nothing but the read of MAX_BYTES + 1 bytes."""

from __future__ import annotations

from signoff.kernel.errors import UsageError

MAX_BYTES = 256 * 1024  # a long bug report with a pasted stack trace is well under 50 KiB

# C0 controls other than tab, newline, carriage return and form feed; text editors never produce
# them, binary files are full of them.
_CONTROL = frozenset(range(0x20)) - {0x09, 0x0A, 0x0C, 0x0D}
_DELETE_CONTROLS = dict.fromkeys(_CONTROL)


def too_large(size: int, limit: int = MAX_BYTES) -> UsageError:
    return UsageError(
        f"input is {size} bytes, over the airlock limit of {limit} bytes",
        "shorten the report (attach long logs elsewhere) and submit again",
    )


def decode_input(data: bytes, limit: int = MAX_BYTES) -> str:
    """Raw bytes from a file, a form or a chat message -> text, or a clear refusal."""
    if len(data) > limit:
        raise too_large(len(data), limit)
    if b"\x00" in data:
        raise _binary("it contains NUL bytes")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _binary(f"it is not valid UTF-8 (byte {exc.start})") from None
    check_text(text, limit)
    return text


def check_text(text: str, limit: int = MAX_BYTES) -> str:
    """A str input: the same limit (counted in UTF-8 bytes) and the same binary refusal."""
    if len(text) > limit:  # every character is at least one byte: no need to encode first
        raise too_large(len(text.encode("utf-8", "surrogatepass")), limit)
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > limit:
        raise too_large(size, limit)
    if "\x00" in text:
        raise _binary("it contains NUL characters")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise _binary("it contains unpaired surrogates") from None
    controls = len(text) - len(text.translate(_DELETE_CONTROLS))
    if controls and controls * 100 > len(text):  # more than 1% control characters: not prose
        raise _binary(f"{controls} of its {len(text)} characters are control characters")
    return text


def _binary(why: str) -> UsageError:
    return UsageError(
        f"input looks binary, not text: {why}",
        "submit plain UTF-8 text; attach binary files (screenshots, dumps) through the attachment channel",
    )
