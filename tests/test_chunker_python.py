"""How the Python chunker (codebase_rag.chunkers.python) cuts Python into chunks, written as
snippet -> chunks.

Each test shows a small snippet and the exact chunks it must yield, as tuples
(kind, cls, member, start_line, end_line). Lines are 1-based and inclusive, and line 1 is
the first line of the snippet (the newline right after the opening quotes is dropped).

The rules these tests pin down:
  * one chunk per def, from its first decorator to the last line of its body (comments
    after the body are not in it); "method" in a class body, else "function"; async,
    staticmethod, classmethod and property defs alike;
  * defs, classes and lambdas inside a function body stay inside it;
  * a class with methods is a container: its methods carry the class chain (Outer.Inner);
    a class with no def inside it is one "class" chunk, nested classes included;
  * code outside defs and classes, in a module or a container class, is grouped in runs
    ("module" / "attributes" chunks) that imports, dunder assignments and import-only
    if/try blocks never start or join; a one- or two-line run with no compound statement
    or call is no chunk; a file with code but no chunk is one "module" chunk;
  * a docstring belongs to its def or class: `doc` holds its text, `doc_lines` its lines,
    and `owner_doc` the docstring of the class around;
  * a .pyi stub's classes are whole "class" chunks, its module-level defs "function"s;
  * broken code still yields the chunks of its well-formed parts and counts its errors;
    whatever the input, chunking never raises (beyond the stated nesting limit) and
    every chunk lies inside the file.
"""
import os
import random
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from codebase_rag.chunkers import ChunkerLimit, Chunks, contract, python

ROOT = Path(__file__).resolve().parents[1]


def py(src):
    """Dedent a snippet; line 1 is the line after the opening quotes."""
    src = textwrap.dedent(src)
    return src[1:] if src.startswith("\n") else src


def problems(text, result):
    """What is wrong with the chunks of text, whatever the text (the one chunk contract)."""
    bad = contract.problems(text, result, "python")
    return bad + ([] if isinstance(result, Chunks) else [f"not a Chunks: {result!r}"])


def chunk(src, ext=".py"):
    """The Chunk objects for a clean snippet: sane, no parse error, no line in two chunks."""
    text = py(src)
    result = python.chunk(text, ext)
    assert problems(text, result) == []
    assert result.parse_errors == 0
    for a, b in zip(result, result[1:]):
        assert a.end_line < b.start_line, f"{a} overlaps {b}"
    return result


def chunks(src, ext=".py"):
    """snippet -> [(kind, cls, member, start_line, end_line)]"""
    return [(c.kind, c.cls, c.member, c.start_line, c.end_line) for c in chunk(src, ext)]


# ----------------------------------------------------------------------------- defs
def test_one_chunk_per_function_and_method():
    assert chunks("""
        def top(a):
            return a

        class C:
            def first(self):
                pass

            def second(self):
                x = 1
                return x
        """) == [
        ("function", "", "top", 1, 2),
        ("method", "C", "first", 5, 6),
        ("method", "C", "second", 8, 10),
    ]


def test_chunk_records_signature_line_and_text():
    [c] = chunk("""
        @cache
        async def fetch(
            url: str,   # where from
            retries: int = 3, \\
            *, timeout: float | None = None,
        ) -> bytes:
            return b""
        """)
    assert (c.kind, c.member, c.start_line, c.sig_line, c.end_line) == \
        ("function", "fetch", 1, 2, 7)
    assert c.signature == \
        "async def fetch( url: str, retries: int = 3, *, timeout: float | None = None, ) -> bytes"
    assert c.namespace == ""


def test_class_signature_keeps_bases_and_keywords():
    [c] = chunk("""
        class Settings(Base, metaclass=Meta):
            x = 1
        """)
    assert (c.kind, c.member, c.signature) == \
        ("class", "Settings", "class Settings(Base, metaclass=Meta)")


