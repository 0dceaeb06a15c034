"""How the one tree-sitter driver (codebase_rag.chunkers.treesitter) cuts Go, Java, Rust, C and
C++ into chunks, written as snippet -> chunks: (kind, chain, member, start_line, end_line),
chain being namespace.cls. Line 1 is the line after the opening quotes.

The rules these pin down (the module doc says them whole): a function with a body is a
chunk, from the comments and attributes directly above it; nothing inside a body is; a
container with no function inside is one chunk, whole; a namespace is one only when it
holds none; a .h file is C unless its tree is C++; and whatever the input, chunking keeps
the chunk contract or stops with ChunkerLimit, and one hostile file never stops a build.
"""
import re
import textwrap

import pytest

from codebase_rag.chunkers import ChunkerLimit, contract
from codebase_rag.chunkers.tables import TABLES
from codebase_rag.languages import LANGUAGES, chunk_source, language_for
from codebase_rag.build_runs import index_tree

EXT = {"go": ".go", "java": ".java", "rust": ".rs", "c": ".c", "cpp": ".cpp"}


def src(text):
    text = textwrap.dedent(text)
    return text[1:] if text.startswith("\n") else text


def chunk(text, lang, name=None):
    text = src(text)
    result = chunk_source(name or "x" + EXT[lang], text)
    assert contract.problems(text, result, lang) == []
    return result


def chunks(text, lang, name=None):
    return [(c.kind, ".".join(p for p in (c.namespace, c.cls) if p), c.member, c.start_line,
             c.end_line) for c in chunk(text, lang, name)]


# ----------------------------------------------------------------------------- Go
def test_go_methods_have_their_receivers_type_as_container_and_types_are_chunks():
    assert chunks("""
        package p

        // Store keeps things.
        type Store struct{ m map[string]int }

        type (
            // ID names one.
            ID int
            Visitor interface{ Visit() }
        )

        // Get gets.
        func (s *Store) Get(k string) int {
            f := func() int { return 1 }
            return s.m[k] + f()
        }

        func (p Pair[K, V]) Key() K { return p.k }

        func Asm(x int) int
        """, "go") == [
        ("struct", "", "Store", 3, 4),
        ("type", "", "ID", 7, 8),
        ("interface", "", "Visitor", 9, 9),
        ("method", "Store", "Get", 12, 16),
        ("method", "Pair", "Key", 18, 18),
    ]


def test_go_doc_is_the_comment_group_directly_above():
    [c] = chunk("""
        package p

        // Unrelated, a blank line away.

        // Refill gives back one point
        // per elapsed timer.
        func Refill() {}
        """, "go")
    assert (c.start_line, c.doc, c.doc_lines) == (5, "Refill gives back one point per elapsed "
                                                     "timer.", (5, 6))


# ----------------------------------------------------------------------------- Java
def test_java_containers_with_no_function_inside_are_one_chunk():
    assert chunks("""
        class Outer {
            /** Only signatures. */
            interface Listener { void on(String e); }

            static class Holder {
                static class Deep { int x; }
            }

            enum Op {
                PLUS { int apply(int a) { return a; } },
                MINUS;
            }

            @Override
            public String toString() {
                return new Object() { public String toString() { return "}"; } }.toString();
            }
        }
        """, "java") == [
        ("interface", "Outer", "Listener", 2, 3),
        ("class", "Outer", "Holder", 5, 7),
        ("method", "Outer.Op.PLUS", "apply", 10, 10),
        ("method", "Outer", "toString", 14, 17),
    ]


def test_java_initializers_and_record_constructors_are_chunks():
    assert [(k, m) for k, _, m, _, _ in chunks("""
        record Point(int x, int y) {
            static { System.out.println("}"); }
            { }
            Point { if (x < 0) throw new IllegalArgumentException(); }
        }
        """, "java")] == [("initializer", "<static initializer>"), ("initializer", "<initializer>"),
                          ("constructor", "Point")]


# ----------------------------------------------------------------------------- Rust
def test_rust_impls_and_traits_are_containers_and_attributes_belong_to_their_item():
    assert chunks("""
        /// A point.
        #[derive(Debug)]
        struct Point { x: i32 }

        impl fmt::Display for Point {
            fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result { Ok(()) }
        }

        trait Named { fn name(&self) -> String; }

        impl Copy for Point {}

        mod geometry {
            #[inline]
            pub fn origin() -> i32 {
                fn inner() -> i32 { 0 }
                inner()
            }
        }

        macro_rules! sq { ($x:expr) => { $x * $x }; }
        """, "rust") == [
        ("struct", "", "Point", 1, 3),
        ("method", "Display for Point", "fmt", 6, 6),
        ("trait", "", "Named", 9, 9),
        ("impl", "", "Copy for Point", 11, 11),
        ("function", "geometry", "origin", 14, 18),
        ("macro", "", "sq", 21, 21),
    ]


