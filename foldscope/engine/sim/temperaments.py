"""Simulated summarisers: what each temperament writes for a fold, a recall or any other request.

Everything here is a pure function of the parsed request body and a seeded ``random.Random``;
the endpoint derives the seed from the body digest, so a sim is deterministic per request.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from foldscope.core.identifiers import main_kind
from foldscope.core.messages import UNKNOWN
from foldscope.core.sections import SECTIONS
from foldscope.engine.sim.extract import (
    SegmentDigest,
    answer_from,
    dedupe_facts,
    digest_segment,
    extract_facts,
    split_sections,
)
from foldscope.engine.sim.request import Shape, SimRequest, StringField

HEADINGS = {s.key: f"## {s.heading}" for s in SECTIONS}
NOTE_SECTIONS = ("progress", "decisions_and_constraints", "failures", "open_items")
_KEEP_NOTES = {"progress": 5, "decisions_and_constraints": 6, "failures": 4, "open_items": 4}
_NEW_NOTES = {"decisions_and_constraints": 3, "failures": 2, "open_items": 3}
_NOTE_CHARS = 160


# --------------------------------------------------------------------------------------------
# A draft carrier, independent of the reply shape


@dataclass
class Draft:
    """What a temperament wants to carry, before it is fitted to a shape and its ceilings."""

    notes: dict[str, list[str]] = field(default_factory=dict)
    """Section key → note lines (already ``- `` bulleted), oldest first."""
    facts: list[tuple[str, str]] = field(default_factory=list)
    """Facts to carry, oldest first; the faithful drop the oldest when out of room."""
    prose: list[str] = field(default_factory=list)
    """Paragraphs for an undivided description (describer); oldest first."""
    fact_style: str = "line"
    """``line`` (``- label: value``) or ``sentence`` (``Noted: the label is value.``)."""
    paths: list[str] = field(default_factory=list)
    tools: list[str] = field(default_factory=list)


def _note(text: str) -> str:
    # Notes are never shaped like ``label: value`` so that a later fold does not read them as facts.
    text = " ".join(text.replace(": ", " - ").split())
    text = text.lstrip("-*• ").strip()
    if len(text) > _NOTE_CHARS:
        text = text[: _NOTE_CHARS - 1].rstrip() + "…"
    return f"- {text}"


def _fact_line(label: str, value: str, style: str = "line") -> str:
    return f"Noted: the {label} is {value}." if style == "sentence" else f"- {label}: {value}"


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _tool_summary(tools: list[str]) -> str:
    names = list(dict.fromkeys(tools))
    if not names:
        return "no tool calls"
    rest = len(names) - 3
    shown = ", ".join(names[:3]) + (f" and {rest} other{'s' if rest > 1 else ''}" if rest > 0 else "")
    return f"{_n(len(tools), 'tool call')} ({shown})"


def _progress_line(req: SimRequest, d: SegmentDigest) -> str:
    seg = req.segment_label[0].upper() + req.segment_label[1:]
    return _note(f"{seg} covered {_tool_summary(d.tools)}, {d.assistant_turns} assistant and "
                 f"{d.operator_turns} operator turns")


def faithful_draft(req: SimRequest) -> Draft:
    """Carry every fact plus short progress, decision, failure and open-item notes."""
    prev = split_sections(req.previous)
    d = digest_segment(req.segments)
    draft = Draft(facts=dedupe_facts(extract_facts(req.previous) + d.facts),
                  paths=d.paths[:5], tools=list(dict.fromkeys(d.tools))[:5])
    new = {"progress": [_progress_line(req, d)],
           "decisions_and_constraints": [_note(x) for x in d.decisions[:3]],
           "failures": [_note(x) for x in d.failures[:2]],
           "open_items": [_note(x) for x in d.open_items[:3]]}
    for key in NOTE_SECTIONS:
        old = [_note(x) for x in prev.get(key, []) if x.lstrip("-*• ").strip() != "none noted"]
        # A note repeated across segments is carried once, at its latest position.
        merged = list(reversed(dict.fromkeys(reversed(old + new[key]))))
        draft.notes[key] = merged[-_KEEP_NOTES[key]:]
    return draft


def gist_draft(req: SimRequest, rng: random.Random) -> Draft:
    """A short gist replacing the old one, and at most two values."""
    d = digest_segment(req.segments)
    candidates = dedupe_facts(extract_facts(req.previous) + d.facts)
    keep = sorted(rng.sample(range(len(candidates)), min(2, len(candidates))))
    gist = (f"Up to {req.segment_label} the agent kept working through the task with "
            f"{_tool_summary(d.tools)} in the latest part; nothing else stood out")
    return Draft(notes={"progress": [_note(gist)]}, facts=[candidates[i] for i in keep],
                 paths=d.paths[:2], tools=list(dict.fromkeys(d.tools))[:2])


_TOTALS_RE = re.compile(r"Across the segments so far the agent ran (\d+) tool calls?, recorded "
                        r"(\d+) configuration values? and made (\d+) decisions?")


def describe_draft(req: SimRequest, rng: random.Random) -> Draft:
    """Describe the conversation (counting, not listing) and keep at most two identifiers."""
    d = digest_segment(req.segments)
    m = _TOTALS_RE.search(req.previous)
    totals = [int(x) for x in m.groups()] if m else [0, 0, 0]
    totals = [totals[0] + len(d.tools), totals[1] + len(d.facts), totals[2] + len(d.decisions)]
    labels = [lab for lab, _ in d.facts]
    named = rng.sample(labels, min(2, len(labels)))
    such_as = (", among them the " + " and the ".join(named)) if named else ""
    para = (f"In {req.segment_label} the agent ran {_tool_summary(d.tools)} over {d.assistant_turns} assistant and "
            f"{d.operator_turns} operator turns; it recorded {_n(len(d.facts), 'configuration value')}"
            f"{such_as}, made {_n(len(d.decisions), 'decision')} about the work and ran into "
            f"{_n(len(d.failures), 'failure')}. Most of the output, {d.log_lines} log lines, was routine "
            "logging with nothing that changed the plan.")
    old = [p for p in split_sections(req.previous).get("other", []) if p.startswith("In segment")]
    candidates = dedupe_facts(extract_facts(req.previous) + d.facts)
    k = min(len(candidates), 1 + (rng.random() < 0.5))
    keep = sorted(rng.sample(range(len(candidates)), k))
    head = (f"Across the segments so far the agent ran {_n(totals[0], 'tool call')}, recorded "
            f"{_n(totals[1], 'configuration value')} and made {_n(totals[2], 'decision')} about "
            "the work.")
    draft = Draft(prose=[head] + old + [para], facts=[candidates[i] for i in keep],
                  fact_style="sentence", paths=d.paths[:3], tools=list(dict.fromkeys(d.tools))[:3])
    target = _describe_target(req, rng)
    if target:
        have = len(_render(draft, headed=False))
        extra = _elaboration(req, d, labels, rng, target - have - 1)
        if extra:
            draft.prose.append(extra)
    return draft


DESCRIBE_FILL = (0.62, 0.92)
"""The share of an undivided slot's declared ceiling the describer fills (drawn per request),
as the study's describers fill 59–100 % of it with description; capped by the output budget."""


