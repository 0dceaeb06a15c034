#!/usr/bin/env python3
"""Fuzz a chunker: random token soup, deep nesting and mutated real code, seeded and repeatable.

    python bench/fuzz_chunker.py --source REPO [--lang cs|ts] [--cases 100000] [--seed 1]

--lang cs (the default) fuzzes the C# chunker on *.cs files; --lang ts the TypeScript and
JavaScript chunker on *.ts *.tsx *.js ... files (each case parsed with the grammar of its
file's extension, or of a random one for soup and nesting).
Each case must chunk without an exception (a ChunkerLimit, for nesting beyond the stated
limit or a minified-looking line, is the one allowed, since the indexer reports it), within
--slow seconds, and give sane chunks: lines in order and inside the file, a known kind, never
a keyword for a name. Prints a summary line with the slowest case and the first failures;
exit 1 if any case failed.
"""
import argparse
import random
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from codebase_rag.chunkers import ChunkerLimit, csharp, typescript
from codebase_rag.walk import read_source

CS_KINDS = {"method", "constructor", "destructor", "operator", "conversion", "property",
            "indexer", "event", "class", "struct", "record", "record struct", "interface",
            "enum", "delegate", "top-level", "file"}
CS_FRAGMENTS = [
    "class", "struct", "record", "interface", "enum", "namespace", "delegate", "event",
    "operator", "this", "where", "new", "void", "int", "M", "X", "get", "set", "public",
    "static", "partial", "using", "if", "for", "return", "(", ")", "{", "}", "[", "]", ";",
    "=", "=>", "<", ">", ",", ":", ".", "~", "\\", "{{", "}}", '"', "'", '@"', '$"', '$@"',
    '"""', '$$"""', "//", "/*", "*/", "///", "#if A\n", "#elif B\n", "#else\n", "#endif\n",
    "\n", " ", "\t",
]
CS_OPENERS = ["class C {", "namespace N {", '$"{', "void M() {", "#if A\n{", "(", "{"]
TS_FRAGMENTS = [
    "function", "class", "interface", "type", "enum", "namespace", "module", "declare",
    "global", "export", "default", "import", "const", "let", "var", "async", "await", "get",
    "set", "static", "abstract", "constructor", "extends", "implements", "new", "return",
    "if", "for", "of", "in", "as", "satisfies", "keyof", "readonly", "private", "public",
    "memo(", "forwardRef(", "styled.div`", "module.exports", "exports.", ".prototype.", "this",
    "React", "x", "Foo", "T", "<T,>", "<T>", "(", ")", "{", "}", "[", "]", ";", ",", ":", ".",
    "?", "?.", "!", "=", "=>", "...", "@", "@dec", "#priv", "<", ">", "</", "/>", "<div>",
    "</div>", "<>", "</>", "{`", "`", "${", '"', "'", "\\", "/", "/{/", "/[}]/g", "//", "/*",
    "*/", "/**", " * @param x\n", "#!", "\n", " ", "\t",
]
TS_OPENERS = ["class C {", "namespace N {", "{ a: ", "f(", "() => {", "function f() {", "`${",
              "<div>{", "(", "[", "x = { m() {}, n: ", "if (x) {", "@d\n", "a ? b : "]
TS_EXTS = tuple(typescript.GRAMMAR)
KEYWORD_DECLARED = re.compile(r"\b(?:function\*?|const|let|var|class|interface|type|enum)\s+(\w+)")
RESERVED = frozenset("""break case catch class const continue debugger delete do else enum export
extends false finally for function if import in instanceof new null return super switch this
throw true try typeof var void while with let static yield await implements interface package
private protected public""".split())


def cs_problems(text, chunks):
    n_lines = text.count("\n") + 1
    bad = []
    for c in chunks:
        if not 1 <= c.start_line <= c.sig_line <= c.end_line <= n_lines:
            bad.append(f"lines out of order or outside 1..{n_lines}: {c}")
        if c.kind not in CS_KINDS:
            bad.append(f"unknown kind: {c.kind}")
        if c.member in csharp.KEYWORDS:
            bad.append(f"named after a keyword: {c.member}")
    return bad


def ts_problems(text, chunks):
    """Lines in order and in the file, chunks in file order, a known kind, and no keyword
    declared as a name (a keyword is a fine property name: `promise.catch(...)`, `delete() {}`)."""
    n_lines = text.count("\n") + 1
    bad = []
    for c in chunks:
        if not 1 <= c.start_line <= c.end_line <= n_lines or \
                not c.start_line <= c.sig_line <= c.end_line:
            bad.append(f"lines out of order or outside 1..{n_lines}: {c}")
        if c.kind not in typescript.KINDS:
            bad.append(f"unknown kind: {c.kind}")
        declared = KEYWORD_DECLARED.match(c.signature.removeprefix("export ").removeprefix(
            "default ").removeprefix("declare ").removeprefix("async "))
        if c.member in RESERVED and declared and declared.group(1) == c.member:
            bad.append(f"named after a keyword: {c}")
    if [(c.start_line, c.end_line) for c in chunks] != \
            sorted((c.start_line, c.end_line) for c in chunks):
        bad.append("chunks are not in file order")
    return bad