# ----------------------------------------------------------------------------- C and C++
def test_c_functions_types_and_typedefs_through_preprocessor_blocks():
    assert chunks("""
        struct fwd;
        /* A config. */
        typedef struct config { int a; } config_t;
        int proto(void);
        #ifdef X
        static int *make(int a) { return 0; }
        #else
        static int *make(int a) { return 1; }
        #endif
        extern "C" { void shim(void) {} }
        struct list { struct list *new; } head;
        """, "c") == [
        ("typedef", "", "config_t", 2, 3),
        ("function", "", "make", 6, 6),
        ("function", "", "make", 8, 8),
        ("function", "", "shim", 10, 10),
        ("struct", "", "list", 11, 11),
    ]


def test_cpp_methods_in_and_out_of_their_class_templates_and_namespaces():
    assert chunks("""
        namespace a::b {
        class Foo {
         public:
          int m() const { return 1; }
          int n();
        };
        template <typename T>
        T twice(T x) { return x + x; }
        void Foo::n() {}
        Foo::~Foo() {}
        namespace api { int only_a_prototype(); }
        }
        """, "cpp") == [
        ("method", "a.b.Foo", "m", 4, 4),
        ("function", "a.b", "twice", 7, 8),
        ("method", "a.b.Foo", "n", 9, 9),
        ("method", "a.b.Foo", "~Foo", 10, 10),
        ("namespace", "a.b", "api", 11, 11),
    ]


@pytest.mark.parametrize("text, language", [
    ("struct list { struct list *new; };\nint f(int class) { return class; }\n", ""),
    ("#ifdef __cplusplus\nextern \"C\" {\n#endif\nint f(void);\n#ifdef __cplusplus\n}\n#endif\n",
     ""),
    ("namespace n {\nint f() { return 1; }\n}\n", "cpp"),
    ("template <class T> struct Box { T v; };\n", "cpp"),
    ("class A {\n public:\n  int f() { return 1; }\n};\n", "cpp"),
])
def test_a_header_is_c_unless_its_tree_is_cpp(text, language):
    assert language_for("x.h").name == "c"
    result = chunk_source("x.h", text)
    assert result.language == language
    assert contract.problems(text, result, "c") == []


# ----------------------------------------------------------------------------- hostile input
DRIVEN = [lang for lang in LANGUAGES if lang.syntax]
HOSTILE = {
    "minified": lambda lang: "x" * 3 + ";{}()" * 40_000,
    "deep nesting": lambda lang: {"go": "package p\nfunc f() {" + "{" * 10_000 + "}" * 10_000 + "}",
                                  "java": "class A {" * 10_000 + "}" * 10_000,
                                  "rust": "mod m {" * 10_000 + "}" * 10_000,
                                  "c": "int f() {" + "(" * 10_000 + ")" * 10_000 + "}",
                                  "cpp": "namespace n {" * 10_000 + "}" * 10_000}[lang],
    "not UTF-8": lambda lang: b"int \xff\xfe f() { return '\x80'; }".decode("cp1252"),
    "NUL bytes": lambda lang: "class A {\0 void f() {\0}\0}" * 50,
    "binary": lambda lang: bytes(range(256)).decode("latin-1") * 40,
}


@pytest.mark.parametrize("lang", DRIVEN, ids=lambda lang: lang.name)
@pytest.mark.parametrize("shape", HOSTILE)
def test_hostile_input_keeps_the_contract_or_stops_with_a_chunker_limit(lang, shape):
    text = HOSTILE[shape](lang.name)
    try:
        result = lang.chunk(text, lang.extensions[0])
    except ChunkerLimit as e:
        assert str(e) and "\n" not in str(e)
        return
    assert contract.problems(text, result, lang) == []


BLANK_HOSTILE = """
import sys
from codebase_rag.chunkers import treesitter
from codebase_rag.chunkers.tables import TABLES
n = 200_000
lines = ["A" * n + ";", "  " + "A_" * (n // 2) + "x", "A" * n + "(" + "x" * n,
         "/* aaaa" * (n // 7) + "\\\\", "/**/" * (n // 4) + "\\\\", "class AB [[" * (n // 11),
         "class AB X<" + "a" * n, "template <" + "A_ " * (n // 3), ")\\n  " + "A" * n]
for line in lines:
    treesitter._blanked((line + "\\n").encode(), sys.argv[1])
print("read")
"""


@pytest.mark.parametrize("lang", [lang for lang in DRIVEN if TABLES[lang.syntax].blank],
                         ids=lambda lang: lang.name)
def test_the_blank_patterns_read_hostile_lines_at_all(lang):
    """Lines of 200,000 characters that almost match a pattern of the table's `blank` (a
    run of capitals, an unclosed comment, `class X [[` without its end) are read. The
    patterns were quadratic: 20,000 capitals took 25 s, so these would take hours; now all
    take well under a second. The timeout only guards against a hang."""
    import subprocess
    import sys
    done = subprocess.run([sys.executable, "-c", BLANK_HOSTILE, lang.syntax],
                          capture_output=True, text=True, timeout=300)
    assert done.stdout.strip() == "read", done.stderr[-500:]


