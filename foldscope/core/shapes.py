"""The shapes of URLs, e-mail addresses and paths in free text, each written once.

Three readers find these in text, each for its own purpose, and all of them build on the shapes
below (regular-expression source, not compiled, so each reader composes its own pattern):

- the identifier kinds file (``core/data/identifier_kinds.toml``) uses them by name as
  ``(?&url)``, ``(?&email)``, ``(?&path)`` (:data:`SHAPES`; ``core.rulefile.shared_patterns``)
  and adds its own context around them: which URL schemes count, no template, evidence of a real
  address;
- the export scrubber (``core.sanitize``) compiles its URL, e-mail and local-path patterns from
  :data:`URL_REACH`, :data:`EMAIL_REACH` and :data:`LOCAL_PATH`: it must remove everything a reader
  could take for one, so where a reader stops early it reaches further (see each);
- the simulator's reading of paths (``engine.sim.extract``) keeps the absolute :data:`PATH`
  matches.

A shape here is the one place to change what foldscope calls a URL, an e-mail address or a path;
tests/test_shapes.py and tests/test_scrub_corpus.py check how the readers relate (nothing the
identifier kinds file finds as a URL, an e-mail address or a machine's path survives the scrubber).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

_TOKEN_END = r"\s\"'<>"
"""What ends a token for the scrubber: a space, a quote or an angle bracket (its shapes reach
that far; a character class body, used as ``[^...]``)."""

# --- URLs -----------------------------------------------------------------------------------

URL_START = r"(?:\b|(?<=\x1b\[\dm)|(?<=\x1b\[\d\dm))"
"""Where a URL may start: at a word boundary, or right after a terminal colour code."""
URL_SCHEME = r"[a-zA-Z][a-zA-Z0-9+.-]*"
"""A URL scheme as RFC 3986 spells it (a letter, then letters, digits, ``+ . -``)."""
URL_OPENING = URL_START + URL_SCHEME + "://"
"""A URL's opening: its scheme and ``://``."""
URL_BODY = (r"[^\s<>\"'`|,\x00-\x1f\x7f{}\\]*"
            r"[^\s<>\"'`|.,;:!?)\]}\x00-\x1f\x7f\\]")
"""What follows a URL's opening, as far as a reader takes it: never a space, quote, bracket,
pipe, comma, brace, backslash or control character, and never ending in sentence punctuation."""
URL = URL_OPENING + URL_BODY
"""A URL: an opening and a body (``https://host:8080/a?b=1``)."""
URL_REACH = URL_OPENING + f"[^{_TOKEN_END}]+"
"""A URL with the rest of the token it opens (the scrubber's: it reaches past where a reader
stops, through commas, braces and final punctuation, up to a space, quote or angle bracket, so a
template, a list of hosts or a URL glued to text leaks nothing)."""

# --- E-mail addresses -------------------------------------------------------------------------

EMAIL = (r"(?<![\w.+-])[A-Za-z0-9][A-Za-z0-9._%+-]*@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
         r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*\.[A-Za-z]{2,24}\b")
"""An e-mail address: an ASCII local part, ``@`` and a dotted host name ending in a top-level
domain of letters (``ops+oncall@kestrel-internal.net``; not ``@marta.v-oncall`` after a name,
not ``lodash@4.17.21``)."""
EMAIL_REACH = r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+"
"""Anything an e-mail address could be (the scrubber's): a local part, ``@`` and a dotted name
in any script, whatever its last part (``user@10.0.0.5``, ``josé@exämple.de``, ``a@b.c``).
Every :data:`EMAIL` ends inside one, from its local part's last ``%`` on (``a%b@x.org`` keeps
``a%``: a ``%`` here would let a match start earlier and leave the end of a chained
``x@y.z@w.org`` behind)."""

# --- Paths --------------------------------------------------------------------------------------

_SEGMENT_CHAR = r"(?:[\w@+.]|-(?!\d+[-:])|(?<=\d)-(?=\d))"
"""A character of a path segment (a hyphen that starts grep's ``-51-`` context marker is none;
one between digits is, as in a dated directory's ``2026-07-06T10-29-36``)."""
_NO_TEMPLATE = r"(?!/?(?:#\{|\$\{|\$[A-Za-z_]|\{|<%|:[a-z_]|<[A-Za-z_])|[-_.]<[A-Za-z_])"
"""What a path is not followed by: a template's placeholder (``/users/#{id}``, ``/x/${y}``,
``/servers/$serverId``, ``/users/:id``, ``/runs/<run-id>/log``, ``/subagents/agent-<id>.jsonl``;
a closing tag, ``/etc/hosts</code>``, is none); nor is what follows ``${DIR}`` a path of its own."""
_NO_GLOB = r"(?![\w@+.-]*\*)"
"""What a directory of a path is not followed by: a segment with a wildcard (the path stops at
``/srv/logs`` in ``/srv/logs/app-*.log``; the rest is a glob)."""
_NO_MENTION = r"(?<![\w.:/~<$#\\}@-]@)"
"""Where a path may start after an ``@``: a mention of a file (``read @src/main.ts``, curl's
``-F file=@/tmp/a.txt``), the ``@`` no part of it; never inside an e-mail address or a longer
token (``bob@host/x``)."""
PATH = (
    # absolute, ~/ or ./ ../ relative
    r"(?<![\w.:/~<$\\}-])" + _NO_MENTION + r"(?>(?:~|\.{1,2})?/(?:" + _SEGMENT_CHAR + r"+/" + _NO_GLOB + r")*"
    + _SEGMENT_CHAR + r"+(?<![.-]))" + _NO_TEMPLATE
    # relative with a file extension (never a diff's a/ b/ prefix)
    + r"|(?<![\w.:/~<$#\\-])" + _NO_MENTION + r"(?![ab]/)(?>[\w+][\w@+.-]*/(?:[\w@+][\w@+.-]*/)*(?:[\w@+]|-(?!\d+[-:]))"
    + _SEGMENT_CHAR + r"*\.[A-Za-z0-9]{1,10})(?![\w/-]|\.\w)" + _NO_TEMPLATE
    # relative, two segments or more and a trailing slash
    + r"|(?<![\w.:/~<$#\\-])" + _NO_MENTION + r"(?![ab]/)[\w+][\w@+.-]*/(?:[\w@+][\w@+.-]*/)+(?=[\s`'\")\],;]|$)")
"""A filesystem path: absolute, ``~/`` or ``./`` relative, or relative with a file extension or
two segments and a trailing slash; never a closing tag (``</summary>``), a diff's ``a/`` ``b/``
prefix, grep's ``-51-`` context marker or a template; an ``@`` before it (a mention) is no part of
it, and a relative path does not start with one."""
LOCAL_PATH = (rf"(?<![\w.:/-])(?:~/|/)(?:[^/{_TOKEN_END}]+/)+[^/{_TOKEN_END}]*"
              rf"|(?<![\w])[A-Za-z]:\\(?:[^\\{_TOKEN_END}]+\\)*[^\\{_TOKEN_END}]*")
"""A path that names a place on a machine (the scrubber's): an absolute POSIX path of two or more
parts, a home-relative path, or a Windows drive path, each part anything but a space, quote or
angle bracket (where :data:`PATH` stops at a comma or a brace, this goes on; a relative path
names no machine and is not one)."""

SHAPES: Mapping[str, str] = MappingProxyType({"url": URL, "email": EMAIL, "path": PATH})
"""The shapes a rule file may use by name (``(?&url)``, ``(?&email)``, ``(?&path)``)."""
