"""Tool names every agent client accepts: ``^[A-Za-z0-9_-]{1,64}$``.

The major LLM APIs reject a whole tool list when one name is longer than 64 characters
or holds anything but letters, digits, ``_`` and ``-``. Names built from what people
call their devices and rooms (any language, any length) are fitted here: ``fit_name``
keeps a name that already fits unchanged, and otherwise shortens its variable head and
appends ``_`` plus a short hash of the whole head, so the result is stable across
restarts (it depends only on the text) and two different heads stay apart. The fixed
tail (``set_temperature``, ``lights_on``) is kept, so the name still says what it does.
"""

from __future__ import annotations

import hashlib
import re

CLIENT_NAME_MAX = 64
CLIENT_NAME_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
HASH_LENGTH = 6
_NOT_ALLOWED = re.compile(r"[^A-Za-z0-9_-]+")


def short_hash(text: str, length: int = HASH_LENGTH) -> str:
    """Return a short, stable hex digest of ``text``."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:length]


def fit_name(head: str, tail: str, limit: int) -> str:
    """Return ``head_tail`` (or ``head`` when ``tail`` is empty) in at most ``limit`` chars.

    A name that fits is returned as is; a longer one keeps ``tail`` whole and cuts
    ``head`` to make room for ``_<hash of head>``. ``tail`` must leave room for that.
    """
    joined = f"{head}_{tail}" if tail else head
    if len(joined) <= limit:
        return joined
    digest = short_hash(head)
    room = limit - len(digest) - 1 - (len(tail) + 1 if tail else 0)
    if room < 1:
        raise ValueError(f"tail '{tail}' leaves no room in {limit} characters")
    cut = head[:room].rstrip("_-") or head[:1]
    return f"{cut}_{digest}_{tail}" if tail else f"{cut}_{digest}"


def client_name(text: str, limit: int = CLIENT_NAME_MAX, *, identity: str | None = None) -> str:
    """Return ``text`` when clients accept it, else a cleaned, shortened, hashed form.

    Invalid characters become ``_``; a changed name always carries the hash of
    ``identity`` (default: ``text``), so two texts that clean alike stay apart.
    """
    if len(text) <= limit and CLIENT_NAME_RE.fullmatch(text):
        return text
    clean = _NOT_ALLOWED.sub("_", text).strip("_") or "tool"
    digest = short_hash(identity if identity is not None else text)
    cut = clean[: limit - len(digest) - 1].rstrip("_-") or "tool"
    return f"{cut}_{digest}"