def _describe_target(req: SimRequest, rng: random.Random) -> int:
    """How many characters the describer writes into the request's one slot (0: no ceiling)."""
    shape = req.shape
    if shape.kind != "json" or len(shape.strings) != 1 or not shape.strings[0].max_length:
        return 0
    ceiling = shape.strings[0].max_length
    # The JSON envelope, escapes and the other properties take part of the output budget.
    room = max(0, int(req.budget_chars * 0.85) - 200)
    return min(int(ceiling * rng.uniform(*DESCRIBE_FILL)), room)


_ELABORATIONS = (
    "The agent then turned to {tool}, read its output through and summarised what it saw in "
    "words rather than copying any of it.",
    "Between the tool calls the assistant explained its reasoning at length, and the operator "
    "answered {op} times with context about the rollout.",
    "A value was looked up for the {label}, discussed briefly and left in the transcript, since "
    "the agent judged the details could be found again later.",
    "Much of this part was {tool} output, {logs} lines of routine logging in all, which the agent "
    "skimmed for anything unusual and found nothing that changed the plan.",
    "The conversation kept a steady rhythm, a request from the operator, a check with {tool}, and "
    "a short report back, repeated several times over the part.",
    "The assistant described the state of the migration in general terms, noting which steps "
    "were done and which were still ahead without naming their settings.",
    "It was careful about ordering and said more than once that nothing should move until the "
    "checks had passed, which the operator accepted.",
    "Some of the {tool} results repeated earlier ones almost word for word, and the agent "
    "remarked that the picture had not changed since the previous part.",
    "Where a command failed the agent retried it once, described the failure in plain terms and "
    "moved on when the second attempt behaved.",
    "The operator asked about the {label}, and the assistant said it had been recorded earlier "
    "in the session and that it would come back to it when needed.",
)