def test_hostile_files_in_every_language_give_a_line_at_most_and_never_stop_a_build(
        tmp_path, word_embedder, capsys):
    tree = tmp_path / "src"
    tree.mkdir()
    names = []
    for lang in DRIVEN:
        for i, make in enumerate(HOSTILE.values()):
            names.append(f"bad{i}{lang.extensions[0]}")
            (tree / names[-1]).write_bytes(make(lang.name).encode("utf-8", "surrogateescape"))
    (tree / "bad5.c").write_bytes(b"\xff\xfeint f() { return 0; }\n\x00\x01")  # invalid UTF-8
    (tree / "good.go").write_text("package p\n\n// Refill refills.\nfunc Refill() {}\n")
    index_tree(str(tree), str(tmp_path / "db"), progress=False, embedder=word_embedder)
    err = capsys.readouterr().err.splitlines()
    for name in names + ["bad5.c"]:
        assert len([x for x in err if re.search(rf"\b{re.escape(name)}\b", x)]) <= 1, name
    import sqlite3
    con = sqlite3.connect(tmp_path / "db" / "index.sqlite")
    assert ("good.go", "go", "Refill") in set(con.execute("SELECT file, language, member "
                                                         "FROM chunks"))


def test_c_a_line_tree_sitter_cannot_read_costs_its_own_function_only():
    """lua's lparser.c: `LUA_QL("=") " or " LUA_QL("in")` (a macro call beside string
    literals) derails tree-sitter-c into one body that runs on over every later function;
    the file is cut where a `}` opens a line, and each piece read alone."""
    text = src("""
        static void forstat (LexState *ls, int line) {
          switch (ls->t.token) {
            default: luaX_syntaxerror(ls, LUA_QL("=") " or " LUA_QL("in") " expected");
          }
        }


        static int test_then_block (LexState *ls) {
          return 1;
        }

        /* The statement. */
        static int statement (LexState *ls) {
          return 0;
        }
        """)
    result = chunk_source("lparser.c", text)
    assert result.parse_errors > 0
    assert contract.problems(text, result, "c") == []
    assert [(c.member, c.start_line, c.end_line, c.doc) for c in result] == [
        ("test_then_block", 8, 10, ""), ("statement", 12, 15, "The statement.")]


def test_a_calling_convention_in_a_function_pointers_parentheses_keeps_the_typedef():
    """A macro before a function pointer's name (`(WINAPI *f)`, `(CALLBACK* f)`, one that
    holds the `*` itself: `(APIENTRYP f)`), its parameters on the line or the next: read as
    a second word of the declarator, the typedef was lost; read as blanks, it parses. An
    expression in parentheses followed by a call stays one."""
    text = src("""
        typedef int (WINAPI *peer_func)(SOCKET, struct sockaddr*, int*);
        typedef void (PASCAL *accept_func)
                     (PVOID buffer,
                      DWORD length);
        typedef int (WSAAPI* recv_func)
                    (SOCKET socket);
        typedef void (APIENTRYP POLYGON_MODE_PROC) (GLenum face, GLenum mode);

        int apply(int a, int b) {
            return (a * b)(a);
        }
        """)
    for name in ("x.c", "x.hpp"):
        result = chunk_source(name, text)
        assert [(c.kind, c.member, c.start_line, c.end_line) for c in result] == [
            ("typedef", "peer_func", 1, 1), ("typedef", "accept_func", 2, 4),
            ("typedef", "recv_func", 5, 6), ("typedef", "POLYGON_MODE_PROC", 7, 7),
            ("function", "apply", 9, 11)], name


def test_c_a_type_named_in_capitals_before_a_lone_name_is_no_macro():
    """A run of capitals that opens a declaration is an export macro when a type and a name
    follow it, but the declaration's own type (a typedef in capitals) when a name alone
    does: read as blanks, the declaration had no type, and the function it opens, or the
    one around it, was lost (C has no constructor, whose name alone follows a macro)."""
    text = src("""
        TEST_INTERNAL_PTR NumToPtr(const TEST_INT num, TEST_UINT8 size)
        {
            return 0;
        }

        void testEqualInt8Arrays(void)
        {
            TEST_INT8 p0[] = {1, 8, 117, -2};
            TEST_INT8 p1[] = {1, 8, 117, -2}, n;
            check(p0, p1);
        }

        LIB_API int lib_count (State *s) {
            return s->n;
        }

        LIB_API void (open_lib) (State *s) {
            run(s);
        }

        EXPORT_API int (*on_event)(int) = 0;
        """)
    result = chunk_source("x.c", text)
    assert contract.problems(text, result, "c") == []
    assert [(c.member, c.start_line, c.end_line) for c in result] == [
        ("NumToPtr", 1, 4), ("testEqualInt8Arrays", 6, 11), ("lib_count", 13, 15),
        ("open_lib", 17, 19)]


