"""Model output as data: make any reply storable and displayable without interpreting it."""

from __future__ import annotations

import re

_SURROGATE_RE = re.compile("[\ud800-\udfff]")


def storable(text: str) -> str:
    """Replace lone UTF-16 surrogates (legal in JSON escapes, unencodable in UTF-8) with U+FFFD.

    Everything else, markup and escape sequences included, is kept exactly: it is data, and the
    UI shows it literally.
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE_RE.sub("\ufffd", text)
    return text
