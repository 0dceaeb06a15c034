"""Languages: the one table of what the tool knows of each language, a record each: its
files, its chunker (a module of chunkers/), its test code and what to skip. No other module
knows a language by name; a new language is a chunker module and a row here.
"""
import importlib
import re
from dataclasses import dataclass


# code that shows a library rather than is it, in every language unless its row says other
DEMO_DIR = re.compile(r"(?i)^(examples?|demos?|samples?|benchmarks?)$")


@dataclass(frozen=True)
class Language:
    name: str                 # as --lang and JSON results call it
    extensions: tuple         # the files it reads
    module: str               # the chunker: this package's module whose chunk(text, ext) it is
    version: int              # bump when its chunks change: its files are chunked again on the
                              # next run, their vectors reused from the cache
    test_dir: re.Pattern      # a folder of test code
    test_file: re.Pattern     # a file name of test code
    test_namespace: re.Pattern = None  # a namespace of test code inside a file (Rust's
                                       # `#[cfg(test)] mod tests`), matched on Chunk.namespace
    excludes: tuple = ()      # .gitignore-style patterns of its files that are not source
    never_walked: tuple = ()  # folders that hold nobody's source (dependencies, caches)
    beside: tuple = ()        # (marker, folders): folders of generated files, skipped where
                              # the marker folder sits beside them
    syntax: str = ""          # its table in chunkers/tables.py when module is "treesitter", the
                              # one tree-sitter driver; "" for a chunker of its own
    demo_dir: re.Pattern = DEMO_DIR  # a folder of examples, demos, samples or benchmarks
    demo_block: re.Pattern = None    # module-level code that runs only as a script
    shared_with: tuple = ()   # (extension, language): files of its extension that are that
                              # language's when that language's tree of them shows it (a .h
                              # of C++: chunkers/treesitter.py's header rule); both use the driver

    def chunk(self, text, ext):
        """The chunks of a file's text (the chunker module is imported on first use);
        Chunks.language names the other language of shared_with when it owns the file."""
        module = importlib.import_module(f"{__package__}.chunkers.{self.module}")
        if not self.syntax:
            return module.chunk(text, ext)
        other = dict(self.shared_with).get(ext)
        return module.chunk(text, ext, self.syntax, other and by_name(other).syntax)

    def is_test(self, path, namespace=""):
        *folders, name = path.split("/")
        return any(self.test_dir.search(f) for f in folders) or \
            bool(self.test_file.search(name)) or \
            bool(namespace and self.test_namespace and self.test_namespace.search(namespace))

    def is_demo(self, path, kind="", text=""):
        """Code that shows the library rather than is it: a file in a folder of examples,
        demos or benchmarks, or a script's main block."""
        return any(self.demo_dir.search(f) for f in path.split("/")[:-1]) or \
            bool(self.demo_block and kind == "module" and self.demo_block.search(text))


NEVER = re.compile(r"(?!)")          # a language with no folder of test code by convention
JS_TEST_DIR = re.compile(r"^(__tests__|tests?|e2e)$")
JS_TEST_FILE = re.compile(r"\.(test|spec)\.[cm]?[jt]sx?$")
LANGUAGES = (
    Language("csharp", (".cs",), "csharp", 2,
             test_dir=re.compile(r"(?i:(^|[._-])tests?)$|[a-z0-9]Tests?$"),  # Foo.Tests, UnitTests
             test_file=re.compile(r"^Tests?[A-Z_]|[a-z0-9]Tests?\.cs$|(?i:(^|[._-])tests?\.cs)$"),
             excludes=("bin/", "obj/", "packages/"),
             beside=(("ProjectSettings", ("Library", "Temp")),)),        # Unity's caches
    Language("typescript", (".ts", ".mts", ".cts", ".tsx"), "typescript", 1,
             test_dir=JS_TEST_DIR, test_file=JS_TEST_FILE,
             excludes=("dist/", "build/", "out/"), never_walked=(".next/", "coverage/")),
    Language("javascript", (".js", ".mjs", ".cjs", ".jsx"), "typescript", 1,
             test_dir=JS_TEST_DIR, test_file=JS_TEST_FILE,
             excludes=("dist/", "build/", "out/", "*.min.js", "*.bundle.js"),
             never_walked=(".next/", "coverage/")),
    Language("python", (".py", ".pyi"), "python", 1,
             test_dir=re.compile(r"^(tests?|testing)$"),
             test_file=re.compile(r"^test_.*\.pyi?$|_test\.pyi?$|^conftest\.py$"),
             excludes=("build/", "dist/"),
             demo_block=re.compile(r"^if\s+__name__\s*==\s*['\"]__main__['\"]\s*:", re.M),
             never_walked=("__pycache__/", ".venv/", "venv/", ".tox/", ".nox/", ".eggs/",
                           "*.egg-info/", "site-packages/", ".mypy_cache/", ".pytest_cache/")),
    Language("go", (".go",), "treesitter", 1, syntax="go",
             test_dir=NEVER, test_file=re.compile(r"_test\.go$"),
             never_walked=("vendor/", "testdata/")),
    Language("java", (".java",), "treesitter", 1, syntax="java",
             test_dir=re.compile(r"^tests?$"), test_file=re.compile(r"Tests?\.java$"),
             excludes=("target/", "build/"), never_walked=(".gradle/",)),
    Language("rust", (".rs",), "treesitter", 1, syntax="rust",
             test_dir=re.compile(r"^tests$"), test_file=NEVER,
             test_namespace=re.compile(r"(^|\.)tests?(\.|$)"), excludes=("target/",)),
    Language("c", (".c", ".h"), "treesitter", 18, syntax="c",
             test_dir=NEVER, test_file=NEVER, excludes=("build/", "third_party/"),
             shared_with=((".h", "cpp"),)),
    Language("cpp", (".cpp", ".cc", ".cxx", ".hpp", ".hh", ".hxx"), "treesitter", 18, syntax="cpp",
             test_dir=NEVER, test_file=NEVER, excludes=("build/", "third_party/")),
)
EXTENSIONS = tuple(ext for lang in LANGUAGES for ext in lang.extensions)
SHARED_EXTENSIONS = tuple(ext for lang in LANGUAGES for ext, _ in lang.shared_with)


def by_name(name):
    return next(lang for lang in LANGUAGES if lang.name == name)


def extensions_read(lang):
    """The extensions of a language's files: its own, and those it shares with another
    (C++ owns a .h that holds C++)."""
    return lang.extensions + tuple(ext for other in LANGUAGES for ext, name in other.shared_with
                                   if name == lang.name)


def language_for(path):
    """The Language of a file name, or None."""
    path = str(path)
    return next((lang for lang in LANGUAGES if path.endswith(lang.extensions)), None)


def by_language(paths, owned=None):
    """'csharp 4,802, typescript 52': how many of these files each language has. owned:
    {path: language} of files of SHARED_EXTENSIONS, as their content decided (a .h of C++)."""
    counts, owned = {}, owned or {}
    for path in paths:
        lang = language_for(path)
        name = owned.get(path) or (lang and lang.name)
        if name:
            counts[name] = counts.get(name, 0) + 1
    return ", ".join(f"{name} {n:,}" for name, n in sorted(counts.items(), key=lambda kv: -kv[1]))


def chunk_source(path, text):
    """The chunks of a file's text, by its language."""
    lang = language_for(path)
    return lang.chunk(text, max((e for e in lang.extensions if str(path).endswith(e)), key=len))
