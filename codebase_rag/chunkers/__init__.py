"""Chunkers: source text in, chunks out, one module per language (languages.py says which
files are whose). Pure: no disk, no model.

A chunk is one member with a body (method, constructor, property, function, ...), or a
type with no such member, or code at file level that nothing else covers; or, for a file
no chunker could read (over its CPU budget, or a chunker that failed), one of the plain
windows the whole file is cut into (plain_windows).

The CPU budget: a regex holds the GIL and cannot be interrupted, so a chunker is stopped
cooperatively. Within `with budget(seconds):` a chunker calls spend() between its steps
(a node of a walk, a token, a piece, a match; a pass of a pattern over the text counts a
step per character), each bounded because every pattern is linear (tests/test_linear.py),
and spend() raises OverBudget once this thread has used its CPU seconds; outside such a
block it costs next to nothing.
"""
import re
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass


@dataclass
class Chunk:
    namespace: str
    cls: str            # nesting chain of containers (types, objects), e.g. Outer.Inner
    member: str
    kind: str           # method, constructor, property, ...; or a type's kind, top-level, file
    start_line: int     # first line of the leading doc comment and attributes
    end_line: int       # line of the closing brace or semicolon
    sig_line: int       # line of the member's name
    signature: str
    doc: str            # the doc comment, markup stripped
    owner_doc: str = "" # the doc comment of the innermost type around it
    doc_lines: tuple = ()   # (first, last) lines of the doc comment, which the embedded
                            # code leaves out (the header carries the doc); () if none
    wrapper: str = ""       # a call wrapping a function value: memo, forwardRef, styled...


class Chunks(list):
    """A chunker's result: the chunks in file order, and how many parse errors the file had
    (a chunker that recovers from them still yields the chunks of the well-formed parts),
    and, when the extension does not say it, the language the file was read as (a .h file
    of C++: "cpp"; "" when the extension says it)."""
    parse_errors = 0
    language = ""
    parsed = None       # what the chunker read, for the uses' extraction (uses/): a
                        # tree-sitter language's (Tree, its bytes), C#'s tokens; None: none


class ChunkerLimit(ValueError):
    """A file beyond what a chunker handles; the indexer skips it with a warning."""


class OverBudget(Exception):
    """A file's chunking used up its CPU budget; the indexer reads it as plain windows."""


PLAIN_KIND = "lines"          # a plain window's kind: a chunk of every language (contract.py)
PLAIN_MEMBER = "<file>"
PLAIN_LINES = 60              # lines of the file in each plain window
REST_MEMBER = "<rest>"        # a plain chunk of lines no other chunk holds (cover_rest)
COVER_VERSION = 2             # bump when cover_rest cuts otherwise: every file is read again
                              # (2: its chunks have no windows)
_CHECK_EVERY = 256            # steps between two looks at the CPU clock (0.7 us each)
_WORD = re.compile(r"\w")     # a letter, digit or _ (what str.isalnum() is, and _)
_state = threading.local()    # each thread chunks its own file: its own deadline
_left = _CHECK_EVERY          # steps before the next look: shared by the threads (a race only
                              # moves a look a little), as a thread's own costs twice as much


@contextmanager
def budget(seconds):
    """Chunk within `seconds` of this thread's CPU time: spend() raises OverBudget after."""
    saved = getattr(_state, "deadline", None)
    _state.deadline = time.thread_time() + seconds
    try:
        yield
    finally:
        _state.deadline = saved


def spent():
    """Whether this thread's budget is used up (False outside budget()). Looks at the CPU
    clock every time: for a caller whose steps are few (a parser's progress reports)."""
    deadline = getattr(_state, "deadline", None)
    return deadline is not None and time.thread_time() > deadline


def spend(steps=1):
    """One step (or `steps`) of a chunker's work: raises OverBudget once this thread's
    budget is used up, looking at the clock once _CHECK_EVERY steps have gone by. A loop
    whose steps cost less than a call counts them itself and spends them in a batch."""
    global _left
    _left -= steps
    if _left > 0:
        return
    _left = _CHECK_EVERY
    if spent():
        raise OverBudget("over its CPU budget")