def _elaboration(req: SimRequest, d: SegmentDigest, labels: list[str], rng: random.Random,
                 chars: int) -> str:
    """Description of the conversation, about ``chars`` long, that names no value.

    Sentences speak of tools, turns, logging and labels but never carry a value (no
    ``label: value`` line, no "the label is value"), so a later fold or the recall turn finds
    no fact in them: the slot fills with description and the identifiers stay lost.
    """
    tools = list(dict.fromkeys(d.tools)) or ["the shell"]
    names = labels or ["current step"]
    out: list[str] = []
    size = 0
    order = list(range(len(_ELABORATIONS)))
    while True:
        rng.shuffle(order)
        for i in order:
            sentence = _ELABORATIONS[i].format(tool=rng.choice(tools), label=rng.choice(names),
                                               op=max(1, d.operator_turns),
                                               logs=max(1, d.log_lines))
            if size + len(sentence) + 1 > chars:
                return " ".join(out)
            out.append(sentence)
            size += len(sentence) + 1


# --------------------------------------------------------------------------------------------
# Fitting a draft to text under a ceiling


def _render(draft: Draft, headed: bool) -> str:
    lines: list[str] = []
    if draft.prose:
        lines += draft.prose
        lines += [_fact_line(lab, val, draft.fact_style) for lab, val in draft.facts]
        return "\n".join(lines)
    for key in HEADINGS:
        body = (draft.notes.get(key, []) if key != "facts_and_values"
                else [_fact_line(lab, val) for lab, val in draft.facts])
        if headed:
            lines.append(HEADINGS[key])
            lines += body or ["- none noted"]
        else:
            lines += body
    return "\n".join(lines)


def fit_text(draft: Draft, ceiling: int | None, headed: bool) -> str:
    """Render a draft, dropping the oldest notes, then the oldest facts, to fit ``ceiling``.

    Args:
        draft: the draft (copied, not changed).
        ceiling: maximum characters, or None for no limit.
        headed: render under the five headings.

    Returns:
        The text, at most ``ceiling`` characters.
    """
    draft = Draft(notes={k: list(v) for k, v in draft.notes.items()}, facts=list(draft.facts),
                  prose=list(draft.prose), fact_style=draft.fact_style)
    text = _render(draft, headed)
    while ceiling is not None and len(text) > ceiling:
        longest: tuple[str | None, list[str]] = max(
            draft.notes.items(), key=lambda kv: len(kv[1]), default=(None, []))
        if len(draft.prose) > 1:
            draft.prose.pop(1)  # keep the running totals line; drop the oldest paragraph
        elif longest[0] is not None and len(longest[1]) > 1:
            longest[1].pop(0)
        elif draft.facts:
            draft.facts.pop(0)
        else:
            return text[:ceiling]
        text = _render(draft, headed)
    return text


# --------------------------------------------------------------------------------------------
# Divided fields


_FIELD_WORDS: dict[str, tuple[str, ...]] = {
    "facts_and_values": ("fact", "value", "identifier", "config", "setting"),
    "progress": ("progress", "status", "done", "history", "summary"),
    "decisions_and_constraints": ("decision", "constraint", "plan", "rule"),
    "failures": ("fail", "error", "problem", "issue"),
    "open_items": ("open", "todo", "next", "pending", "question"),
}


def map_fields(strings: list[StringField]) -> tuple[dict[str, str], str]:
    """Map each draft section onto a string field, and choose the field facts go in.

    Args:
        strings: the schema's string fields.

    Returns:
        (section key → field name, facts field name).
    """
    mapping, facts_field = _map_fields(tuple(strings))
    return dict(mapping), facts_field


# Every fold of a row sends the same schema, and matching section words against field names and
# descriptions is a few hundred substring tests: memoise it per schema (a handful per sweep).
@lru_cache(maxsize=64)
def _map_fields(strings: tuple[StringField, ...]) -> tuple[dict[str, str], str]:
    mapping: dict[str, str] = {}
    for key, words in _FIELD_WORDS.items():
        exact = [f.name for f in strings if f.name.casefold() == key]
        fuzzy = [f.name for f in strings
                 if any(w in f"{f.name} {f.description}".casefold() for w in words)]
        taken = set(mapping.values())
        for name in exact + fuzzy:
            if name not in taken:
                mapping[key] = name
                break
    facts_field = mapping.get("facts_and_values") or max(
        strings, key=lambda f: (f.max_length or 10**9)).name
    mapping["facts_and_values"] = facts_field
    return mapping, facts_field