def test_a_long_signature_is_cut_at_300_characters():
    params = ", ".join(f"parameter_{i}" for i in range(50))
    [c] = chunk(f"def f({params}):\n    pass\n")
    assert len(c.signature) == 300 and c.signature.startswith("def f(parameter_0, ")


def test_decorators_start_the_chunk_even_over_several_lines():
    assert chunks("""
        @app.route(
            "/items/<int:id>",
            methods=["GET", "POST"],
        )
        @login_required
        def item(id):
            return id
        """) == [("function", "", "item", 1, 7)]


def test_async_defs_are_functions_and_methods():
    assert chunks("""
        async def main():
            async with session() as s:
                async for row in s:
                    await row

        class Client:
            async def get(self):
                return await self.fetch()
        """) == [
        ("function", "", "main", 1, 4),
        ("method", "Client", "get", 7, 8),
    ]


def test_staticmethod_classmethod_and_property_are_methods_setter_too():
    assert chunks("""
        class C:
            @staticmethod
            def make():
                return C()

            @classmethod
            def build(cls):
                return cls()

            @property
            def size(self):
                return 1

            @size.setter
            def size(self, value):
                pass
        """) == [
        ("method", "C", "make", 2, 4),
        ("method", "C", "build", 6, 8),
        ("method", "C", "size", 10, 12),
        ("method", "C", "size", 14, 16),
    ]


def test_comments_after_the_body_are_not_in_the_chunk():
    assert chunks("""
        def f():
            if x:
                return 1
                # after the if's body
            # after the def's body

        # before g
        def g():
            pass
        """) == [
        ("function", "", "f", 1, 3),
        ("function", "", "g", 8, 9),
    ]


def test_one_liners_and_semicolons():
    assert chunks("""
        def one(): return 1
        def two(x): x += 1; return x
        class Empty: pass
        """) == [
        ("function", "", "one", 1, 1),
        ("function", "", "two", 2, 2),
        ("class", "", "Empty", 3, 3),
    ]


def test_line_continuations_inside_the_body():
    assert chunks("""
        def total(a, \\
                  b):
            return a + \\
                b
        x = 1
        """) == [("function", "", "total", 1, 4)]


# ----------------------------------------------------------------------------- what stays inside
def test_nested_functions_and_classes_inside_a_function_stay_inside():
    assert chunks("""
        def outer():
            def helper():
                def deeper():
                    pass
                return deeper
            class Local:
                def method(self):
                    pass
            return helper, Local

        class C:
            def m(self):
                def inner():
                    pass
                return inner
        """) == [
        ("function", "", "outer", 1, 9),
        ("method", "C", "m", 12, 15),
    ]


def test_lambdas_are_never_chunks():
    assert chunks("""
        square = lambda x: x * x

        class C:
            key = lambda self: self.name

            def sort(self, items, key=lambda i: (i, {"a": lambda: 1})):
                return sorted(items, key=lambda i: i)
        """) == [("method", "C", "sort", 6, 7)]


def test_def_and_class_inside_strings_and_comments_are_not_code():
    assert chunks('''
        TEMPLATE = """
        def generated():
            pass
        """
        # class Commented:
        #     def method(self): pass
        def real():
            s = "def fake(): pass"
            t = f"class {s}: {'def'}"
            return s, t
        ''') == [
        ("module", "", "<module>", 1, 4),
        ("function", "", "real", 7, 10),
    ]


# ----------------------------------------------------------------------------- classes
def test_nested_classes_give_the_class_chain():
    assert chunks("""
        class Outer:
            class Inner:
                class Innermost:
                    def deepest(self):
                        pass

                def inner(self):
                    pass

            def outer(self):
                pass
        """) == [
        ("method", "Outer.Inner.Innermost", "deepest", 4, 5),
        ("method", "Outer.Inner", "inner", 7, 8),
        ("method", "Outer", "outer", 10, 11),
    ]