def test_c_a_closing_brace_inside_a_string_or_a_comment_cuts_no_broken_file():
    """A file tree-sitter-c cannot read is cut where a `}` opens a line: not one in a string
    a `\\` continues (the function was cut in two), nor one in a comment (commented-out code
    became a chunk)."""
    text = src("""
        static void each(void) {
            list_for_each(item, items)
            {
                use(item);
            }
        }

        /*
        static void old(void) {
        }
        */

        static void check(void)
        {
            static const char *json = "{\\n\\
        \\t\\"name\\": 1\\n\\
        }";
            run(json);
        }
        """)
    result = chunk_source("x.c", text)
    assert result.parse_errors > 0
    assert contract.problems(text, result, "c") == []
    assert [(c.member, c.start_line, c.end_line) for c in result] == [
        ("each", 1, 6), ("check", 13, 19)]


def test_c_a_function_with_two_headers_under_if_else_starts_at_the_first():
    """hiredis's adapters/libuv.h: `#if` old libuv `f(timer, status) {` `#else` `f(timer) {`
    `#endif` and one body. clang reads the first header; tree-sitter-c leaves it open in an
    ERROR and reads the second as the function, which then started inside it."""
    text = src("""
        #if (UV_VERSION_MAJOR == 0 && UV_VERSION_MINOR < 11) || \\
            (UV_VERSION_MAJOR == 0 && UV_VERSION_PATCH < 23)
        static void onTimeout(uv_timer_t *timer, int status) {
            (void)status;
        #else
        static void onTimeout(uv_timer_t *timer) {
        #endif
            handleTimeout(timer->data);
        }

        static void setTimeout(void *privdata, long tv) {
            start(privdata, tv);
        }
        """)
    result = chunk_source("libuv.h", text)
    assert contract.problems(text, result, "c") == []
    assert [(c.member, c.start_line, c.end_line) for c in result] == [
        ("onTimeout", 3, 9), ("setTimeout", 11, 13)]


def test_cpp_an_export_macro_between_class_and_its_name_is_read_as_blanks():
    """`class LEVELDB_EXPORT Cache {`: tree-sitter-cpp reads it as a function named Cache
    with a body; the table's `blank` rule reads the macro as spaces (lines kept)."""
    assert chunks("""
        namespace leveldb {
        class LEVELDB_EXPORT Cache {
         public:
          virtual ~Cache();
          virtual void Prune() {}
        };
        struct DLL_API(x) Options final { int a; };
        }
        """, "cpp") == [
        ("method", "leveldb.Cache", "Prune", 5, 5),
        ("struct", "leveldb", "Options", 7, 7),
    ]


def test_cpp_a_block_macro_and_a_conversion_operator():
    """Catch2's `CATCH_TRY {` read as blanks (tree-sitter-cpp alone reads an initializer
    list, closes the function there and leaves the rest of the namespace at file level);
    `operator bool` named as clang names it."""
    assert chunks("""
        namespace Catch {
        struct Flag {
          explicit operator bool() const { return true; }
        };
        int parse(int x) {
          if (x) {
            CATCH_TRY { x = 2; }
            CATCH_CATCH_ALL { x = 0; }
          }
          return x;
        }
        int after() { return 1; }
        }
        """, "cpp") == [
        ("method", "Catch.Flag", "operator bool", 3, 3),
        ("function", "Catch", "parse", 5, 11),
        ("function", "Catch", "after", 12, 12),
    ]


def test_cpp_a_macro_called_at_namespace_scope_with_types_keeps_what_follows():
    """gmock's `GMOCK_DEFINE_DEFAULT_ACTION_FOR_RETURN_TYPE_(unsigned char, '\\0');`:
    tree-sitter-cpp cannot read types as a call's arguments, and its recovery swallowed
    the structs after it; an indented call in a body (a test's `REQUIRE(x);`) is left
    alone, so the test stays one function."""
    assert chunks("""
        namespace testing {
        DEFINE_DEFAULT(unsigned char, '\\0');  // NOLINT
        DEFINE_DEFAULT(::std::string, "");

        template <typename P>
        struct negation
            : std::integral_constant<bool, bool(!P::value)> {};

        template <typename P1, typename... Ps>
        struct conjunction<P1, Ps...>
            : std::conditional<bool(P1::value), conjunction<Ps...>, P1>::type {};
        }
        TEST_CASE("adds", "[math]") {
            REQUIRE(add(1, 2) == 3);
            SECTION("again") {
                REQUIRE(add(2, 2) == 4);
            }
        }
        """, "cpp") == [
        ("struct", "testing", "negation", 5, 7),
        ("struct", "testing", "conjunction", 9, 11),
        ("function", "", "TEST_CASE", 13, 18),
    ]


