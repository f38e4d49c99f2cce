"""The evidence package: export sanitised, verifiable records of one or more databases; verify one.

A package is a folder:

- ``rows.csv`` and ``checks.csv`` — the row- and check-level records (answer text only up to a
  prefix);
- ``aggregates.csv``, ``contrasts.csv`` and ``study.csv`` — every figure, computed from those two
  files by ``core.evidence`` (``study.csv``: the pooled ICC and DE, the headings and fill
  correlations and the paired ceiling contrast per sweep × scenario);
- ``config.json`` — each sweep's definition and endpoint pins, sanitised (``core.sanitize``);
- ``provenance.lock.json`` — sha256 of what is not released (database files and contents, full
  answers, carriers, raw configurations), so a holder of the originals can show they match;
- ``manifest.json`` — the sha256 of every other file and the package digest, which binds them
  all (``package_digest``; README.txt states it too, and ``export`` prints it).

The databases are read through the small queries below (read-only), never through the runner's
record types, so the package format does not move when the store's internals do.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import shutil
import stat
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from foldscope.core.errors import EvidenceError
from foldscope.core.evidence import (
    AGGREGATE_COLUMNS,
    CELL_KEY,
    CHECK_COLUMNS,
    CONTRAST_COLUMNS,
    CONTRAST_KEY,
    ROW_COLUMNS,
    STUDY_COLUMNS,
    STUDY_KEY,
    aggregates,
    compare,
    contrasts,
    fmt,
    parse_checks,
    parse_rows,
    row_problems,
    study_figures,
)
from foldscope.core.nesting import NestingError, loads_json
from foldscope.core.sanitize import holds_key, sanitize_config, scrub_answer, scrub_text
from foldscope.engine.integrity import refuse_unsound
from foldscope.engine.options import DEFAULT_ANSWER_PREFIX
from foldscope.engine.store import Store

MANIFEST = "manifest.json"
PACKAGE_FILES: tuple[str, ...] = ("rows.csv", "checks.csv", "aggregates.csv", "contrasts.csv",
                                  "study.csv", "config.json", "provenance.lock.json",
                                  "README.txt")
"""Every file of a package besides the manifest, which lists them with their sha256."""

FORMAT = "foldscope-evidence/2"
"""The package format (2: rows.csv's final-carrier columns, study.csv, the package digest)."""

DIGEST_LABEL = "package digest: sha256:"
"""How README.txt states the package digest (the line that ends with the 64 hex digits)."""
_DIGEST_BLANK = "0" * 64

_KEY_ENVS = ("OPENROUTER_API_KEY", "OPENAI_API_KEY")


# -- reading databases: small named queries ---------------------------------------------------

def query_sweeps(store: Store) -> list[dict[str, Any]]:
    """Every sweep with its raw configuration and pins, oldest first."""
    return store.export_repo.export_sweeps()


def query_rows(store: Store, sweep_id: str) -> list[dict[str, Any]]:
    """Every row of a sweep in execution order, with its answer and stored validity verdict."""
    return store.export_repo.export_rows(sweep_id)


def query_checks(store: Store, sweep_id: str) -> Iterator[dict[str, Any]]:
    """Every check of a sweep's rows, in row and check order, read as iterated."""
    return store.export_repo.export_checks(sweep_id)


def query_final_folds(store: Store, sweep_id: str) -> dict[int, dict[str, Any]]:
    """Each row's last committed fold's measures, by row id: the carrier the recall read."""
    return store.export_repo.export_final_folds(sweep_id)


def query_carriers(store: Store, sweep_id: str) -> Iterator[dict[str, Any]]:
    """Every fold's reply and carrier of a sweep (hashed into the lock, never released), read
    as iterated."""
    return store.export_repo.export_carriers(sweep_id)


_CONTENT_JSON = json.JSONEncoder(ensure_ascii=False, sort_keys=True, default=str)
"""How a database's content digest encodes what it read (``json.dumps`` with these options)."""


# -- writing ----------------------------------------------------------------------------------

def sha256_file(path: Path) -> str:
    """The sha256 of a file's bytes, read in blocks."""
    h = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _csv_text(columns: Sequence[str], records: Iterable[dict[str, str]]) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(columns), lineterminator="\n")
    writer.writeheader()
    for rec in records:
        writer.writerow(rec)
    return buffer.getvalue()