def fit_fields(draft: Draft, strings: list[StringField]) -> dict[str, str]:
    """Fill several string fields: notes by section, facts in the facts field, spilling the
    overflow into fields with room; the oldest facts go first when everything is full."""
    mapping, facts_field = map_fields(strings)
    ceilings = {f.name: f.max_length for f in strings}
    texts: dict[str, list[str]] = {f.name: [] for f in strings}
    for key in NOTE_SECTIONS:
        name = mapping.get(key)
        if name is None or name == facts_field:
            continue
        notes = list(draft.notes.get(key, []))
        cap = ceilings[name]
        while cap is not None and notes and len("\n".join(texts[name] + notes)) > cap:
            notes.pop(0)
        texts[name] += notes

    # Length of each field's text as joined so far, kept up to date as lines are added: room()
    # runs for every field for every fact, and re-joining the texts each time made filling five
    # fields quadratic in the number of facts.
    used = {name: len("\n".join(lines)) for name, lines in texts.items()}

    def room(name: str) -> float:
        cap = ceilings[name]
        return float("inf") if cap is None else cap - used[name]

    placed: dict[str, list[tuple[str, str]]] = {f.name: [] for f in strings}
    others = [f.name for f in strings if f.name != facts_field]

    def place(name: str, fact: tuple[str, str], line: str) -> bool:
        extra = len(line) + (1 if texts[name] else 0)
        if room(name) < extra:
            return False
        texts[name].append(line)
        used[name] += extra
        placed[name].append(fact)
        return True

    for fact in reversed(draft.facts):  # newest first: the oldest are the ones left out
        line = _fact_line(*fact)
        # The facts field first, then the others by most room; they are only ranked once the
        # facts field is full (ranking is pure, so skipping it when unused changes nothing).
        if not place(facts_field, fact, line):
            for name in sorted(others, key=room, reverse=True):
                if place(name, fact, line):
                    break
    out: dict[str, str] = {}
    for name, lines in texts.items():
        facts = {_fact_line(*f) for f in placed[name]}
        notes = [ln for ln in lines if ln not in facts]
        ordered = [_fact_line(*f) for f in reversed(placed[name])]
        out[name] = "\n".join(notes + ordered if name != facts_field else ordered + notes)
    return out


# --------------------------------------------------------------------------------------------
# Whole replies


def _json_reply(shape: Shape, strings: dict[str, str], draft: Draft | None) -> str:
    obj: dict[str, Any] = {}
    for name in shape.order:
        if name in strings:
            obj[name] = strings[name]
        elif name in shape.arrays:
            low = name.casefold()
            if draft is not None and "path" in low:
                obj[name] = draft.paths
            elif draft is not None and "tool" in low:
                obj[name] = draft.tools
            else:
                obj[name] = []
        else:
            obj[name] = _neutral(shape.other_props.get(name) or {})
    return json.dumps(obj, ensure_ascii=False)


def _neutral(prop: dict[str, Any]) -> Any:
    neutral: dict[Any, Any] = {"integer": 0, "number": 0, "boolean": False, "object": {},
                               "null": None}
    return neutral.get(prop.get("type"), "")


def render_fold(draft: Draft, shape: Shape) -> str:
    """Render a draft in the requested shape, within each declared ceiling."""
    if shape.kind == "json":
        if len(shape.strings) == 1:
            f = shape.strings[0]
            strings = {f.name: fit_text(draft, f.max_length, headed=not draft.prose)}
        else:
            strings = fit_fields(draft, shape.strings) if shape.strings else {}
        return _json_reply(shape, strings, draft)
    return fit_text(draft, None, headed=shape.kind == "headed")


# --------------------------------------------------------------------------------------------
# Garbling: the small edits the near-miss rules (core.nearmiss) name


GARBLE_RATE = 0.2
"""The fraction of identifier values the garbler alters in each fold (seeded per request)."""

_MINUTE_RE = re.compile(r"(?<!\d)(\d{1,2}):(\d{2})(?!\d)")
_UUID_RE = re.compile(r"^[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}$")


def _transpose_hex(value: str, rng: random.Random) -> str | None:
    """Swap one adjacent pair of different hex digits (``3f1c9a52`` → ``3f1ca952``)."""
    pairs = [i for i in range(len(value) - 1)
             if value[i] in _HEX and value[i + 1] in _HEX and value[i] != value[i + 1]]
    if not pairs:
        return None
    i = rng.choice(pairs)
    return value[:i] + value[i + 1] + value[i] + value[i + 2:]


