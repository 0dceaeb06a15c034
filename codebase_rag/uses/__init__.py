"""Uses: what each member of a file names (calls, constructions, type and member
references), and what the file imports and declares, read at index time from the parse its
chunker already made (Chunks.parsed). Pure: text and chunks in, rows out. Nothing here
resolves a name: references.py does that at query time, against the index as it is then,
so no stored row ever points at a definition that moved.

A Use is one name at one place: the member it is in (an index into the file's chunks, None
for code no chunk holds, a field's initializer), its line, the name, its kind and its
qualifier, the receiver's simple form as the syntax gives it:
    ""          no receiver: `Foo()`
    "this"      the member's own object: this, self, cls (SELF_WORDS of the language)
    "base"      its base: base, super
    "=T"        a value whose type the member declares: `Foo x = ...; x.M()`, `x: Foo`,
                `var x = new Foo()`, `new Foo().M()` give "=Foo" (`A.Foo`: "=A:Foo"; a
                name after it is a member of that value: "=Foo.bar")
    "=T[]"      a value declared an array of T (TypeScript's `T[]`, `Array<T>`)
    "a.b"       names as written, resolved at query time: a field, a type, a module alias;
                a part "[]" is each element of the array before it (`this.items.[]`)
    "?"         anything else (a call's result, an index, a local of unknown type)
A decl is (kind, scope, name, target, line, end_line), what resolution reads besides the
chunks:
    "type"      a type declared here: scope its outer chain, name its name, target its
                namespace or package, from line to end_line
    "import"    name: the local name it binds, target: what it names, in the language's
                notation (uses/LANG.py or references.py says which)
    "using"     C#: target a namespace (name "" ) or `using name = target;`; scope "global"
                for a global using
    "static"    C#'s `using static target;`
    "base"      scope: a class chain, name: one of its base types as written
    "field"     scope: a class chain, name: a field or property, target: its type as written
    "nsmacro"   C++: name a macro that opens namespaces (target "open:a.b:2", the names and
                its braces, an inline one's name left out) or closes them ("close:2")
    "macro"     C++: name a macro written alone on its line (its namespaces: "nsmacro")
    "returns"   JavaScript, TypeScript: scope a class chain, name a member of it that returns
                its receiver (every return statement of it gives `this`); target "this"

A language is an extractor in EXTRACTORS: C# reads its own lexer's tokens
(uses/csharp.py); the tree-sitter languages are a query file each
(uses/queries/LANG.scm) read by one driver (uses/syntax.py). See docs/references.md.
"""
import importlib
from functools import partial
from typing import NamedTuple

KINDS = ("call", "new", "type", "ref")
LOCAL = "(local)"             # the outer chain of a type declared inside a function body: it
                              # is seen from that member alone

# uses.chunk: the rowid of the chunk the use is in; uses.file only for a use outside every
# chunk (chunk NULL). One row per member, name, kind and qualifier, with the lines of its
# uses ("12,15,40"): a member that calls one method twenty times is one row to resolve
USES_SCHEMA = """
CREATE TABLE IF NOT EXISTS uses(chunk INTEGER, file TEXT, lines TEXT, name TEXT,
    kind TEXT, qualifier TEXT);
CREATE INDEX IF NOT EXISTS uses_name ON uses(name);
CREATE INDEX IF NOT EXISTS uses_chunk ON uses(chunk);
CREATE INDEX IF NOT EXISTS uses_file ON uses(file) WHERE file IS NOT NULL;
CREATE TABLE IF NOT EXISTS decls(file TEXT, kind TEXT, scope TEXT, name TEXT, target TEXT,
    line INTEGER, end_line INTEGER);
CREATE INDEX IF NOT EXISTS decls_file ON decls(file);
CREATE INDEX IF NOT EXISTS decls_name ON decls(name) WHERE kind = 'type';
CREATE INDEX IF NOT EXISTS decls_macros ON decls(kind) WHERE kind = 'nsmacro';
CREATE INDEX IF NOT EXISTS chunks_member ON chunks(member);
"""


class Use(NamedTuple):
    chunk: object       # index of the member in the file's chunks; None: outside every chunk
    line: object        # its line; in what extract() returns, the lines "12,15" of them all
    name: str
    kind: str           # one of KINDS
    qualifier: str      # see the module doc


# Use((chunk, line, name, kind, qualifier)) without Use's own __new__, a Python function:
# a tenth of C#'s extraction on jellyfin (122k uses)
new_use = partial(tuple.__new__, Use)


# language -> the module of this package whose extract(text, chunks, language) reads it
EXTRACTORS = {"csharp": "csharp", "python": "syntax", "typescript": "syntax",
              "javascript": "syntax", "java": "java",
              "go": "go", "rust": "rust", "c": "cfamily", "cpp": "cfamily"}
# language -> the version of its uses: bump it when they change, and the next plain run
# reads that language's files again (their vectors come back from the cache)
USES_VERSIONS = {"csharp": 1, "python": 1, "typescript": 4, "javascript": 4, "java": 2,
                 "go": 1, "rust": 1, "c": 2, "cpp": 2}


def extract(text, chunks, language):
    """(uses, decls) of one file, read from its chunks' parse; ([], []) for a language with
    no extractor yet, or when the chunker kept no parse."""
    module = EXTRACTORS.get(language)
    if module is None or getattr(chunks, "parsed", None) is None:
        return [], []
    return importlib.import_module(f"{__package__}.{module}").extract(text, chunks, language)


class Collector:
    """The uses an extractor finds, one Use per member, name, kind and qualifier with the
    lines of them all ("12,15"); a use outside every member stays alone (the type around
    it may differ from line to line)."""

    def __init__(self):
        self.lines = {}

    def add(self, chunk, line, name, kind, qualifier):
        key = (chunk, name, kind, qualifier, line if chunk is None else None)
        found = self.lines.get(key)
        if found is None:
            self.lines[key] = [line]
        elif found[-1] != line:
            found.append(line)

    def forget(self, names, kind):
        """Drop the unqualified uses of kind of these (chunk, name): a member's own local
        functions."""
        for chunk, name in names:
            self.lines.pop((chunk, name, kind, "", None), None)

    def rows(self):
        return [new_use((chunk, str(at[0]) if len(at) == 1 else
                         ",".join(map(str, sorted(set(at)))), name, kind, qualifier))
                for (chunk, name, kind, qualifier, _), at in self.lines.items()]


def owners(chunks, n_lines):
    """[chunk index or None] by line (1-based): the innermost chunk that spans each line.
    One sweep down the lines with a stack of the chunks open there: linear in lines and
    chunks, nested or not."""
    of_line = [None] * (n_lines + 2)
    order = sorted(range(len(chunks)), key=lambda i: (chunks[i].start_line, -chunks[i].end_line))
    stack, at = [], 0
    for line in range(1, n_lines + 1):
        while at < len(order) and chunks[order[at]].start_line <= line:
            stack.append(order[at])
            at += 1
        while stack and chunks[stack[-1]].end_line < line:
            stack.pop()
        # a chunk below the top that ended already is popped once it surfaces
        of_line[line] = stack[-1] if stack else None
    return of_line