def test_classes_without_defs_are_one_chunk_each():
    assert chunks("""
        @dataclass(frozen=True)
        class Point:
            x: int
            y: int = 0

        class Color(Enum):
            RED = 1

        class Pair(NamedTuple):
            left: int

        class NotFound(LookupError):
            pass
        """) == [
        ("class", "", "Point", 1, 4),
        ("class", "", "Color", 6, 7),
        ("class", "", "Pair", 9, 10),
        ("class", "", "NotFound", 12, 13),
    ]


def test_a_def_free_class_is_one_chunk_with_its_nested_classes():
    assert chunks("""
        class Article(Model):
            title = CharField()

            class Meta:
                ordering = ["title"]
        """) == [("class", "", "Article", 1, 5)]


def test_def_free_classes_inside_a_container_are_chunks_of_their_own():
    assert chunks("""
        class Api:
            class Error(Exception):
                pass

            def call(self):
                raise self.Error()
        """) == [
        ("class", "Api", "Error", 2, 3),
        ("method", "Api", "call", 5, 6),
    ]


def test_a_container_class_attributes_are_a_run_of_their_own():
    # Fields and constants of a class with methods: found by a search for them, and never
    # glued onto a method. Two lines or fewer (no call, no if) are no chunk of their own.
    assert chunks("""
        class Article(Model):
            __tablename__ = "articles"
            id = Column(Integer, primary_key=True)
            title = Column(String)
            body = Column(Text)

            def __str__(self):
                return self.title

            MAX = 10
            MIN = 1

            def short(self):
                return self.title[:self.MAX]
        """) == [
        ("attributes", "Article", "<attributes>", 3, 5),
        ("method", "Article", "__str__", 7, 8),
        ("method", "Article", "short", 13, 14),
    ]


def test_defs_under_if_and_try_in_a_class_are_methods():
    assert chunks("""
        class C:
            if PY2:
                def text(self):
                    return unicode(self)
            else:
                def text(self):
                    return str(self)
        """) == [
        ("method", "C", "text", 3, 4),
        ("method", "C", "text", 6, 7),
    ]


# ----------------------------------------------------------------------------- docstrings
def test_docstring_belongs_to_its_def_with_its_lines():
    [c] = chunk('''
        def area(r):
            """Area of a circle
            of radius r."""
            return 3.14 * r * r
        ''')
    assert (c.start_line, c.end_line, c.doc, c.doc_lines) == \
        (1, 4, "Area of a circle of radius r.", (2, 3))


@pytest.mark.parametrize("literal, doc", [
    ("'single'", "single"),
    ('r"""raw \\d"""', "raw \\d"),
    ('"""tab\\tescape"""', "tab escape"),
    ('"implicit " "concatenation"', "implicit concatenation"),
    ('("parenthesised")', "parenthesised"),
    ('u"unicode"', "unicode"),
    ('"""trailing comment"""  # here', "trailing comment"),
])
def test_docstring_forms(literal, doc):
    [c] = chunk(f"def f():\n    {literal}\n    return 1\n")
    assert (c.doc, c.doc_lines) == (doc, (2, 2))


def test_a_docstring_in_parentheses_over_lines_with_comments_inside():
    [c] = chunk("""
        def f():
            ("part one, "  # a comment
             "part two")
            return 1
        """)
    assert (c.doc, c.doc_lines) == ("part one, part two", (2, 3))


@pytest.mark.parametrize("body", [
    'f"not a {doc}"',          # an f-string is no docstring
    'b"bytes"',                # nor are bytes
    'x = 1\n    "too late"',   # nor a string after the first statement
    '"a" + "b"',               # nor an expression
])
def test_what_is_not_a_docstring(body):
    [c] = chunk(f"def f():\n    {body}\n    return 1\n")
    assert (c.doc, c.doc_lines) == ("", ())


