"""Text surgery for the tool-call parser: ``<think>`` blocks out, cut spans joined back up."""

from __future__ import annotations

import re

__all__ = ["join_cuts", "split_thinking"]

_THINK_OPEN = re.compile(r"<(think|thinking)>", re.IGNORECASE)
_THINK_CLOSE = re.compile(r"</think(?:ing)?>", re.IGNORECASE)


def split_thinking(text: str) -> tuple[str, str]:
    """Split ``<think>``/``<thinking>`` blocks from text.

    A closing tag with no opening tag before it (chat templates that open the block in the
    prompt) ends a block that started at the beginning of the text; an opening tag that is
    never closed runs to the end of the text (a model stopped mid-thought).

    Returns:
        ``(visible_text, thinking)``: the text without the blocks (whitespace tidied where a
        block was cut) and the blocks' contents joined by blank lines.
    """
    cuts: list[tuple[int, int]] = []
    thoughts: list[str] = []
    pos = 0
    first_open = _THINK_OPEN.search(text)
    first_close = _THINK_CLOSE.search(text)
    if first_close is not None and (first_open is None or first_close.start() < first_open.start()):
        thoughts.append(text[: first_close.start()].strip())
        cuts.append((0, first_close.end()))
        pos = first_close.end()
    while True:
        m = _THINK_OPEN.search(text, pos)
        if m is None:
            break
        close = re.compile(f"</{m.group(1)}>", re.IGNORECASE).search(text, m.end())
        end_inner = close.start() if close is not None else len(text)
        end = close.end() if close is not None else len(text)
        thoughts.append(text[m.end() : end_inner].strip())
        cuts.append((m.start(), end))
        pos = end
    if not cuts:
        return text, ""
    return join_cuts(text, cuts), "\n\n".join(t for t in thoughts if t)


def join_cuts(text: str, cuts: list[tuple[int, int]]) -> str:
    """Remove the cut spans from text and tidy the whitespace where each cut was.

    Around a cut, the whitespace on both sides collapses to one separator: a space when there
    was no line break, else as many line breaks as the larger side had (at most two). Text
    between cuts is untouched; the result is stripped.
    """
    if not cuts:
        return text.strip()
    pieces: list[str] = []
    prev = 0
    for start, end in cuts:
        pieces.append(text[prev:start])
        prev = end
    pieces.append(text[prev:])
    last = len(pieces) - 1
    out: list[str] = []
    gap = 0
    for i, piece in enumerate(pieces):
        if i > 0:
            core = piece.lstrip()
            gap = max(gap, piece.count("\n", 0, len(piece) - len(core)))
            piece = core
        trail = 0
        if i < last:
            core = piece.rstrip()
            trail = piece.count("\n", len(core))
            piece = core
        if piece:
            if out:
                out.append("\n" * min(gap, 2) if gap else " ")
            out.append(piece)
            gap = 0
        gap = max(gap, trail)
    return "".join(out).strip()
