"""What a call may touch: the shell allowlist and the forbidden paths, used by SecurityPolicy.

:func:`check_command` parses a command line the way a POSIX shell splits it and checks the
first word of every command against the allowlist. :class:`ForbiddenPaths` answers whether a
path lies inside a forbidden one, after expanding ``~`` and resolving symlinks, and which words
of a command line are paths the shell would touch.
"""

from __future__ import annotations

import fnmatch
import itertools
import os
import shlex
from collections.abc import Iterable
from pathlib import Path

__all__ = ["ForbiddenPaths", "check_command", "recursive"]

_SEPARATORS = frozenset({";", "&&", "||", "|", "&", "(", ")", ";;", "|&"})
_REDIRECTS = frozenset({">", ">>", "<", "<<", "<<<", ">&", "<&", "&>", "&>>", ">|"})


def _named_after(name: str, protected: str) -> bool:
    """Whether ``name`` is a file written beside ``protected`` (its backup or temp file)."""
    return bool(protected) and (name.startswith(protected) or name.startswith("." + protected))


def recursive(words: Iterable[str]) -> bool:
    """Whether a command's words ask it to walk directories (``-r``, ``-R``, ``-rn``,
    ``--recursive``, ``--dereference-recursive``, ``-d recurse``)."""
    for word in words:
        if word.startswith("--"):
            if "recurs" in word:
                return True
        elif word.startswith("-") and ("r" in word or "R" in word) and word[1:].isalpha():
            return True
        elif word == "recurse":
            return True
    return False


def check_command(command: str, allowed: Iterable[str]) -> tuple[str | None, list[str]]:
    """Check a shell command line against an allowlist.

    The first word of every command in a pipeline or ``;``/``&&``/``||``/``&``/newline chain
    must be in ``allowed`` (``"*"`` allows any). Command substitution (backticks, ``$(``) and
    process substitution are refused outright.

    Returns:
        ``(reason, words)``: ``reason`` is None if allowed, else why not; ``words`` are the
        argument and redirect-target words, for the caller's path checks.
    """
    allow = set(allowed)
    if "`" in command or "$(" in command or "<(" in command or ">(" in command:
        return "command substitution (backticks, $( ), <( ), >( )) is not allowed", []
    lexer = shlex.shlex(command.replace("\n", " ; "), posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        tokens = list(lexer)
    except ValueError as exc:
        return f"the command could not be parsed ({exc})", []
    words: list[str] = []
    expect_command = True
    expect_target = False
    for tok in tokens:
        if tok in _SEPARATORS or (tok and set(tok) <= set(";&|()")):
            expect_command, expect_target = True, False
            continue
        if tok in _REDIRECTS or (tok and set(tok) <= set("<>&|")):
            expect_target = True
            continue
        if expect_target:
            words.append(tok)
            expect_target = False
            continue
        if expect_command:
            if "*" not in allow and tok not in allow:
                shown = ", ".join(sorted(allow)) or "none"
                return (
                    f"command {tok!r} is not in the shell allowlist (allowed: {shown}); the "
                    "user can add it to [autonomy].shell_allowlist in the config",
                    [],
                )
            expect_command = False
            continue
        words.append(tok)
    return None, words


class ForbiddenPaths:
    """Paths (and everything under them) that no tool may touch.

    An entry also covers its siblings whose names start with its name or with ``.`` and its
    name: what is written beside a file holding secrets holds them too (``config.toml.bak``,
    ``config.toml.tmp``, ``state.db-wal``, a ``.secrets.XXXX`` temp file, ``/etc/shadow-``).
    One rule, so a new backup or temp file beside a protected one is protected without a list.

    Args:
        paths: The configured paths; ``~`` expands. Each is matched both as written (made
            absolute) and with its symlinks resolved.
    """

    def __init__(self, paths: Iterable[str]) -> None:
        self._entries: list[tuple[str, Path]] = []
        for raw in paths:
            p = Path(os.path.expanduser(raw))
            self._entries.append((raw, Path(os.path.abspath(p))))
            resolved = p.resolve()
            if resolved != self._entries[-1][1]:
                self._entries.append((raw, resolved))

    def hit(self, raw: str, base_dir: Path) -> str | None:
        """The configured forbidden path that ``raw`` lies in, or None.

        ``raw`` is taken relative to ``base_dir`` unless absolute; it is compared as written
        and with its symlinks resolved.

        Raises:
            OSError, ValueError: ``raw`` cannot be a path (too long, a NUL byte).
        """
        p = Path(os.path.expanduser(raw))
        if not p.is_absolute():
            p = base_dir / p
        candidates = {Path(os.path.abspath(p)), p.resolve()}
        for label, bad in self._entries:
            for cand in candidates:
                if cand == bad or cand.is_relative_to(bad):
                    return label
                # A sibling named after it (a backup, a temp file), or anything under one.
                for part in (cand, *cand.parents):
                    if part.parent == bad.parent and _named_after(part.name, bad.name):
                        return label
        return None

    def holding(self, raw: str, base_dir: Path) -> str | None:
        """The forbidden path that the directory ``raw`` holds (at any depth), or None: what a
        recursive command (``grep -r x ..``) would read through."""
        p = Path(os.path.expanduser(raw))
        if not p.is_absolute():
            p = base_dir / p
        if not p.is_dir():
            return None
        for cand in {Path(os.path.abspath(p)), p.resolve()}:
            for label, bad in self._entries:
                if bad.is_relative_to(cand):
                    return label
        return None

    def walk_refusal(self, paths: Iterable[str], base_dir: Path) -> str | None:
        """Why a recursive command may not walk one of ``paths`` (a directory that holds a
        forbidden path: ``grep -r x ..`` reads the config's backup as surely as ``cat``), or
        None."""
        for raw in paths:
            try:
                held = self.holding(raw, base_dir)
            except (OSError, ValueError):
                continue  # not a usable path: the path check says so
            if held is not None:
                shown = raw if len(raw) <= 200 else raw[:200] + "..."
                return (
                    f"a recursive command may not walk {shown!r}: it holds the forbidden path "
                    f"{held!r}; name the files to read instead"
                )
        return None

    def shell_paths(self, words: Iterable[str], base_dir: Path) -> list[str]:
        """The path-like words of a command as the shell would see them: ``$VARS`` and ``~``
        expanded, globs expanded against the filesystem (and kept as patterns).

        A word is path-like when it has a ``/``, starts with ``~``, holds a glob character, or
        names an existing entry of ``base_dir`` (the workspace, where the shell tool runs):
        ``ls fd`` with ``fd -> /root/.ssh`` must be checked like ``ls /root/.ssh``. The value of
        an ``--option=value`` word is checked the same way.
        """
        out: list[str] = []
        for word in words:
            expanded = os.path.expanduser(os.path.expandvars(word))
            candidates = [expanded]
            if "=" in expanded:
                candidates.append(expanded.split("=", 1)[1])
            for cand in candidates:
                has_glob = any(ch in cand for ch in "*?[")
                if not cand or not (
                    "/" in cand
                    or word.startswith("~")
                    or has_glob
                    or os.path.lexists(base_dir / cand)
                ):
                    continue
                out.append(cand)
                if has_glob:
                    import glob  # a shell command with a wildcard only

                    base = cand if os.path.isabs(cand) else str(base_dir / cand)
                    out.extend(itertools.islice(glob.iglob(base), 1000))
                    # A pattern that would match a forbidden path counts as naming it, even
                    # where the path does not exist to be globbed.
                    out.extend(
                        str(bad)
                        for _label, bad in self._entries
                        if fnmatch.fnmatchcase(str(bad), base)
                    )
        return out