def test_owner_doc_is_the_docstring_of_the_innermost_class():
    result = chunk('''
        class Outer:
            """The outer one."""

            class Inner:
                """The inner one."""

                def m(self):
                    """M."""

            class Plain:
                x = 1

            def n(self):
                pass

        def free():
            pass
        ''')
    assert [(c.member, c.doc, c.owner_doc) for c in result] == [
        ("m", "M.", "The inner one."),
        ("Plain", "", "The outer one."),
        ("n", "", "The outer one."),
        ("free", "", ""),
    ]


def test_a_leaf_class_chunk_carries_its_own_docstring():
    [c] = chunk('''
        class Point:
            """A point in the plane."""
            x: int
        ''')
    assert (c.kind, c.doc, c.doc_lines, c.owner_doc) == ("class", "A point in the plane.", (2, 2), "")


# ----------------------------------------------------------------------------- module-level code
def test_imports_and_dunders_never_make_a_chunk_a_script_body_does():
    assert chunks('''
        """Module doc."""
        from __future__ import annotations
        import os
        from typing import TYPE_CHECKING
        if TYPE_CHECKING:
            from x import Y
        try:
            import ujson as json
        except ImportError:
            import json
        __all__ = [
            "main",
        ]

        parser = argparse.ArgumentParser()
        parser.add_argument("--source")
        args = parser.parse_args()
        ''') == [("module", "", "<module>", 15, 17)]


def test_a_constant_table_is_a_module_chunk_a_lone_constant_is_not():
    # Two one-line statements fill two lines, whatever the blank lines between them.
    assert chunks("""
        logger = logging.getLogger(__name__)

        T = TypeVar("T")

        def f():
            pass

        CODES = {
            200: "OK",
            404: "Not Found",
        }
        """) == [
        ("function", "", "f", 5, 6),
        ("module", "", "<module>", 8, 11),
    ]


def test_main_block_and_a_bare_call_are_chunks_however_short():
    assert chunks("""
        def main():
            pass

        register(main)

        if __name__ == "__main__":
            main()
        """) == [
        ("function", "", "main", 1, 2),
        ("module", "", "<module>", 4, 7),
    ]


def test_defs_under_module_level_if_try_for_with_are_functions():
    assert chunks("""
        if sys.version_info >= (3, 8):
            def f():
                return "new"
        else:
            def f():
                return "old"

        try:
            from os import fspath
        except ImportError:
            def fspath(path):
                return path
        """) == [
        ("function", "", "f", 2, 3),
        ("function", "", "f", 5, 6),
        ("function", "", "fspath", 11, 12),
    ]


def test_a_long_run_is_cut_at_a_gap_line_after_30_lines():
    body = "".join(f"step({i})\n" for i in range(25)) + "\n" + \
        "".join(f"step({i})\n" for i in range(25, 40)) + "\n" + "final()\n"
    assert chunks(body) == [
        ("module", "", "<module>", 1, 41),
        ("module", "", "<module>", 43, 43),
    ]


def test_a_long_run_without_gaps_is_cut_every_60_lines():
    body = "".join(f"step({i})\n" for i in range(130))
    assert [(c.start_line, c.end_line) for c in chunk(body)] == [(1, 60), (61, 120), (121, 130)]


def test_a_file_of_only_imports_is_one_module_chunk():
    assert chunks("""
        # package re-exports
        from .client import Client
        from .errors import Error

        __all__ = ["Client", "Error"]
        """) == [("module", "", "<module>", 2, 5)]


def test_a_file_of_only_a_docstring_is_one_module_chunk_carrying_it():
    [c] = chunk('"""The package."""\n')
    assert (c.kind, c.start_line, c.end_line, c.doc, c.doc_lines) == \
        ("module", 1, 1, "The package.", (1, 1))


@pytest.mark.parametrize("text", ["", "\n\n", "# only a comment\n", "   "])
def test_empty_and_comment_only_files_have_no_chunks(text):
    assert python.chunk(text, ".py") == []


