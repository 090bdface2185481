"""Bounds that keep an import's memory and time in proportion to real dumps.

Two kinds of bound:

* **Structural bounds**, checked on the raw bytes *before* a parser sees them
  (:class:`JsonGuard`), so a hostile file is refused before anything big is
  built. Exceeding one refuses the whole file (``error: <file>: ... at byte N``,
  exit 2):

  ===================== ============ =============================================
  bound                 value        real dumps
  ===================== ============ =============================================
  ``MAX_DEPTH``         64           ≤ 12 (evaluation-tables: task → subtasks →
                                     datasets → sota → rows → metrics)
  ``MAX_STRING_BYTES``  64 MiB       longest string ≈ 10 KB (abstracts)
  ``MAX_LITERAL_BYTES`` 4 KiB        numbers of a few digits
  ``MAX_RECORD_BYTES``  256 MiB      largest record (one evaluation task) ≈ 20 MB
  ``MAX_RECORD_VALUES`` 4,000,000    ≈ 200,000 values in the largest task
  ``MAX_LINE_BYTES``    64 MiB       arXiv JSON lines ≈ 5 KB
  ``MAX_OBJECT_BYTES``  256 MiB      ``catalog-extras.json``: a few MB
  ``MAX_MARKDOWN_BYTES`` 32 MiB      a paper's full text ≈ 50-500 KB (a larger
                                     file is skipped and counted, not refused)
  ===================== ============ =============================================

  Python's memory for one record is then at most a few hundred MB whatever the
  file holds (values × ~60 bytes, plus the record's strings).

* **Field bounds** (:data:`TEXT_LIMITS`, in characters), applied by the loaders
  to each string they store (:func:`catalog.importer.dumps.text`). A longer
  value is cut to the bound (URLs, which a cut would corrupt, are dropped
  instead) and counted in the source's summary line (``cut N fields``). They
  keep every answer of the catalog API well under the 2 MiB response bound of
  the MCP server (a paper: title 2 K + abstract 64 K + 5,000 authors × 200
  characters), and the embedding input small (:mod:`catalog.search.embeddings`).
"""

from __future__ import annotations

import re

import numpy as np

MAX_DEPTH = 64
MAX_STRING_BYTES = 64 << 20
MAX_LITERAL_BYTES = 4096
MAX_RECORD_BYTES = 256 << 20
MAX_RECORD_VALUES = 4_000_000
MAX_LINE_BYTES = 64 << 20
MAX_OBJECT_BYTES = 256 << 20
MAX_MARKDOWN_BYTES = 32 << 20

LONG_TEXT = 65_536  # abstracts, descriptions
SHORT_TEXT = 2_000  # titles, names and every other string field
URL_TEXT = 2_048  # a longer URL is dropped, not cut
AUTHOR_NAME = 200
MAX_LIST_ITEMS = 5_000  # authors, tasks, methods, ... of one record
MAX_METRICS = 500  # metric names of one leaderboard row (real rows: a few, rarely 50)
ITEM_LIMITS = {"authors": AUTHOR_NAME}  # characters per list item (others: SHORT_TEXT)

TEXT_LIMITS = {"abstract": LONG_TEXT, "description": LONG_TEXT, "when_to_use": LONG_TEXT}
"""Characters kept per field name; any other field gets :data:`SHORT_TEXT`
(:data:`URL_TEXT` when its name ends in ``url``, ``url_abs`` or ``url_pdf``)."""


def text_limit(key: str) -> int:
    """The number of characters a string field named ``key`` may hold."""
    limit = TEXT_LIMITS.get(key)
    if limit is not None:
        return limit
    return URL_TEXT if is_url(key) else SHORT_TEXT


def is_url(key: str) -> bool:
    """Whether a field holds a URL (cut URLs are wrong URLs: such fields are dropped)."""
    return key.endswith(("url", "url_abs", "url_pdf"))


class LimitError(ValueError):
    """A structural bound was exceeded; ``offset`` is the byte of the input where."""

    def __init__(self, message: str, offset: int) -> None:
        super().__init__(message)
        self.offset = offset


_ESCAPED_QUOTE = re.compile(rb'(?<!\\)(?:\\\\)*\\"')
_STRING_BODY = re.compile(rb'[^"\\]*(?:\\[\s\S][^"\\]*)*')  # up to the closing quote
_ALL = bytes(range(256))
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_DELTA = np.zeros(256, dtype=np.int64)
_DELTA[[ord("["), ord("{")]] = 1
_DELTA[[ord("]"), ord("}")]] = -1
_LITERAL_CHARS = b"0123456789+-.eEtruefalsn"