LANGS = {
    "cs": dict(exts=(".cs",), fragments=CS_FRAGMENTS, openers=CS_OPENERS, problems=cs_problems,
               chunk=lambda text, ext: csharp.chunk(text),
               closers=["}", '}"', ")"], inner=["", "x", "void M() { }"]),
    "ts": dict(exts=TS_EXTS, fragments=TS_FRAGMENTS, openers=TS_OPENERS, problems=ts_problems,
               chunk=typescript.chunk, closers=["}", "}`", ")", "]", "</div>", "}}"],
               inner=["", "x", "function f() {}", "m() {}", "<a/>"]),
}


def soup(rng, fragments):
    return "".join(rng.choice(fragments) if rng.random() < 0.85 else chr(rng.randint(0, 0x2FF))
                   for _ in range(rng.randint(0, 80)))


def deep(rng, lang):
    depth = rng.choice([10, 300, 3000])
    sep = rng.choice(["", "\n"])
    return (rng.choice(lang["openers"]) + sep) * depth + rng.choice(lang["inner"]) + \
        (rng.choice(lang["closers"]) + sep) * depth


def mutate(rng, text, fragments):
    """A slice of real code, cut at random points and damaged one to five times."""
    start = rng.randrange(len(text)) if text else 0
    text = text[start:start + rng.randint(200, 6000)]
    for _ in range(rng.randint(1, 5)):
        if not text:
            break
        i, j = sorted(rng.randrange(len(text) + 1) for _ in range(2))
        op = rng.randrange(5)
        if op == 0:
            text = text[:i] + text[j:]                              # delete a span
        elif op == 1:
            text = text[:j] + text[i:j] + text[j:]                  # repeat a span
        elif op == 2:
            text = text[:i] + rng.choice(fragments) + text[i:]      # insert a token
        elif op == 3:
            text = text[:i] + chr(rng.randint(0, 0x2FF)) + text[i + 1:]
        else:
            text = text[:i]                                         # cut off
    return text


def run(sources, cases, seed, slow=2.0, report=5, lang="cs"):
    """sources: [(text, extension)]. Returns the failures."""
    spec = LANGS[lang]
    rng = random.Random(seed)
    failures, slowest, started = [], (0.0, None), time.perf_counter()
    kinds = {"soup": 0, "deep": 0, "real": 0}
    for case in range(cases):
        kind = "real" if sources and rng.random() < 0.6 else ("deep" if rng.random() < 0.02
                                                             else "soup")
        kinds[kind] += 1
        if kind == "real":
            source, ext = rng.choice(sources)
            text = mutate(rng, source, spec["fragments"])
        else:
            ext = rng.choice(spec["exts"])
            text = deep(rng, spec) if kind == "deep" else soup(rng, spec["fragments"])
        t = time.perf_counter()
        try:
            bad = spec["problems"](text, spec["chunk"](text, ext))
        except ChunkerLimit:
            bad = []
        except Exception as e:                 # noqa: BLE001 - every exception is a finding
            bad = [f"{type(e).__name__}: {e}"]
        took = time.perf_counter() - t
        if took > slowest[0]:
            slowest = (took, f"case {case} ({kind}, {ext}, {len(text):,} chars)")
        if took > slow:
            bad.append(f"took {took:.1f}s")
        if bad:
            failures.append((case, kind, bad[0], text[:200]))
    what = "C#" if lang == "cs" else "TS/JS"
    print(f"fuzz {lang}: seed {seed}, {cases:,} cases ({kinds['real']:,} mutated real {what}, "
          f"{kinds['soup']:,} token soup, {kinds['deep']:,} deep nesting) from "
          f"{len(sources):,} files: {len(failures)} failures; slowest case {slowest[0]:.3f}s "
          f"({slowest[1]}); {time.perf_counter() - started:.0f}s in all")
    for case, kind, problem, text in failures[:report]:
        print(f"  case {case} ({kind}): {problem}\n    {text!r}")
    return failures


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--source", action="append", default=[], metavar="DIR",
                   help="a tree of real code to mutate (repeatable)")
    p.add_argument("--lang", choices=sorted(LANGS), default="cs")
    p.add_argument("--cases", type=int, default=100_000)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--slow", type=float, default=2.0, help="seconds that count as a hang")
    args = p.parse_args()
    exts = LANGS[args.lang]["exts"]
    sources = []
    for root in args.source:
        for path in sorted(Path(root).rglob("*")):
            if path.suffix in exts and "node_modules" not in path.parts and path.is_file():
                text = read_source(path)
                if text:
                    sources.append((text, path.suffix))
    return 1 if run(sources, args.cases, args.seed, args.slow, lang=args.lang) else 0


if __name__ == "__main__":
    sys.exit(main())