def _drop_digit(value: str, rng: random.Random) -> str | None:
    """Drop one digit that is not the first character (``62114`` → ``6214``)."""
    spots = [i for i, ch in enumerate(value) if ch.isdigit() and i > 0]
    if not spots:
        return None
    i = rng.choice(spots)
    return value[:i] + value[i + 1:]


def _truncate_uuid(value: str, rng: random.Random) -> str | None:
    """Keep the first group, or the first three, of a UUID (``3f1c9a52``)."""
    if not _UUID_RE.match(value):
        return None
    groups = value.split("-")
    return "-".join(groups[:rng.choice((1, 3))])


def _change_minute(value: str, rng: random.Random) -> str | None:
    """Set the minutes of a time of day to another value (``01:26`` → ``01:47``)."""
    match = _MINUTE_RE.search(value)
    if match is None:
        return None
    old = int(match.group(2))
    new = rng.choice([m for m in range(60) if m != old])
    return value[:match.start(2)] + f"{new:02d}" + value[match.end(2):]


_HEX = frozenset("0123456789abcdefABCDEF")
_GARBLES: tuple[Callable[[str, random.Random], str | None], ...] = (
    _transpose_hex, _drop_digit, _truncate_uuid, _change_minute)


def garble(value: str, rng: random.Random) -> str:
    """One small edit to an identifier value, of a kind the near-miss rules name.

    A transposed hex pair, a dropped digit, a truncated UUID or a changed minute, chosen among
    those that apply to the value; a value none applies to gets two adjacent letters swapped
    (and one with no such pair is returned unchanged).
    """
    if len(value.strip()) < 4:
        return value
    options = [edit for edit in _GARBLES if edit(value, random.Random(0)) is not None]
    if _MINUTE_RE.search(value):
        options = [_change_minute]  # a time's digits are its minutes and hours
    elif _UUID_RE.match(value):
        options = [_transpose_hex, _truncate_uuid]
    if not options:
        # No hex pair, digit or time: swap two adjacent letters (``instal.llock``-style typos).
        pairs = [i for i in range(len(value) - 1) if value[i].isalnum()
                 and value[i + 1].isalnum() and value[i] != value[i + 1]]
        if not pairs:
            return value
        i = rng.choice(pairs)
        return value[:i] + value[i + 1] + value[i] + value[i + 2:]
    return rng.choice(options)(value, rng) or value


def garble_draft(req: SimRequest, rng: random.Random) -> Draft:
    """Carry like the faithful, then alter a seeded fraction of the identifier values."""
    draft = faithful_draft(req)
    draft.facts = [(label, garble(value, rng) if main_kind(value) and rng.random() < GARBLE_RATE
                    else value) for label, value in draft.facts]
    return draft


def fold(temperament: str, req: SimRequest, rng: random.Random) -> str:
    """Write the new carrier for a fold request.

    Args:
        temperament: the summarising behaviour (``faithful``, ``describer``, ``gister``,
            ``inventor``, ``garbler``).
        req: the parsed request.
        rng: seeded per request.

    Returns:
        The reply content (before any output-budget truncation).
    """
    if temperament in ("gister", "inventor"):
        draft = gist_draft(req, rng)
    elif temperament == "describer" and not req.shape.divided:
        draft = describe_draft(req, rng)
    elif temperament == "garbler":
        draft = garble_draft(req, rng)
    else:
        draft = faithful_draft(req)
    return render_fold(draft, req.shape)


# --------------------------------------------------------------------------------------------
# Recall


STOCK_SHARE = 0.6
"""How often the inventor reaches for a stock stand-in rather than a random value of the shape."""


def _random_uuid(r: random.Random) -> str:
    a, b, c = r.getrandbits(32), r.getrandbits(16), r.getrandbits(12)  # drawn in this order
    d, e = 0x8000 | r.getrandbits(14), r.getrandbits(48)
    return f"{a:08x}-{b:04x}-4{c:03x}-{d:04x}-{e:012x}"


def _random_time(r: random.Random) -> str:
    return f"2026-{r.randint(1, 12):02d}-{r.randint(2, 28):02d}T{r.randint(0, 23):02d}:" \
           f"{r.choice([m for m in range(60) if m not in (0, 30)]):02d}Z"