def plain_windows(text):
    """A whole file as windows of PLAIN_LINES lines (those with only blanks left out), for a
    file no chunker could read: still found by meaning and by keywords, each hit with its
    own lines. Kind PLAIN_KIND, member PLAIN_MEMBER: `path:61-120 | <file>`."""
    lines = text.split("\n")
    out = Chunks()
    for start in range(0, len(lines), PLAIN_LINES):
        filled = [i for i, line in enumerate(lines[start:start + PLAIN_LINES]) if line.strip()]
        if filled:                         # it ends at its last line that is not blank
            out.append(Chunk("", "", PLAIN_MEMBER, PLAIN_KIND, start + 1,
                             start + filled[-1] + 1, start + 1, "", ""))
    return out


def has_word(line):
    """Whether a line says something: a letter, digit or _ (not a lone `}` or `*/`)."""
    return _WORD.search(line) is not None


def uncovered(text, chunks):
    """[(line number, has_word)] of the non-blank lines of text that no chunk holds."""
    lines = text.split("\n")
    starts = [0] * (len(lines) + 2)           # chunks opening minus closing at each line
    for c in chunks:
        starts[c.start_line] += 1
        starts[min(c.end_line, len(lines)) + 1] -= 1
    out, held = [], 0
    for n, line in enumerate(lines, 1):
        held += starts[n]
        if not held and line.strip():
            out.append((n, has_word(line)))
    return out


def cover_rest(text, chunks):
    """(chunks, and a chunk for each run of the lines no chunk holds that say something: a
    module's imports, a class's docstring and fields between its members, a block of
    macros; each chunker's chunk's index among them). Such a run is cut as plain windows
    are (PLAIN_LINES at most), from its first line with a word to its last, kind PLAIN_KIND
    and member REST_MEMBER, in the namespace and container of the chunk after it (a
    class's fields come before its members): every line that says something is found by
    its keywords (such a chunk has no vector: indexer.build_file). A line with no word (a
    closing brace) is left out."""
    left = uncovered(text, chunks)
    worded = [n for n, word in left if word]
    if not worded:
        return chunks, list(range(len(chunks)))
    held = [0] + [1 if line.strip() else 0 for line in text.split("\n")]
    for n, _ in left:                         # held[n]: lines up to n some chunk holds
        held[n] = 0
    for n in range(1, len(held)):
        held[n] += held[n - 1]
    pieces = [[worded[0], worded[0]]]
    for n in worded[1:]:                      # one run: no held line between, and short
        first, last = pieces[-1]
        if held[n] == held[last] and n - first < PLAIN_LINES:
            pieces[-1][1] = n
        else:
            pieces.append([n, n])
    after = sorted(range(len(chunks)), key=lambda i: chunks[i].start_line)
    rest, at = [], 0
    for first, last in pieces:
        while at < len(after) and chunks[after[at]].start_line <= last:
            at += 1
        owner = chunks[after[at]] if at < len(after) else None
        rest.append(Chunk(owner.namespace if owner else "", owner.cls if owner else "",
                          REST_MEMBER, PLAIN_KIND, first, last, first, "", ""))
    order = sorted([(c.start_line, c.end_line, 0, i) for i, c in enumerate(chunks)] +
                   [(c.start_line, c.end_line, 1, i) for i, c in enumerate(rest)])
    out = Chunks(chunks[i] if own == 0 else rest[i] for _, _, own, i in order)
    out.parse_errors, out.language = getattr(chunks, "parse_errors", 0), \
        getattr(chunks, "language", "")
    out.parsed = getattr(chunks, "parsed", None)
    place = [0] * len(chunks)
    for at, (_, _, own, i) in enumerate(order):
        if own == 0:
            place[i] = at
    return out, place
