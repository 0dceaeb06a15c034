#!/usr/bin/env python3
"""Fuzz a chunker: random token soup, deep nesting and mutated real code, seeded and repeatable.

    python bench/fuzz_chunker.py --source REPO [--lang cs|ts|go|java|rust|c|cpp] [--cases 100000]
                                 [--seed 1]

--lang cs (the default) fuzzes the C# chunker on *.cs files; --lang ts the TypeScript and
JavaScript chunker on *.ts *.tsx *.js ... files (each case parsed with the grammar of its
file's extension, or of a random one for soup and nesting); go, java, rust, c and cpp the
tree-sitter driver with that language's table.
Each case must chunk without an exception (a ChunkerLimit, for nesting beyond the stated
limit or a minified-looking line, is the one allowed, since the indexer reports it), within
--slow seconds, and give sane chunks by the one chunk contract (codebase_rag/chunkers/
contract.py): lines in order and inside the file, a known kind, never a keyword for a name. Prints a summary line with the slowest case and the first failures;
exit 1 if any case failed.
"""
import argparse
import random
import sys
import time
from pathlib import Path

from codebase_rag.chunkers import ChunkerLimit, contract, typescript
from codebase_rag.languages import by_name as row
from codebase_rag.walk import read_source

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
C_FRAGMENTS = [
    "int", "void", "static", "struct", "union", "enum", "typedef", "const", "extern", "inline",
    "f", "x", "T", "*", "&", "(", ")", "{", "}", "[", "]", ";", ",", "=", ":", "::", "->", ".",
    "#if X\n", "#ifdef Y\n", "#else\n", "#endif\n", "#define M(a) {\n", '"', "'", "\\",
    "//", "/*", "*/", "/**", "\n", " ", "\t", "int f(void) {", "struct s {", 'extern "C" {',
]
CPP_FRAGMENTS = C_FRAGMENTS + [
    "class", "namespace", "template", "<", ">", "typename", "public:", "private:", "virtual",
    "operator", "~", "Foo::", "using", 'R"(', ')"', "[]() {", "template <class T>",
]
GO_FRAGMENTS = [
    "package", "func", "type", "struct", "interface", "var", "const", "import", "go", "defer",
    "return", "map", "chan", "(", ")", "{", "}", "[", "]", "*", ",", ";", ":=", "=", ".", "...",
    "`", '"', "'", "//", "/*", "*/", "\n", " ", "\t", "func (s *S) M() {", "type T struct {",
    "func F[T any](x T) {", "x", "T", "S",
]
JAVA_FRAGMENTS = [
    "class", "interface", "enum", "record", "@interface", "public", "private", "static",
    "final", "abstract", "void", "int", "new", "return", "extends", "implements", "throws",
    "default", "@Override", "@A(", "(", ")", "{", "}", "[", "]", "<", ">", ";", ",", "=", ".",
    "->", "::", '"', '"""', "'", "//", "/*", "*/", "/**", " * @param x\n", "\n", " ", "\t",
    "void m() {", "class C {", "static {", "x", "T", "A",
]
RUST_FRAGMENTS = [
    "fn", "impl", "trait", "struct", "enum", "union", "type", "mod", "pub", "use", "let",
    "mut", "for", "where", "macro_rules!", "unsafe", "async", "const", "static", "self",
    "Self", "#[derive(Debug)]", "#[cfg(test)]", "(", ")", "{", "}", "[", "]", "<", ">", "'a",
    ";", ",", "=", "=>", "->", "::", ":", "&", '"', 'r#"', '"#', "'", "//", "///", "/*", "*/",
    "\n", " ", "\t", "fn f() {", "impl T for S {", "mod m {", "x", "T", "S",
]


def problems_of(name):
    """The one chunk contract (codebase_rag/chunkers/contract.py), for a language."""
    return lambda text, chunks: contract.problems(text, chunks, name)


LANGS = {
    "cs": dict(exts=(".cs",), fragments=CS_FRAGMENTS, openers=CS_OPENERS,
               problems=problems_of("csharp"), chunk=row("csharp").chunk,
               closers=["}", '}"', ")"], inner=["", "x", "void M() { }"]),
    "ts": dict(exts=TS_EXTS, fragments=TS_FRAGMENTS, openers=TS_OPENERS,
               problems=problems_of("typescript"), chunk=typescript.chunk,
               closers=["}", "}`", ")", "]", "</div>", "}}"],
               inner=["", "x", "function f() {}", "m() {}", "<a/>"]),
    "go": dict(exts=(".go",), fragments=GO_FRAGMENTS, problems=problems_of("go"),
               openers=["func f() {", "type T struct {", "(", "{", "x := []int{", "`"],
               chunk=row("go").chunk, closers=["}", ")", "`"], inner=["", "x", "func g() {}"]),
    "java": dict(exts=(".java",), fragments=JAVA_FRAGMENTS, problems=problems_of("java"),
                 openers=["class C {", "void m() {", "(", "{", "new Object() {", "@A("],
                 chunk=row("java").chunk, closers=["}", ")"], inner=["", "x", "void m() {}"]),
    "rust": dict(exts=(".rs",), fragments=RUST_FRAGMENTS, problems=problems_of("rust"),
                 openers=["mod m {", "impl T {", "fn f() {", "(", "{", "[", "|x| {"],
                 chunk=row("rust").chunk, closers=["}", ")", "]"], inner=["", "x", "fn g() {}"]),
    "c": dict(exts=(".c", ".h"), fragments=C_FRAGMENTS, problems=problems_of("c"),
              openers=["struct s {", "int f() {", "(", "{", "#if X\n", 'extern "C" {'],
              chunk=row("c").chunk, closers=["}", ")", "#endif\n"],
              inner=["", "x", "int g() {}"]),
    "cpp": dict(exts=(".cpp", ".hpp", ".cc", ".h"), fragments=CPP_FRAGMENTS,
                problems=problems_of("cpp"),
                openers=["namespace n {", "class C {", "template <class T> struct S {", "(",
                         "{", "void f() {"],
                chunk=lambda text, ext: (row("c") if ext == ".h" else row("cpp")).chunk(text, ext),
                closers=["}", "};", ")"], inner=["", "x", "void g() {}"]),
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
    what = {"cs": "C#", "ts": "TS/JS"}.get(lang, lang)
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