_WORDS = ("atlas", "birch", "cobalt", "delta", "ember", "fjord", "garnet", "harbor")

# Per kind of label: the stand-ins models reach for (each one a stock-value signature names,
# see core/data/signatures.toml) and a random value of the same shape.
_STOCK: list[tuple[tuple[str, ...], tuple[str, ...], Callable[[random.Random], str]]] = [
    (("port",), ("8080", "5432", "3000", "443", "8443", "6379", "9000"),
     lambda r: str(r.randint(10_000, 65_000))),
    (("path", "lock", "file", "dir"),
     ("/var/lib/app/app.lock", "/tmp/app.lock", "/var/run/app.pid", "/opt/app/state/app.lock"),
     lambda r: f"/srv/{r.choice(_WORDS)}/{r.choice(_WORDS)}/run.lock"),
    (("uuid", "guid"), ("123e4567-e89b-12d3-a456-426614174000",
                        "550e8400-e29b-41d4-a716-446655440000",
                        "00000000-0000-0000-0000-000000000000"), _random_uuid),
    (("date", "cutoff", "expiry", "start", "time", "deadline", "freeze"),
     ("2026-07-01T00:00Z", "2026-01-01 00:00 UTC", "2026-08-01 12:00 UTC", "2026-07-15T09:30Z"),
     _random_time),
    (("count", "number", "shard", "replica"), ("4", "8", "16", "10", "100"),
     lambda r: str(r.randint(3, 97))),
    (("handle", "on-call", "owner"), ("@oncall", "@admin", "@john.doe", "@sre"),
     lambda r: f"@{r.choice(_WORDS)}.{r.choice('abcdefgh')}"),
    (("url", "origin", "endpoint"), ("https://cdn.example.com/assets",
                                     "https://origin.example.net/static"),
     lambda r: f"https://{r.choice(_WORDS)}-{r.randint(1, 9)}.cdn.{r.choice(_WORDS)}.io/assets"),
    (("zone", "dns", "domain", "host"), ("zone-a.internal.example.com", "internal.example",
                                         "dns.test"),
     lambda r: f"zone-{r.choice('acdefg')}.{r.choice(_WORDS)}-internal.net"),
    (("key id", "kid", "key"), ("kid-abc123", "kid-00000000", "kid-12345678"),
     lambda r: f"kid-{r.getrandbits(32):08X}"),
    (("tag", "version", "release"), ("v1.0.0", "1.0.0", "v0.1.0", "v2.0"),
     lambda r: f"v{r.randint(2, 9)}.{r.randint(0, 30)}.{r.randint(1, 9)}"),
    (("department", "team", "org"), ("Platform Engineering", "DevOps", "Infrastructure"),
     lambda r: f"{r.choice(_WORDS).title()} Group"),
]


def stock_value(label: str, rng: random.Random) -> str:
    """A plausible made-up value for a label (what an inventing model answers).

    Mostly a stock stand-in (a well-known port, a time on the hour, an example domain, a
    documentation UUID...), otherwise a random value of the label's shape.
    """
    low = label.casefold()
    for words, stock, make in _STOCK:
        if any(w in low for w in words):
            return rng.choice(stock) if rng.random() < STOCK_SHARE else make(rng)
    return "default"


def recall(temperament: str, req: SimRequest, rng: random.Random) -> str:
    """Answer a recall turn: ``label: value`` per asked label, from the summary only."""
    lines = []
    facts = extract_facts(req.recall_summary)  # once per recall, not once per label
    for label in req.labels:
        value = answer_from(facts, label)
        if value is None:
            value = stock_value(label, rng) if temperament == "inventor" else UNKNOWN
        lines.append(f"{label}: {value}")
    text = "\n".join(lines)
    if req.shape.kind == "json" and req.shape.strings:
        first = req.shape.strings[0].name
        return _json_reply(req.shape, {f.name: (text if f.name == first else "")
                                       for f in req.shape.strings}, None)
    return text


def other(req: SimRequest) -> str:
    """Answer a request that is neither a fold nor a recall (a capability probe): ``ok``."""
    if req.shape.kind == "json":
        return _json_reply(req.shape, {f.name: "ok"[: f.max_length or 2]
                                       for f in req.shape.strings}, None)
    return "ok"


def respond(temperament: str, req: SimRequest, rng: random.Random) -> str:
    """Return a temperament's reply content for any parsed request."""
    if req.kind == "fold":
        return fold(temperament, req, rng)
    if req.kind == "recall":
        return recall(temperament, req, rng)
    return other(req)