class JsonGuard:
    """Checks a JSON byte stream against the structural bounds, chunk by chunk.

    Feed it every chunk before the parser gets it (:meth:`feed`); it raises
    :class:`LimitError` as soon as the nesting depth, a string, a number or
    literal, or a record (a value at depth ``record_depth``) would exceed its
    bound. The work per chunk is a handful of C-level passes: strings are cut
    out by splitting at quotes (escaped quotes removed first), the brackets
    left are walked with numpy's ``cumsum``. About 100-150 MB/s on one core.

    Invalid JSON is not reported here (the parser does that); the guard only
    stays conservative on it.
    """

    def __init__(self, *, record_depth: int = 1, max_depth: int | None = None,
                 max_record_bytes: int | None = None) -> None:
        self.record_depth = record_depth
        self.max_depth = MAX_DEPTH if max_depth is None else max_depth
        self.max_record_bytes = MAX_RECORD_BYTES if max_record_bytes is None else max_record_bytes
        self.position = 0  # bytes fed so far
        self.depth = 0
        self.in_string = False
        self.escape = False  # the previous chunk ended inside a string on a lone backslash
        self.string_bytes = 0  # length of the string being read, so far
        self.literal_bytes = 0  # length of the number/literal being read, so far
        self.record_bytes = 0  # bytes of the current record, so far (approx. to a chunk)
        self.record_values = 0  # values of the current record, so far (approx. to a chunk)
        self.records = 0  # records completed (closed back to ``record_depth``) so far

    def feed(self, chunk: bytes) -> None:
        """Account for the next ``chunk`` of the stream; raise :class:`LimitError` past a bound."""
        start = self.position
        i = 0
        if self.in_string:
            if self.escape:
                i, self.escape = 1, False
            end = self._string_end(chunk, i)
            if end < 0:
                self._grow_string(len(chunk) - i, start + len(chunk))
                self.position += len(chunk)
                self.record_bytes += len(chunk)
                self._check_record()
                return
            self._grow_string(end - i, start + end)
            self.in_string, self.string_bytes, i = False, 0, end
        rest = chunk[i:] if i else chunk
        if b"\\" in rest and b'\\"' in rest:  # escaped quotes would break the split below
            rest = _ESCAPED_QUOTE.sub(b"", rest)
        parts = rest.split(b'"')  # outside strings, inside, outside, ... (rest starts outside)
        structural = b"".join(parts[0::2]) if len(parts) > 1 else rest
        opened = None  # bytes of a string that goes on in the next chunk
        if len(parts) % 2 == 0:
            self.in_string, self.string_bytes = True, 0
            opened = len(parts[-1])
            run = len(chunk) - len(chunk.rstrip(b"\\"))
            self.escape = run % 2 == 1
            self.literal_bytes = 0
        else:
            literal = len(structural) - len(structural.rstrip(_LITERAL_CHARS))
            if literal == len(structural):
                self.literal_bytes += literal
            else:
                self.literal_bytes = literal
            if self.literal_bytes > MAX_LITERAL_BYTES:
                raise LimitError(f"a number or literal is longer than {MAX_LITERAL_BYTES} bytes",
                                 start + len(chunk))
        brackets = structural.translate(_ALL, _NOT_BRACKETS)
        depth = self.depth
        if brackets:
            deltas = _DELTA[np.frombuffer(brackets, dtype=np.uint8)]
            levels = np.cumsum(deltas) + depth
            if int(levels.max()) > self.max_depth:
                offset, completed = self._deep_offset(chunk, i)
                self.records += completed
                raise LimitError(f"nesting deeper than {self.max_depth} levels", start + offset)
            self.records += int(np.count_nonzero((levels == self.record_depth) & (deltas < 0)))
            ended = depth <= self.record_depth or int(levels.min()) <= self.record_depth
            self.depth = max(int(levels[-1]), 0)
        else:
            ended = depth <= self.record_depth
        if opened is not None:
            self._grow_string(opened, start + len(chunk))
        values = structural.count(b",") + brackets.count(b"[") + brackets.count(b"{")
        if ended:  # a record ended in this chunk: count the next one from here (approximate)
            self.record_bytes, self.record_values = len(chunk), values
        else:
            self.record_bytes += len(chunk)
            self.record_values += values
        self.position += len(chunk)
        self._check_record()

    def _check_record(self) -> None:
        if self.depth <= self.record_depth and not self.in_string:
            return
        if self.record_bytes > self.max_record_bytes:
            raise LimitError(f"a record is larger than {self.max_record_bytes} bytes",
                             self.position)
        if self.record_values > MAX_RECORD_VALUES:
            raise LimitError(f"a record holds more than {MAX_RECORD_VALUES} values",
                             self.position)

    def _string_end(self, chunk: bytes, i: int) -> int:
        """End (after the closing quote) of the string continuing at ``chunk[i]``, else -1."""
        match = _STRING_BODY.match(chunk, i)
        end = match.end() if match else i
        if end < len(chunk) and chunk[end:end + 1] == b'"':
            return end + 1
        self.escape = end == len(chunk) - 1  # stopped before a lone trailing backslash
        return -1

    def _grow_string(self, size: int, offset: int) -> None:
        self.string_bytes += size
        if self.string_bytes > MAX_STRING_BYTES:
            raise LimitError(f"a string is longer than {MAX_STRING_BYTES} bytes", offset)

    def _deep_offset(self, chunk: bytes, i: int) -> tuple[int, int]:
        """Offset in ``chunk`` of the bracket that passes the depth bound, and the records
        completed in ``chunk`` before it (an exact walk, run only on that failure)."""
        depth, in_string, escape, completed = self.depth, False, False, 0
        for offset in range(i, len(chunk)):
            byte = chunk[offset]
            if in_string:
                if escape:
                    escape = False
                elif byte == 0x5C:
                    escape = True
                elif byte == 0x22:
                    in_string = False
            elif byte == 0x22:
                in_string = True
            elif byte in (0x5B, 0x7B):
                depth += 1
                if depth > self.max_depth:
                    return offset, completed
            elif byte in (0x5D, 0x7D):
                depth -= 1
                completed += depth == self.record_depth
        return len(chunk), completed


def check_json(data: bytes, *, record_depth: int = 0, max_depth: int | None = None) -> None:
    """Check one whole JSON document (a line, a small file) against the depth bound.

    Raises:
        LimitError: nesting deeper than ``max_depth``; ``offset`` is the byte in ``data``.
    """
    max_depth = MAX_DEPTH if max_depth is None else max_depth
    if data.count(b"[") + data.count(b"{") <= max_depth:
        return  # cannot be deeper than its number of brackets
    JsonGuard(record_depth=record_depth, max_depth=max_depth,
              max_record_bytes=len(data) + 1).feed(data)