# ----------------------------------------------------------------------------- modern syntax
def test_match_statements_and_soft_keywords():
    assert chunks("""
        def handle(command):
            match command:
                case {"type": type}:
                    return type
                case _:
                    return None

        def match(case, type):
            return case, type

        match sys.platform:
            case "win32":
                def sep():
                    return "\\\\"
        """) == [
        ("function", "", "handle", 1, 6),
        ("function", "", "match", 8, 9),
        ("function", "", "sep", 13, 14),
    ]


def test_overloads_and_protocol_stubs_in_a_py_file_are_chunks():
    # `...` is a body: each overload is a chunk, like the implementation after it.
    assert chunks("""
        class Reader(Protocol):
            def read(self) -> bytes: ...

        @overload
        def parse(v: int) -> int: ...
        @overload
        def parse(v: str) -> str: ...
        def parse(v):
            return v
        """) == [
        ("method", "Reader", "read", 2, 2),
        ("function", "", "parse", 4, 5),
        ("function", "", "parse", 6, 7),
        ("function", "", "parse", 8, 9),
    ]


# ----------------------------------------------------------------------------- stubs
def test_a_stub_file_gives_whole_classes_and_module_level_functions():
    assert chunks("""
        import sys
        from typing import overload

        class Client:
            timeout: float
            def get(self, url: str) -> bytes: ...
            @overload
            def post(self, data: bytes) -> None: ...
            @overload
            def post(self, data: str) -> None: ...
            class Error(Exception): ...

        if sys.version_info >= (3, 10):
            def connect(host: str) -> Client: ...

        def close(c: Client) -> None: ...
        """, ext=".pyi") == [
        ("class", "", "Client", 4, 11),
        ("function", "", "connect", 14, 14),
        ("function", "", "close", 16, 16),
    ]


def test_the_same_stub_as_a_py_file_gives_methods():
    assert [k for k, *_ in chunks("""
        class Client:
            def get(self) -> bytes: ...
        """)] == ["method"]


# ----------------------------------------------------------------------------- bad input
def test_a_clean_file_has_no_parse_errors():
    assert python.chunk("def f():\n    return 1\n", ".py").parse_errors == 0


def test_an_unclosed_bracket_loses_only_its_own_def():
    text = py("""
        def good():
            return 1

        def broken(a, b:
            return 2

        class C:
            def m(self):
                return 3

        def after():
            \"\"\"Still found.\"\"\"
            return 4
        """)
    result = python.chunk(text, ".py")
    assert problems(text, result) == []
    assert result.parse_errors > 0
    assert [(c.kind, c.cls, c.member, c.start_line, c.end_line) for c in result
            if c.kind != "module"] == [
        ("function", "", "good", 1, 2),
        ("method", "C", "m", 8, 9),
        ("function", "", "after", 11, 13),
    ]
    assert result[-1].doc == "Still found."


def test_a_stray_line_keeps_the_defs_around_it():
    text = py("""
        def first():
            return 1
        )))
        def second():
            return 2
        """)
    result = python.chunk(text, ".py")
    assert problems(text, result) == [] and result.parse_errors > 0
    assert [(c.member, c.start_line, c.end_line) for c in result if c.kind == "function"] == \
        [("first", 1, 2), ("second", 4, 5)]


@pytest.mark.parametrize("text", [
    "def", "def (", "def f(", "def f():", "def if(): pass", "class", "class :", "class C(",
    "@", "@\n", "@dec", "async", "async def", "lambda:", '"""', "'''never closed",
    "f'{", "\\", "def f():\n\treturn 1\n        return 2", "class C:\n  def m(self):\n pass",
    "match", "match x:\n  case", "if x:\n", "    indented = 1\n", "\x00\x01", "\ufeffx = 1",
])
def test_fragments_never_raise(text):
    result = python.chunk(text, ".py")
    assert problems(text, result) == []


def test_a_keyword_is_never_a_chunk_name():
    text = "def if():\n    pass\nclass for:\n    def while(self): pass\n"
    result = python.chunk(text, ".py")
    assert problems(text, result) == []
    assert {c.member for c in result} <= {"<module>"}