def test_cpp_a_macro_after_a_functions_header_on_its_line_is_not_its_name():
    """rapidjson's `void Clear() RAPIDJSON_NOEXCEPT {` and leveldb's `MutexLock(Mutex* mu)
    EXCLUSIVE_LOCK_FUNCTION(mu) : mu_(mu) {`: tree-sitter-cpp read the macro as the
    function's name, and `MemoryPoolAllocator.RAPIDJSON_NOEXCEPT` is what the index showed
    and embedded."""
    assert chunks("""
        namespace rapidjson {
        class MemoryPoolAllocator {
        public:
            void Clear() RAPIDJSON_NOEXCEPT {
                x = 1;
            }
            void Lock() EXCLUSIVE_LOCK_FUNCTION() { mu_.Lock(); }
            int Size() const LOCKS_EXCLUDED(mu_) {
                return 1;
            }
            size_type max_size() const RAPIDJSON_NOEXCEPT
            {
                return 2;
            }
            explicit MemoryPoolAllocator(Mutex* mu) EXCLUSIVE_LOCK_FUNCTION(mu) : mu_(mu) {
                mu_->Lock();
            }
        };
        }
        """, "cpp") == [
        ("method", "rapidjson.MemoryPoolAllocator", "Clear", 4, 6),
        ("method", "rapidjson.MemoryPoolAllocator", "Lock", 7, 7),
        ("method", "rapidjson.MemoryPoolAllocator", "Size", 8, 10),
        ("method", "rapidjson.MemoryPoolAllocator", "max_size", 11, 14),
        ("method", "rapidjson.MemoryPoolAllocator", "MemoryPoolAllocator", 15, 17),
    ]


def test_cpp_a_macro_for_if_and_a_macro_call_as_return_type_keep_the_class():
    """rapidjson's `RAPIDJSON_IF_CONSTEXPR (sizeof(Ch) == 1) {...} else {...}`: read as a
    call, its `else` closed the class, and GenericPointer's next 45 members lost it; its
    `RAPIDJSON_DISABLEIF_RETURN((NotExpr<...>), (GenericValue&)) operator[](T* name) {`
    (and the same on a line of its own) lost the function, or everything after it."""
    assert chunks("""
        class GenericPointer {
        public:
            template <typename T>
            RAPIDJSON_DISABLEIF_RETURN((internal::NotExpr<internal::IsSame<T, Ch> >), (GenericPointer))
            Append(T* name, Allocator* allocator = 0) const {
                return Append(name, allocator);
            }
            GenericPointer Append(SizeType index) const {
                RAPIDJSON_IF_CONSTEXPR (sizeof(Ch) == 1) {
                    return Append(token, allocator);
                }
                else {
                    Ch name[21];
                    return Append(name, allocator);
                }
            }
            template <typename T>
            RAPIDJSON_DISABLEIF_RETURN((internal::NotExpr<internal::IsSame<T, Ch> >),(GenericValue&)) operator[](T* name) {
                return (*this)[n];
            }
            bool IsValid() const { return parseErrorCode_ == kPointerParseErrorNone; }
        };
        """, "cpp") == [
        ("method", "GenericPointer", "Append", 3, 7),
        ("method", "GenericPointer", "Append", 8, 16),
        ("method", "GenericPointer", "operator[]", 17, 20),
        ("method", "GenericPointer", "IsValid", 21, 21),
    ]


def test_cpp_macros_before_a_class_name_or_between_a_type_and_a_functions_name():
    """google/benchmark's `class BENCHMARK_EXPORT BENCHMARK_INTERNAL_CACHELINE_ALIGNED State {`
    (two macros: State's 20 methods became one function named after the second), its
    `class BENCHMARK_EXPORT BENCHMARK_DEPRECATED_MSG(` / `"...") CSVReporter` and its `int
    BENCHMARK_NOINLINE Factorial(int n) {` (the macro read as Factorial's class)."""
    assert chunks("""
        namespace benchmark {
        class BENCHMARK_EXPORT BENCHMARK_INTERNAL_CACHELINE_ALIGNED State {
         public:
          bool skipped() const { return skipped_; }
        };
        class BENCHMARK_EXPORT BENCHMARK_DEPRECATED_MSG(
            "The CSV Reporter will be removed (soon)") CSVReporter
            : public BenchmarkReporter {
         public:
          CSVReporter() : printed_header_(false) {}
        };
        int BENCHMARK_NOINLINE Factorial(int n) {
          return (n == 1) ? 1 : n * Factorial(n - 1);
        }
        }
        """, "cpp") == [
        ("method", "benchmark.State", "skipped", 4, 4),
        ("method", "benchmark.CSVReporter", "CSVReporter", 10, 10),
        ("function", "benchmark", "Factorial", 12, 14),
    ]


def test_cpp_macros_for_try_catch_and_an_access_specifier_keep_the_class():
    """nlohmann/json's `JSON_TRY` / `{...}` / `JSON_CATCH(...) {}` (the catch came out as a
    function inside the one around it) and `JSON_PRIVATE_UNLESS_TESTED:` (read as a
    bit-field, the class after it was one chunk: its methods were lost)."""
    assert chunks("""
        template<typename BasicJsonType>
        class iter_impl
        {
          public:
            void assert_invariant() const noexcept {
                JSON_TRY
                {
                    check();
                }
                JSON_CATCH(...) {} // LCOV_EXCL_LINE
            }

          JSON_PRIVATE_UNLESS_TESTED:
            /*!
            @brief set the iterator to the first value
            */
            void set_begin() noexcept
            {
                switch (m_object->m_data.m_type)
                {
                    case value_t::object:
                    {
                        m_it.object_iterator = m_object->m_data.m_value.object->begin();
                        break;
                    }
                    default:
                        break;
                }
            }
        };
        """, "cpp") == [
        ("method", "iter_impl", "assert_invariant", 5, 11),
        ("method", "iter_impl", "set_begin", 14, 29),
    ]