def _secret_values(configs: Iterable[dict[str, Any]]) -> list[str]:
    """API keys present in this process's environment under any name a configuration uses."""
    names = set(_KEY_ENVS)
    for config in configs:
        for model in config.get("models", []):
            if isinstance(model, dict) and isinstance(model.get("api_key_env"), str):
                names.add(model["api_key_env"])
    return [os.environ[n] for n in sorted(names) if len(os.environ.get(n, "")) >= 6]


def _private_strings(configs: Iterable[dict[str, Any]], db_paths: Sequence[Path]) -> list[str]:
    """Values that must not appear anywhere in a package: endpoints that are not public and
    the databases' paths."""
    from foldscope.core.sanitize import public_url

    out = [str(p.resolve()) for p in db_paths]
    for config in configs:
        for model in config.get("models", []):
            url = model.get("base_url") if isinstance(model, dict) else None
            if isinstance(url, str) and url and not public_url(url):
                out.append(url)
    return [s for s in out if len(s) > 3]


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("foldscope")
    except PackageNotFoundError:
        return "unknown"


@dataclass(frozen=True)
class ExportSummary:
    """What an export wrote."""

    out: Path
    sweeps: int
    rows: int
    checks: int
    cells: int
    contrasts: int
    digest: str = ""
    """The package digest (``package_digest``)."""