def test_random_garbage_never_raises_and_chunks_stay_in_the_file():
    rng = random.Random(5)
    pieces = ["def", "class", "async", "@", "(", ")", "[", "]", ":", "\n", "    ", '"""',
              "'", "#", "\\\n", "lambda", "x", "pass", "...", "f'", "{", "}"]
    failures = []
    for _ in range(500):
        text = "".join(rng.choice(pieces) if rng.random() < 0.8 else chr(rng.randint(0, 0x2FF))
                       for _ in range(rng.randint(0, 60)))
        for ext in (".py", ".pyi"):
            bad = problems(text, python.chunk(text, ext))
            if bad:
                failures.append((len(text), text, bad[0]))
    assert failures == [], f"{len(failures)} inputs fail, shortest: {min(failures)[1:]}"


def test_every_prefix_of_a_real_file_chunks_sanely():
    text = (ROOT / "tests" / "oracle" / "py" / "layout.py").read_text()
    failures = []
    for end in range(0, len(text), 37):
        bad = problems(text[:end], python.chunk(text[:end], ".py"))
        if bad:
            failures.append((end, bad[0]))
    assert failures == []


# ----------------------------------------------------------------------------- limits
def test_four_hundred_nested_classes_chunk_without_recursion():
    text = "".join(" " * i + f"class C{i}:\n" for i in range(400)) + " " * 400 + "def m(self): pass\n"
    [c] = chunk(text)
    assert (c.kind, c.member, c.cls) == ("method", "m", ".".join(f"C{i}" for i in range(400)))


def test_a_hundred_thousand_nested_brackets_chunk_without_recursion():
    text = "x = " + "(" * 100_000 + "1" + ")" * 100_000 + "\ndef f(): pass\n"
    assert [(c.member, c.start_line) for c in python.chunk(text, ".py")] == [("f", 2)]


def test_nesting_beyond_the_stated_limit_is_an_error_the_indexer_reports(monkeypatch):
    # The real limit (10,000) needs a 50 MB file of indentation; a lowered one shows the path.
    monkeypatch.setattr(python, "MAX_NESTING", 5)
    text = "".join(" " * i + "class C:\n" for i in range(8)) + " " * 8 + "x = 1\n"
    with pytest.raises(ChunkerLimit):
        python.chunk(text, ".py")


def test_importing_the_chunker_loads_no_grammar():
    code = ("import sys; import codebase_rag.chunkers.python; "
            "print(sorted(m for m in sys.modules if m.startswith('tree_sitter')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, check=True).stdout
    assert out.strip() == "[]"


def test_a_short_fuzz_run_over_mutated_real_python_finds_nothing():
    # The long run (20,000+ cases over real repositories) is bench/fuzz_python.py.
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "fuzz_python.py"),
                           "--source", str(ROOT / "tests" / "oracle" / "py"),
                           "--source", str(ROOT / "codebase_rag"),
                           "--cases", "2000", "--seed", "11"],
                          capture_output=True, text=True, timeout=600,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "2,000 cases" in proc.stdout and " 0 failures" in proc.stdout


def test_pydantic_models_config_and_a_method_under_not_type_checking():
    """The two shapes issue 31 names in pydantic: a def-free `class Config:` in a def-free
    model (the model is one chunk, Config inside it, as ast's oracle counts it), and a class
    whose one def sits under `if not TYPE_CHECKING:` (a method of that class, as ast sees)."""
    assert chunks('''
        class Model(BaseModel):
            x: int

            class Config:
                orm_mode = True


        class GetPydanticSchema:
            get_schema: Callable | None = None

            if not TYPE_CHECKING:
                def __getattr__(self, item):
                    return object.__getattribute__(self, item)

            __hash__ = object.__hash__
        ''') == [
        ("class", "", "Model", 1, 5),
        ("method", "GetPydanticSchema", "__getattr__", 12, 13),
    ]