def test_cpp_catch2s_catch_macros_and_an_unnamed_pointer_parameter_with_a_default():
    """Catch2's `} CATCH_CATCH_ANON (TestFailureException const&) {` / `} CATCH_CATCH_ALL{`
    after a `CATCH_TRY {` block (Benchmark's methods after it were lost), and its
    `void destruct_on_exit(std::enable_if_t<Destruct, U>* = nullptr) {` (ObjectStorage's
    methods were one chunk named `enable_if_t`)."""
    assert chunks("""
        struct Benchmark {
            void run() {
                CATCH_TRY {
                    measure();
                } CATCH_CATCH_ANON (TestFailureException const&) {
                    failed();
                } CATCH_CATCH_ALL{
                    std::rethrow_exception(std::current_exception());
                }
            }
            explicit operator bool() { return true; }
        };
        template <typename T, bool Destruct>
        struct ObjectStorage
        {
            template <typename U>
            void destruct_on_exit(std::enable_if_t<Destruct, U>* = nullptr) { destruct<true>(); }
            template <typename U>
            void destruct_on_exit(std::enable_if_t<!Destruct, U>* = nullptr) { }
            T& stored_object() { return *static_cast<T*>(static_cast<void*>(data)); }
        };
        """, "cpp") == [
        ("method", "Benchmark", "run", 2, 10),
        ("method", "Benchmark", "operator bool", 11, 11),
        ("method", "ObjectStorage", "destruct_on_exit", 16, 17),
        ("method", "ObjectStorage", "destruct_on_exit", 18, 19),
        ("method", "ObjectStorage", "stored_object", 20, 20),
    ]


def test_cpp_a_macro_between_if_and_its_condition():
    """fmt's `if FMT_CONSTEXPR20 (need_copy<T>::value) {` (`constexpr` or nothing): the
    `if` was lost, and every member of dynamic_format_arg_store after it with it."""
    assert chunks("""
        class dynamic_format_arg_store {
         public:
          template <typename T> void push_back(const named_arg<T, char_type>& arg) {
            if FMT_CONSTEXPR20 (need_copy<T>::value) {
              emplace_arg(fmt::arg(arg_name, dynamic_args_.push<stored_t<T>>(arg.value)));
            } else {
              emplace_arg(fmt::arg(arg_name, arg.value));
            }
          }
          void clear() {
            data_.clear();
          }
        };
        """, "cpp") == [
        ("method", "dynamic_format_arg_store", "push_back", 3, 9),
        ("method", "dynamic_format_arg_store", "clear", 10, 12),
    ]


def test_signatures_and_docs_are_read_as_written_not_as_blanked():
    """What the grammar reads with blanks stays out of what the index shows: a blanked
    default (`= nullptr`), a blanked macro, and a type after `static` (curl's
    `check_sspi_err(..., SECURITY_STATUS status, ...)` had lost its parameter's type)."""
    [a, b] = chunk("""
        struct ObjectStorage {
            void destruct_on_exit(std::enable_if_t<Destruct, U>* = nullptr) { destruct(); }
            /*
               Frees what Malloc gave, as
               RAPIDJSON_DELETE(ptr)
            */
            static void Free(void *ptr) RAPIDJSON_NOEXCEPT { std::free(ptr); }
        };
        """, "cpp")
    assert a.signature == "void destruct_on_exit(std::enable_if_t<Destruct, U>* = nullptr)"
    assert b.signature == "static void Free(void *ptr) RAPIDJSON_NOEXCEPT"
    assert b.doc == "Frees what Malloc gave, as RAPIDJSON_DELETE(ptr)"
    [c] = chunk("""
        static int check_sspi_err(struct Curl_easy *data, SECURITY_STATUS status,
                                  const char *function)
        {
          return status;
        }
        """, "c")
    assert c.signature == ("static int check_sspi_err(struct Curl_easy *data, SECURITY_STATUS "
                           "status, const char *function)")


def test_cpp_a_macro_call_ending_a_define_is_the_defines():
    """The last line of a #define is its body, not a macro alone on its line: read as
    blanks, the #define swallowed the next line and googletest's `TEST(Macros, Cat)` was
    lost."""
    assert chunks("""
        #define EXPECT_EXPANSION(Result, Macro) \\
          EXPECT_THAT("" GMOCK_PP_STRINGIZE(Macro), SameExceptSpaces(Result))

        TEST(Macros, Cat) {
          EXPECT_EXPANSION("14", GMOCK_PP_CAT(1, 4));
        }
        """, "cpp") == [("function", "", "TEST", 4, 6)]