def export_package(db_paths: Sequence[str | Path], out: str | Path, *,
                   answer_prefix: int = DEFAULT_ANSWER_PREFIX) -> ExportSummary:
    """Write an evidence package of every sweep in the given databases.

    Args:
        db_paths: the databases (a study sharded over machines is several).
        out: the package folder; created, and must be empty if it exists.
        answer_prefix: characters of each answer to release (0 releases none).

    Returns:
        Counts of what was written.

    Raises:
        EvidenceError: a bad output folder or prefix, or the same sweep in two databases.
        StoreError: a database cannot be opened.
    """
    if answer_prefix < 0:
        raise EvidenceError(f"--answer-prefix must be 0 or more, got {answer_prefix}")
    out = Path(out)
    try:
        if out.exists() and (not out.is_dir() or any(out.iterdir())):
            raise EvidenceError(f"{out}: output folder exists and is not empty")
    except OSError as exc:
        raise EvidenceError(f"{out}: cannot use as the output folder "
                            f"({exc.strerror or type(exc).__name__})") from None
    paths = [Path(p) for p in db_paths]
    if len(set(p.resolve() for p in paths)) != len(paths):
        raise EvidenceError("the same database is given twice")

    # First every database's sweeps: their configurations say which values are secret, and a
    # sweep given twice is refused before anything is written.
    databases: list[tuple[str, Path, list[dict[str, Any]]]] = []
    configs: list[dict[str, Any]] = []
    raw_configs: list[dict[str, Any]] = []
    lock: dict[str, Any] = {"databases": [], "configs": {}, "answers": {}, "carriers": {}}
    seen_sweeps: dict[str, str] = {}
    for index, path in enumerate(paths, start=1):
        source = f"db{index}"
        refuse_unsound(path, "export")
        with Store(path, readonly=True) as store:
            sweeps = query_sweeps(store)
        for sweep in sweeps:
            if sweep["id"] in seen_sweeps:
                raise EvidenceError(f"sweep {sweep['id']} is in both {seen_sweeps[sweep['id']]} "
                                    f"and {path}: give each database once")
            seen_sweeps[sweep["id"]] = str(path)
            config, pins = loads_json(sweep["config_json"]), loads_json(sweep["pins_json"])
            raw_configs.append(config)
            lock["configs"][sweep["id"]] = _sha(sweep["config_json"] + sweep["pins_json"])
            configs.append({"source": source, "sweep": sweep["id"], "config": config,
                            "pins": pins, "status": sweep["status"],
                            "simulated": bool(sweep["simulated"]), "name": sweep["name"]})
        databases.append((source, path, sweeps))
    secrets = _secret_values(raw_configs)
    forbidden = secrets + _private_strings(raw_configs, paths)

    # Then the records, streamed: rows.csv and checks.csv are written as they are read (each
    # record scrubbed, hashed and searched for private values on the way), never held whole.
    tmp = _partial_folder(out)
    try:
        try:
            rows_csv = _CSVStream(tmp / "rows.csv", ROW_COLUMNS, forbidden)
            checks_csv = _CSVStream(tmp / "checks.csv", CHECK_COLUMNS, forbidden)
            with rows_csv, checks_csv:
                for source, path, sweeps in databases:
                    lock["databases"].append(_stream_database(
                        source, path, sweeps, rows_csv, checks_csv, lock, answer_prefix,
                        secrets))
        except OSError as exc:
            raise EvidenceError(f"{out}: cannot write the package "
                                f"({exc.strerror or type(exc).__name__}); nothing was written"
                                ) from None
        released_config = {"foldscope_version": _version(),
                           "sweeps": [sanitize_config(c, secrets) for c in configs]}
        files = _figure_texts(tmp, released_config, lock, answer_prefix)
        for name in PACKAGE_FILES:
            text = files.get(name)
            private = ({"rows.csv": rows_csv, "checks.csv": checks_csv}[name].private
                       if text is None else
                       holds_key(text) or any(value in text for value in forbidden))
            if private:
                raise EvidenceError(f"refusing to write the package: {name} would contain a "
                                    "private value (an endpoint, a path or a key)")
        hashes = {name: _sha_bytes(_digest_form(name, text.encode("utf-8")))
                  for name, text in files.items()}
        hashes.update({"rows.csv": rows_csv.sha256, "checks.csv": checks_csv.sha256})
        digest = package_digest(hashes)
        files["README.txt"] = _stamp(files["README.txt"], digest)
        _write_package(out, tmp, files, digest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return ExportSummary(out=out, sweeps=len(configs), rows=rows_csv.records,
                         checks=checks_csv.records,
                         cells=files["aggregates.csv"].count("\n") - 1,
                         contrasts=files["contrasts.csv"].count("\n") - 1, digest=digest)


_PRIVATE_TAIL = 4096
"""Characters of a streamed file searched again with the next piece (from a line's start), so a
private value across two pieces is found as in the whole text."""


class _CSVStream:
    """One CSV file of the package written as its records come: each piece of text is hashed,
    searched for private values (``holds_key`` and the forbidden strings, over the piece and
    the end of the one before it) and written, in UTF-8, as ``_csv_text`` would write it."""

    PIECE = 1 << 20
    """Characters gathered before a piece is written."""

    def __init__(self, path: Path, columns: Sequence[str], forbidden: Sequence[str]) -> None:
        self.path = path
        self.forbidden = [v for v in forbidden if v]
        self.keep = max([_PRIVATE_TAIL, *(len(v) for v in self.forbidden)])
        self._handle = path.open("wb")
        self._hash = hashlib.sha256()
        self._buffer = io.StringIO()
        self._writer = csv.writer(self._buffer, lineterminator="\n")
        self._writer.writerow(columns)
        self._tail = ""
        self.private = False
        """Whether any text written holds a key or a forbidden value."""
        self.records = 0

    def write(self, values: Sequence[str]) -> None:
        """One record, in the columns' order."""
        self._writer.writerow(values)
        self.records += 1
        if self._buffer.tell() >= self.PIECE:
            self._flush()

    def _flush(self) -> None:
        text = self._buffer.getvalue()
        self._buffer.seek(0)
        self._buffer.truncate()
        if not text:
            return
        window = self._tail + text
        if not self.private and (holds_key(window)
                                 or any(v in window for v in self.forbidden)):
            self.private = True
        # The next search starts at the beginning of a line at least ``keep`` characters back.
        cut = window.rfind("\n", 0, max(0, len(window) - self.keep)) + 1
        self._tail = window[cut:]
        data = text.encode("utf-8")
        self._hash.update(data)
        self._handle.write(data)

    @property
    def sha256(self) -> str:
        """The sha256 of every byte written (once closed)."""
        return self._hash.hexdigest()

    def __enter__(self) -> _CSVStream:
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            if exc[0] is None:
                self._flush()
        finally:
            self._handle.close()


def _stream_database(source: str, path: Path, sweeps: list[dict[str, Any]],
                     rows_csv: _CSVStream, checks_csv: _CSVStream, lock: dict[str, Any],
                     answer_prefix: int, secrets: Sequence[str]) -> dict[str, Any]:
    """Write one database's rows and checks, and return its entry in the provenance lock (its
    content digest reads ``json.dumps([sweep, rows, checks])`` of each sweep piece by piece)."""
    content = hashlib.sha256()
    labels: dict[str, str] = {}
    with Store(path, readonly=True) as store:
        for sweep in sweeps:
            carriers: dict[int, Any] = {}
            for fold in query_carriers(store, sweep["id"]):
                h = carriers.setdefault(fold["row_id"], hashlib.sha256())
                h.update(json.dumps([fold["fold_index"], fold["reply"], fold["carrier"]],
                                    ensure_ascii=False).encode("utf-8"))
            content.update(("[" + _CONTENT_JSON.encode(sweep) + ", [").encode("utf-8"))
            n = 0
            for rows in store.export_repo.export_row_batches(sweep["id"]):
                finals = store.export_repo.export_final_folds_of([r["id"] for r in rows])
                for r in rows:
                    content.update(((", " if n else "") + _CONTENT_JSON.encode(r)).encode("utf-8"))
                    n += 1
                    row_id = f"{source}-{r['id']}"
                    if r["answer"] is not None:
                        lock["answers"][row_id] = _sha(r["answer"])
                    if r["id"] in carriers:
                        lock["carriers"][row_id] = carriers.pop(r["id"]).hexdigest()
                    rec = _row_record(source, sweep["id"], row_id, r, answer_prefix,
                                      finals.get(r["id"]))
                    # Scrub what came from model output and error text.
                    rec["answer_prefix"] = scrub_answer(rec["answer_prefix"], secrets)
                    rec["validity_reason"] = scrub_text(rec["validity_reason"], secrets)
                    for column in ("sweep", "scenario", "model", "arm"):
                        rec[column] = scrub_text(rec[column], secrets)
                    rows_csv.write([rec[c] for c in ROW_COLUMNS])
            content.update(b"], [")
            for n, c in enumerate(query_checks(store, sweep["id"])):
                content.update(((", " if n else "") + _CONTENT_JSON.encode(c)).encode("utf-8"))
                label = c["label"]
                if label not in labels:
                    labels[label] = scrub_text(label, secrets)
                checks_csv.write((
                    f"{source}-{c['row_id']}", labels[label], fmt(int(c["correct"])),
                    fmt(int(c["abstained"])), fmt(int(c["unit_dropped"])), c["classification"],
                    fmt(int(c["in_carrier"])), fmt(int(c["flagged"]))))
            content.update(b"]]")
    return {"source": source, "file_sha256": sha256_file(path), "bytes": path.stat().st_size,
            "content_sha256": content.hexdigest(), "sweeps": [s["id"] for s in sweeps]}


# -- the package digest -----------------------------------------------------------------------

def _sha_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _digest_form(name: str, data: bytes) -> bytes:
    """A file's bytes as the package digest reads them: README.txt with the digest it states
    blanked (it cannot contain its own digest), every other file as it is."""
    if name != "README.txt":
        return data
    text = data.decode("utf-8", errors="replace")
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if line.startswith(DIGEST_LABEL):
            lines[i] = DIGEST_LABEL + _DIGEST_BLANK
    return "\n".join(lines).encode("utf-8")


def package_digest(hashes: dict[str, str]) -> str:
    """The package digest: sha256 of the sorted ``name sha256`` lines of every file but the
    manifest (README.txt read with its stated digest blanked, ``_digest_form``).

    It binds every file at once: change any byte of any file, config.json and
    provenance.lock.json included, and it changes. The manifest and README.txt both state it,
    and ``export`` prints it, so a package whose manifest was re-hashed after an edit no longer
    matches the digest README.txt states, nor the one its author published.
    """
    listing = "".join(f"{name} {hashes[name]}\n" for name in sorted(hashes))
    return _sha_bytes(listing.encode("utf-8"))


def _stamp(readme: str, digest: str) -> str:
    return readme.replace(DIGEST_LABEL + _DIGEST_BLANK, DIGEST_LABEL + digest)


def stated_digest(readme: str) -> str | None:
    """The package digest README.txt states, or None when it states none."""
    for line in readme.split("\n"):
        if line.startswith(DIGEST_LABEL):
            return line[len(DIGEST_LABEL):].strip()
    return None


def _partial_folder(out: Path) -> Path:
    """The temporary folder beside ``out`` a package is written into (then renamed to ``out``),
    created empty."""
    tmp = out.parent / f".{out.name}.partial-{os.getpid()}"
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        if tmp.exists():
            shutil.rmtree(tmp)
        tmp.mkdir()
    except OSError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        raise EvidenceError(f"{out}: cannot write the package "
                            f"({exc.strerror or type(exc).__name__}); nothing was written"
                            ) from None
    return tmp


def _write_package(out: Path, tmp: Path, files: dict[str, str], digest: str) -> None:
    """Write the files and their manifest (with the package digest) into the temporary folder
    beside ``out`` that holds the streamed ones (``_partial_folder``), then rename it to
    ``out``: a full disk, a read-only folder or a kill leaves no partial package (only the
    temporary folder is removed)."""
    try:
        for name, text in files.items():
            (tmp / name).write_text(text, encoding="utf-8", newline="")
        names = sorted(p.name for p in tmp.iterdir())
        manifest = {"format": FORMAT,
                    "files": {name: sha256_file(tmp / name) for name in names},
                    "package_sha256": digest}
        (tmp / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
        for name in (*names, MANIFEST):  # on disk before the rename makes the package visible
            with (tmp / name).open("rb") as handle:
                os.fsync(handle.fileno())
        os.replace(tmp, out)  # an empty folder at ``out`` is replaced; anything else refused
    except OSError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        raise EvidenceError(f"{out}: cannot write the package "
                            f"({exc.strerror or type(exc).__name__}); nothing was written"
                            ) from None


def _row_record(source: str, sweep_id: str, row_id: str, r: dict[str, Any],
                prefix: int, final: dict[str, Any] | None = None) -> dict[str, str]:
    answer = r["answer"] or ""
    final = final or {}
    # The stored verdict (written when the row ended) is the validity rule's; a row that has
    # not ended yet has none and is incomplete.
    valid = bool(r["valid"]) if r["valid"] is not None else False
    return {
        "row_id": row_id, "source": source, "sweep": sweep_id, "scenario": r["scenario"],
        "model": r["model"], "arm": r["arm"], "repeat": fmt(r["repeat"]), "status": r["status"],
        "valid": fmt(valid), "validity_reason": r["validity_reason"] or "incomplete",
        "recall": fmt(r["recall"]), "correct": fmt(r["correct"]), "graded": fmt(r["graded"]),
        "folds": fmt(r["folds_done"]),
        "headings_carried": fmt(final.get("headings_carried")),
        "fill_fraction": fmt(final.get("fill_fraction")),
        "carried_chars": fmt(final.get("carrier_chars")),
        "catch_up": fmt(int(r["catch_up"])),
        "parse_failures": fmt(r["parse_failures"]), "length_stops": fmt(r["length_stops"]),
        "simulated": fmt(int(r["simulated"])), "prompt_tokens": fmt(r["prompt_tokens"]),
        "completion_tokens": fmt(r["completion_tokens"]),
        "cost_usd": fmt(None if r["unpriced_calls"] else float(r["cost_usd"])),  # unknown: empty
        "answer_chars": fmt(len(answer)), "answer_prefix": answer[:prefix],
    }


def _figure_texts(folder: Path, config: dict[str, Any], lock: dict[str, Any],
                  answer_prefix: int) -> dict[str, str]:
    """The package's files besides rows.csv and checks.csv (written into ``folder``): the
    figures are computed from those two files as written, exactly as `verify` will read them."""
    with (folder / "rows.csv").open(newline="", encoding="utf-8") as handle:
        rows = parse_rows(csv.DictReader(handle))
    with (folder / "checks.csv").open(newline="", encoding="utf-8") as handle:
        checks = parse_checks(csv.DictReader(handle))
    return {
        "aggregates.csv": _csv_text(AGGREGATE_COLUMNS, aggregates(rows, checks)),
        "contrasts.csv": _csv_text(CONTRAST_COLUMNS, contrasts(rows)),
        "study.csv": _csv_text(STUDY_COLUMNS, study_figures(rows, checks)),
        "config.json": json.dumps(config, ensure_ascii=False, indent=2, sort_keys=True) + "\n",
        "provenance.lock.json": json.dumps(lock, indent=2, sort_keys=True) + "\n",
        "README.txt": _readme(answer_prefix),
    }


def _readme(answer_prefix: int) -> str:
    return f"""foldscope evidence package (format {FORMAT})

rows.csv             one line per planned row; answer_prefix holds the first {answer_prefix}
                     characters of the recall answer (answer_chars is the full length);
                     headings_carried, fill_fraction and carried_chars are the final carrier's
checks.csv           one line per graded fact of a finished row; value 1 = answered correctly
                     (columns row_id,check,value work with `foldscope stats icc --csv`)
aggregates.csv       per cell (sweep, scenario, model, arm): rows, valid rows, mean recall over
                     valid rows with a 95% t interval over rows, checks, ICC(1), design effect
                     1 + (m - 1) ICC, effective n, valid rows with recall >= 0.5
contrasts.csv        per model and arm pair within a sweep: paired bootstrap (by repeat) of mean
                     recall a - b, and Fisher's exact p on valid rows with recall >= 0.5
study.csv            per sweep and scenario: the pooled ICC(1) over every valid row's checks
                     (rows as clusters), icc_used (clamped to [0, 1]), DE and effective n; Pearson
                     r (n, p) of recall with headings carried and with fill fraction over valid
                     rows; the paired ceiling contrast j - t over valid rows paired by model and
                     repeat, all models pooled, with a bootstrap interval
config.json          each sweep's definition and endpoint pins, sanitised
provenance.lock.json sha256 of what is not released: the databases, full answers, carriers
manifest.json        sha256 of every file above, and the package digest

{DIGEST_LABEL}{_DIGEST_BLANK}

The package digest is the sha256 of the sorted "name sha256" lines of every file above (this
file read with the digest on the line above blanked), so it changes when any byte of any file
does. Check the package with `foldscope verify <this folder>`: it recomputes every figure from
rows.csv and checks.csv, every file's sha256 against the manifest, and the digest against the
manifest and this file. That shows the files agree with one another; it cannot show they are
the ones first exported, since anyone can rewrite every file and every hash. For that, compare
the digest with one published apart from the package: `foldscope verify <folder> --digest HEX`.
"""


# -- verifying --------------------------------------------------------------------------------

@dataclass(frozen=True)
class Verification:
    """The outcome of verifying a package."""

    problems: list[str]
    """One line per mismatch, naming the file and the figure; empty when it all matches."""
    files: int
    rows: int
    checks: int
    cells: int
    contrasts: int
    studies: int = 0
    """Sweep × scenario lines of study.csv recomputed."""
    digest: str = ""
    """The package digest of the files as they are (``package_digest``)."""


def _read_csv(folder: Path, name: str) -> list[dict[str, str]]:
    try:
        with (folder / name).open(newline="", encoding="utf-8") as handle:
            return list(csv.DictReader(handle))
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise EvidenceError(f"{folder / name}: cannot read ({exc})") from None


MANIFEST_MAX_BYTES = 1_000_000
"""The largest manifest read (a package's lists a handful of files)."""


def _not_regular(path: Path) -> str | None:
    """Why a package file is not read: ``missing``, a symbolic link, or not a regular file
    (a FIFO would block, ``/proc`` files and devices are not package files); None to read it."""
    try:
        mode = path.lstat().st_mode
    except FileNotFoundError:
        return "missing"
    except OSError as exc:
        return f"cannot be examined ({exc.strerror or exc})"
    if stat.S_ISLNK(mode):
        return "is a symbolic link"
    if not stat.S_ISREG(mode):
        return "is not a regular file"
    return None


def _digest_problems(folder: Path, manifest: dict[str, Any], digest: str,
                     expected: str | None) -> list[str]:
    """Where the package digest of the files differs from the one the manifest states, the one
    README.txt states, or the expected one (a digest published apart from the package)."""
    problems = []
    stated = manifest.get("package_sha256")
    if not isinstance(stated, str):
        problems.append(f"{MANIFEST}: states no package digest (package_sha256)")
    elif stated != digest:
        problems.append(f"{MANIFEST}: package_sha256 does not match the files (their package "
                        f"digest is {digest})")
    readme = folder / "README.txt"
    if _not_regular(readme) is None:
        said = stated_digest(readme.read_text(encoding="utf-8", errors="replace"))
        if said is None:
            problems.append("README.txt: states no package digest")
        elif said != digest:
            problems.append("README.txt: the package digest it states does not match the files")
    if expected is not None and expected.lower() != digest:
        problems.append(f"package digest is {digest}, not the expected {expected.lower()}")
    return problems


def verify_package(folder: str | Path, expected_digest: str | None = None) -> Verification:
    """Check every file against the manifest, the package digest against the manifest, README.txt
    and ``expected_digest``, and recompute every figure from the records.

    Args:
        folder: the package.
        expected_digest: a package digest published apart from the package (64 hex digits),
            or None.

    Raises:
        EvidenceError: the folder does not exist, or ``expected_digest`` is not a sha256 (a
            tampered or missing file is a problem listed in the result, not an exception).
    """
    if expected_digest is not None and (
            len(expected_digest) != 64
            or any(ch not in "0123456789abcdefABCDEF" for ch in expected_digest)):
        raise EvidenceError("--digest must be a sha256: 64 hexadecimal digits")
    folder = Path(folder)
    if not folder.is_dir():
        raise EvidenceError(f"{folder}: no such package folder")
    problems: list[str] = []
    special = _not_regular(folder / MANIFEST)
    if special == "missing":
        return Verification([f"{MANIFEST}: missing"], 0, 0, 0, 0, 0)
    # A manifest that cannot even be read safely is bad input (one line, exit 2), not a
    # mismatch to list.
    if special is not None:
        raise EvidenceError(f"{folder / MANIFEST}: {special}; refusing to read it")
    try:
        with (folder / MANIFEST).open("rb") as handle:
            raw = handle.read(MANIFEST_MAX_BYTES + 1)
        if len(raw) > MANIFEST_MAX_BYTES:
            raise EvidenceError(f"{folder / MANIFEST}: larger than {MANIFEST_MAX_BYTES:,} bytes; "
                                "not a foldscope manifest")
        try:
            manifest = loads_json(raw.decode("utf-8"))
        except NestingError as exc:
            raise EvidenceError(f"{folder / MANIFEST}: {exc}; not a foldscope manifest") from None
        listed = manifest["files"]
        if not isinstance(listed, dict) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in listed.items()):
            raise TypeError
    except OSError as exc:
        raise EvidenceError(f"{folder / MANIFEST}: cannot read ({exc.strerror or exc})") from None
    except (ValueError, KeyError, TypeError, UnicodeDecodeError):
        return Verification([f"{MANIFEST}: not a foldscope manifest"], 0, 0, 0, 0, 0)
    for name in PACKAGE_FILES:
        if name not in listed:
            problems.append(f"{MANIFEST}: does not list {name}")
    readable: set[str] = set()
    for name, expected in sorted(listed.items()):
        path = folder / name
        kind = _not_regular(path) if Path(name).name == name and name not in ("", ".", "..") \
            else "missing"
        if kind == "missing":
            problems.append(f"{name}: listed in {MANIFEST} but missing")
        elif kind is not None:
            problems.append(f"{name}: {kind} (not read)")
        else:
            try:
                file_hash = sha256_file(path)
            except OSError as exc:
                problems.append(f"{name}: cannot read ({exc.strerror or exc})")
                continue
            readable.add(name)
            if file_hash != expected:
                problems.append(f"{name}: sha256 does not match {MANIFEST}")
    present = sorted(p for p in folder.iterdir() if p.name != MANIFEST)
    for path in present:
        if path.name not in listed:
            problems.append(f"{path.name}: not listed in {MANIFEST}")
    if manifest.get("format") != FORMAT:
        problems.append(f"{MANIFEST}: format {manifest.get('format')!r}; this foldscope verifies "
                        f"{FORMAT}")
    # Only regular files are read (a symlink to /proc or a FIFO is listed as a problem above).
    digest = package_digest({p.name: _sha_bytes(_digest_form(p.name, p.read_bytes()))
                             for p in present if _not_regular(p) is None})
    problems += _digest_problems(folder, manifest, digest, expected_digest)
    if any(n not in readable for n in ("rows.csv", "checks.csv")):
        return Verification(problems, len(listed), 0, 0, 0, 0, digest=digest)
    try:
        rows = parse_rows(_read_csv(folder, "rows.csv"))
        checks = parse_checks(_read_csv(folder, "checks.csv"))
    except EvidenceError as exc:
        return Verification([*problems, str(exc)], len(listed), 0, 0, 0, 0, digest=digest)
    problems += row_problems(rows, checks)
    cells = aggregates(rows, checks)
    pairs = contrasts(rows)
    studies = study_figures(rows, checks)
    for name, key, columns, recomputed in (
            ("aggregates.csv", CELL_KEY, AGGREGATE_COLUMNS, cells),
            ("contrasts.csv", CONTRAST_KEY, CONTRAST_COLUMNS, pairs),
            ("study.csv", STUDY_KEY, STUDY_COLUMNS, studies)):
        if name in readable:
            problems += compare(name, key, columns, _read_csv(folder, name), recomputed)
    return Verification(problems, len(listed), len(rows), sum(map(len, checks.values())),
                        len(cells), len(pairs), len(studies), digest)
