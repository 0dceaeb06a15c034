"""Chunkers: source text in, chunks out, one module per language (languages.py says which
files are whose). Pure: no disk, no model.

A chunk is one member with a body (method, constructor, property, function, ...), or a
type with no such member, or code at file level that nothing else covers.
"""
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
