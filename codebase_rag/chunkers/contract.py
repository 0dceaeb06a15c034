"""The chunk contract: what every chunker's chunks are, whatever text it is given. The
chunker tests, the conformance test over every language and the fuzz scripts all check it
here, so there is one contract, not one per copy.

Each chunker module answers rules(table) -> (its kinds, misnamed(chunk)): the kinds its
chunks may have, and whether a chunk is named after a word that can never be a declared
name in its language (a keyword, a statement word). A plain window (chunkers.plain_windows,
a file no chunker could read; chunkers.cover_rest, lines no chunk holds) is a chunk of every
language.
"""
import importlib

from . import PLAIN_KIND, PLAIN_MEMBER, REST_MEMBER

MAX_SIGNATURE = 300


def rules(language):
    """(kinds, misnamed) of a language (a row of languages.py, or its name)."""
    if isinstance(language, str):
        from ..languages import by_name
        language = by_name(language)
    module = importlib.import_module(f"{__package__}.{language.module}")
    return module.rules(language.syntax)


def problems(text, result, language):
    """What is wrong with a chunker's result for text: [] when it keeps the contract.
    language: its row of languages.py, or its name (a result that says it was read as
    another language, a .h file of C++, is held to that language's rules)."""
    kinds, misnamed = rules(getattr(result, "language", "") or language)
    n_lines = text.count("\n") + 1
    bad = []
    errors = getattr(result, "parse_errors", 0)
    if not isinstance(result, list) or not isinstance(errors, int) or errors < 0:
        bad.append(f"not a list of chunks with a parse-error count: {result!r}")
    for c in result:
        if not 1 <= c.start_line <= c.sig_line <= c.end_line <= n_lines:
            bad.append(f"lines out of order or outside 1..{n_lines}: {c}")
        plain = c.kind == PLAIN_KIND and c.member in (PLAIN_MEMBER, REST_MEMBER)
        if c.kind not in kinds and not plain:
            bad.append(f"unknown kind: {c}")
        if not plain and misnamed(c):
            bad.append(f"named after a keyword: {c}")
        if c.doc_lines and not c.start_line <= c.doc_lines[0] <= c.doc_lines[1] <= c.end_line:
            bad.append(f"doc lines outside the chunk: {c}")
        if len(c.signature) > MAX_SIGNATURE:
            bad.append(f"signature over {MAX_SIGNATURE} characters: {c}")
    if [(c.start_line, c.end_line) for c in result] != \
            sorted((c.start_line, c.end_line) for c in result):
        bad.append("chunks are not in file order")
    return bad