def test_cpp_a_macro_call_over_two_lines_at_namespace_scope_keeps_what_follows():
    """abseil's `ABSL_FLAG(int, limit, 256 << 10,` / `"help (bytes)");`: tree-sitter-cpp
    reads the call as a function's header, and its recovery swallowed the struct after it
    (in re2's pcre.cc, and the namespace of the 30 methods after that)."""
    assert chunks("""
        ABSL_FLAG(int, regexp_stack_limit, 256 << 10,
                  "default PCRE stack limit (bytes)");

        struct pcre_extra {
          int flags;
        };
        """, "cpp") == [("struct", "", "pcre_extra", 4, 6)]


def test_cpp_a_macro_called_with_a_type_in_a_body_keeps_what_follows():
    """re2's `PARSE_FOR_TYPE(int16_t, 0);` in a test: tree-sitter-cpp reads the call as a
    function's header; after two of them and local structs with methods, every test in the
    file lost its namespace, one was cut to its first line and the local methods became
    chunks."""
    assert chunks("""
        namespace re2 {

        TEST(RE2ArgTest, Int16Test) {
          PARSE_FOR_TYPE(int16_t, 0);
        }

        TEST(RE2ArgTest, Uint16Test) {
          PARSE_FOR_TYPE(uint16_t, 1);
        }

        TEST(RE2ArgTest, ParseFromTest) {
          struct {
            bool ParseFrom(const char* str, size_t n) {
              ABSL_LOG(INFO) << "str = " << str << ", n = " << n;
              return true;
            }
          } obj1;
          RE2::Arg arg1(&obj1);
          EXPECT_TRUE(arg1.Parse("one", 3));

          struct {
            bool ParseFrom(const char* str, size_t n) {
              ABSL_LOG(INFO) << "str = " << str << ", n = " << n;
              return false;
            }
            void ParseFrom(const char* str) {}
          } obj2;
          RE2::Arg arg2(&obj2);
          EXPECT_FALSE(arg2.Parse("two", 3));
        }

        TEST(RE2ArgTest, OptionalDoubleTest) {
        }
        """, "cpp") == [
        ("function", "re2", "TEST", 3, 5),
        ("function", "re2", "TEST", 7, 9),
        ("function", "re2", "TEST", 11, 30),
        ("function", "re2", "TEST", 32, 33),
    ]


def test_cpp_a_namespace_opened_in_a_broken_region_holds_the_functions_after_it():
    """googletest's gtest_unittest.cc: one unreadable `#if` early on makes the rest of the
    file one ERROR, read again piece by piece between `}` lines. A namespace opened in one
    piece (`namespace namespace1 {` / `class ... {...};`) holds the functions of the next
    ones, until a piece ends with its `}`."""
    assert chunks("""
        namespace {
        #if A
        int f(int x) {
        #else
        int f(long x) {
        #endif
          return x;
        }
        }  // namespace

        namespace namespace1 {
        class MyType : public Base {
         public:
          explicit MyType(int an_x) : Base(an_x) {}
        };
        std::ostream& operator<<(std::ostream& os, const MyType& val) {
          return os << val.x();
        }
        }  // namespace namespace1

        void after() {
        }
        """, "cpp") == [
        ("function", "", "f", 3, 8),
        ("method", "namespace1.MyType", "MyType", 14, 14),
        ("function", "namespace1", "operator<<", 16, 18),
        ("function", "", "after", 21, 22),
    ]


def test_cpp_a_comparison_in_a_return_types_template_arguments_keeps_the_function():
    """Catch2's SFINAE overloads: tree-sitter-cpp read `) >=` and `) <` inside the return
    type's template arguments as the end of the list, so one function was lost, a bogus
    `gresult_type` chunk stood in its place, and the functions after it lost `Detail`."""
    assert chunks("""
        namespace Catch {
        namespace Detail {
            template <typename TargetType, typename Generator>
                std::enable_if_t<sizeof(typename Generator::result_type) >= sizeof(TargetType),
                TargetType> fillBitsFrom(Generator& gen) {
                using gresult_type = typename Generator::result_type;
                return static_cast<TargetType>(gen());
            }

            template <typename TargetType, typename Generator>
                std::enable_if_t<sizeof(typename Generator::result_type) < sizeof(TargetType),
                TargetType> fillBitsFrom(Generator& gen) {
                return TargetType(gen() < 2);
            }

            inline int after(int x) {
                if (sizeof(x) < 8) { return x; }
                return -x;
            }
        }
        }
        """, "cpp") == [
        ("function", "Catch.Detail", "fillBitsFrom", 3, 8),
        ("function", "Catch.Detail", "fillBitsFrom", 10, 14),
        ("function", "Catch.Detail", "after", 16, 19),
    ]


