"""tree-sitter, loaded one way for every chunker that uses it.

A grammar is its PyPI wheel (tree_sitter_go, ...): nothing is ever downloaded, and a grammar
is imported on first use only, so a process loads the grammars of the files it chunks and no
other (query.py chunks nothing and loads none).

The thread rule: a grammar's Language is made once per process and shared by every thread;
a Parser holds the state of the parse under way, so each thread gets its own Parser per
grammar (a thread-local cache). Trees and nodes stay in the thread that parsed them.
"""
import importlib
import re
import threading

from . import ChunkerLimit, OverBudget, spend, spent

# tree-sitter reports progress every 100 parse steps. Real files (typeorm, eslint with its
# broken-syntax fixtures, react-bootstrap, prism) take at most 16 reports per 1,000 bytes; some
# damaged input sends its error recovery quadratic (3,000 lines of `a ? b :` then `}}`: 10,000
# per 1,000 bytes, 45 s). The parse stops, deterministically, at 6 times the worst real rate.
PARSE_REPORTS_PER_KB = 100
PARSE_REPORTS_FLOOR = 1000

# A line this long is minified or generated only when it is also dense in `;{}`: real source
# has lines of 9-32 KB that are one regex or string (keyword lists, SVG paths, base64), with
# none of those; minified bundles have 20-40 of them per 1,000 characters.
MAX_LINE = 5000
MIN_CODE_DENSITY = 5 / 1000
_LONG_LINE = re.compile(r"^[^\n]{%d,}" % (MAX_LINE + 1), re.M)   # from a line's start only:
# from every character of a line of 5,000 it read the rest, 2.5 s for 1 MB of such lines
# bytes the parser reads at a time (a parse with a progress callback reads through a callback,
# and so does Node.text on its tree, from the node's start: a smaller slice copies less)
READ_SLICE = 4096

_languages = {}
_lock = threading.Lock()
_local = threading.local()


def language(grammar):
    """The Language of a grammar named "wheel_module" or "wheel_module:function" (the
    function that returns it, `language` by default): made once, shared by all threads."""
    lang = _languages.get(grammar)
    if lang is None:
        with _lock:
            lang = _languages.get(grammar)
            if lang is None:
                import tree_sitter
                module, _, function = grammar.partition(":")
                made = getattr(importlib.import_module(module), function or "language")()
                lang = _languages[grammar] = tree_sitter.Language(made)
    return lang


def parser(grammar):
    """This thread's Parser of a grammar."""
    parsers = getattr(_local, "parsers", None)
    if parsers is None:
        parsers = _local.parsers = {}
    found = parsers.get(grammar)
    if found is None:
        import tree_sitter
        found = parsers[grammar] = tree_sitter.Parser(language(grammar))
    return found


def parse(grammar, data, budget=True):
    """The tree of data (bytes). With budget, a parse that runs past PARSE_REPORTS_PER_KB
    progress reports per 1,000 bytes is cancelled with ChunkerLimit. Within a CPU budget
    (chunkers.budget), a parse that uses it up is cancelled with OverBudget."""
    p = parser(grammar)
    limit = PARSE_REPORTS_FLOOR + PARSE_REPORTS_PER_KB * len(data) // 1000 if budget else None
    reports = 0

    def progress(offset, has_error):
        nonlocal reports
        reports += 1
        # True cancels the parse. The CPU clock is read at each report (0.7 us; real files
        # make 5 to 16 reports per 1,000 bytes): on a run of line continuations each step of
        # tree-sitter-python costs as much as the run, 0.7 s a report on 800 kB of them
        return limit is not None and reports > limit or spent()

    try:                    # Node.text reads its node through this too: a slice at a time
        tree = p.parse(lambda at, point: data[at:at + READ_SLICE], progress_callback=progress)
    except ValueError:                       # "Parsing failed": cancelled
        tree = None
    if tree is None:
        p.reset()                            # else the next parse resumes this one
        if limit is None or spent():
            raise OverBudget("over its CPU budget while parsing")
        raise ChunkerLimit(f"the parser gave up on its error recovery after {limit * 100:,} steps")
    return tree


def count_errors(root):
    """The ERROR and MISSING nodes in a tree (only subtrees that hold one are entered)."""
    if not root.has_error:
        return 0
    n, stack = 0, [root]
    while stack:
        spend()
        node = stack.pop()
        if node.is_error or node.is_missing:
            n += 1
        stack.extend(c for c in node.children if c.has_error or c.is_missing)
    return n


def looks_minified(text):
    """The first line over MAX_LINE characters that is dense in code punctuation, or None."""
    if len(text) <= MAX_LINE:
        return None
    for m in _LONG_LINE.finditer(text):
        line = m.group()
        if line.count(";") + line.count("{") + line.count("}") > MIN_CODE_DENSITY * len(line):
            return text.count("\n", 0, m.start()) + 1, len(line)
    return None