def test_cpp_a_macro_alone_on_its_line_is_read_as_blanks():
    """fmt's `FMT_BEGIN_NAMESPACE` (defined in another header) and Qt's `Q_OBJECT`:
    tree-sitter-cpp alone reads the macro as the type of the declaration after it, and
    every chunk up to that class's end is lost."""
    assert chunks("""
        FMT_BEGIN_NAMESPACE
        namespace detail {
        inline auto is_whitespace(char c) -> bool { return c == ' '; }
        }  // namespace detail
        class scan_buffer {
          Q_OBJECT
         public:
          void set(int x) { x = 1; }
        };
        FMT_END_NAMESPACE  // fmt
        """, "cpp") == [
        ("function", "detail", "is_whitespace", 3, 3),
        ("method", "scan_buffer", "set", 8, 8),
    ]
    # an attribute macro on the line above: the item starts below it, where clang says
    # (the macro expands to nothing), and the comment above the macro is not its doc
    [resize] = chunk("""
        struct stackvec {
          // resize the vector, without bounds checking
          FASTFLOAT_CONSTEXPR20
          void resize_unchecked(int n) noexcept { n = 1; }
        };
        """, "cpp")
    assert (resize.member, resize.start_line, resize.doc) == ("resize_unchecked", 4, "")
    # gtest: an export macro ending in `_`, an annotation between header and body, macros
    # before a declaration (CLI11), after `template <...>` too
    assert chunks("""
        class GTEST_API_ [[nodiscard]] RE {
         public:
          RE(const char* regex) { Init(regex); }
        };
        std::string Getter::CurrentStackTrace(int max_depth)
            GTEST_LOCK_EXCLUDED_(mutex_) {
          return "";
        }
        CLI11_NODISCARD CLI11_INLINE std::string App::name() const { return name_; }
        template <class T> CLI11_INLINE void App::parse(T x) { x = 1; }
        """, "cpp") == [
        ("method", "RE", "RE", 3, 3),
        ("method", "Getter", "CurrentStackTrace", 5, 8),
        ("method", "App", "name", 9, 9),
        ("method", "App", "parse", 10, 10),
    ]


def test_cpp_a_function_a_test_macro_defines_is_one_chunk():
    """Catch2's `TEST_CASE("...") {...}` (its macro defined in a header): tree-sitter-cpp
    reads a call missing its `;` and a block at file level, so the test's body was in no
    chunk at all. It is a function named by the macro, as clang names it when the header
    is not found (CLI11's tests); the call is its signature."""
    text = src("""
        // Adds one flag.
        TEST_CASE("OneFlag", "[app]") {
            run();
        }
        namespace n {
        TEST_CASE_METHOD(TApp, "OneFlagShort", "[app]")
        {
            CHECK(app.count("-c") == 1u);
        }
        }
        int after() { return 1; }
        """)
    result = chunk_source("app_test.cpp", text)
    assert contract.problems(text, result, "cpp") == []
    assert [(c.namespace, c.member, c.start_line, c.end_line, c.signature, c.doc)
            for c in result] == [
        ("", "TEST_CASE", 1, 4, 'TEST_CASE("OneFlag", "[app]")', "Adds one flag."),
        ("n", "TEST_CASE_METHOD", 6, 9, 'TEST_CASE_METHOD(TApp, "OneFlagShort", "[app]")', ""),
        ("", "after", 11, 11, "int after()", ""),
    ]


def test_a_grammar_is_loaded_only_for_a_file_of_its_language():
    import subprocess
    import sys
    from conftest import ROOT
    code = ("import sys\nfrom codebase_rag.languages import chunk_source\n"
            "grammars = lambda: sorted(m for m in sys.modules if m.startswith('tree_sitter_') and '.' not in m)\n"
            "assert grammars() == [], grammars()\n"
            "chunk_source('a.go', 'package p\\nfunc F() {}\\n')\n"
            "assert grammars() == ['tree_sitter_go'], grammars()\n"
            "chunk_source('a.h', 'int f(void);\\n')\n"
            "assert grammars() == ['tree_sitter_c', 'tree_sitter_cpp', 'tree_sitter_go'], grammars()\n"
            "chunk_source('a.js', 'const f = () => 1;\\n')\n"
            "seen = ['tree_sitter_c', 'tree_sitter_cpp', 'tree_sitter_go', 'tree_sitter_javascript']\n"
            "assert grammars() == seen, grammars()\n"
            "import runpy\nsys.argv = ['query.py', '--help']\n"
            "try:\n    runpy.run_path('query.py', run_name='__main__')\nexcept SystemExit:\n    pass\n"
            "assert grammars() == seen\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                          check=False)
    assert proc.returncode == 0, proc.stderr
    help_text = proc.stdout
    for lang in LANGUAGES:                  # --lang's choices come from the language table
        assert lang.name in help_text


def test_no_pattern_is_fitted_to_a_tree_held_out():
    """The C and C++ patterns are measured on trees they were not fitted to: no comment
    of preprocess.py names one of them (bench/README.md gives exactness on both kinds)."""
    from conftest import ROOT
    from codebase_rag.chunkers import preprocess
    text = (ROOT / "codebase_rag" / "chunkers" / "preprocess.py").read_text()
    patterns = text[text.index("HELD_OUT = {"):]
    patterns = patterns[patterns.index("\n"):].lower()
    held = [tree for trees in preprocess.HELD_OUT.values() for tree in trees]
    assert len(held) >= 5 and [t for t in held if t.lower() in patterns] == []
    assert "rapidjson" in patterns                      # a tree the patterns were fitted to

