"""References of C and C++ (issue 47): the uses read from their trees (a scope as the
receiver, locals' and fields' declared types, namespaces, usings, includes), and how a name
finds its function across files (linkage.py): the own file first, a `static` function seen
in its file alone, two files' definitions ambiguous and listed, a class's members, a
namespace's functions. libclang's binding of the fixture trees is in test_references.py
(test_call_edges_agree_with_the_languages_own_resolver)."""
from codebase_rag.references import ask
from test_references import callees, callers, tree_of, uses_of


def test_cpp_uses_their_receivers_scopes_and_declarations():
    found, decls = uses_of("a.cpp", """\
        #include "b.h"
        namespace app::core {
        class Foo : public Base<int>, private ns::Other {
         public:
          void bar() const { this->baz(); baz(); helper::go(); a::b::c::deep(); Foo::stat(); }
          Widget w_;
          Widget *pw_;
        };
        void Foo::stat() {
          Foo f(1);
          Foo *g = new Foo(2);
          auto h = Foo(3);
          auto k = make();
          int n = 0;
          f.bar(); g->bar(); h.bar(); k.bar(); n.bar(); w_.draw();
          ns::free_fn<int>(1);
          get().bar();
        }
        }
        using namespace app::core;
        using std::string;
        """)
    calls = {u for u in found if u[1] in ("call", "new")}
    assert calls == {
        (5, "call", "this", "baz", "bar"), (5, "call", "", "baz", "bar"),
        (5, "call", "helper", "go", "bar"),
        (5, "call", "a.b.c", "deep", "bar"),        # the whole scope, nested to the right
        (5, "call", "Foo", "stat", "bar"),
        (10, "new", "", "Foo", "stat"),              # Foo f(1): a construction
        (11, "new", "", "Foo", "stat"), (12, "call", "", "Foo", "stat"),
        (13, "call", "", "make", "stat"),
        (15, "call", "=Foo", "bar", "stat"),         # Foo f(1); Foo *g = new Foo(2)
        (15, "call", "Foo()", "bar", "stat"),        # auto h = Foo(3)
        (15, "call", "make()", "bar", "stat"),       # auto k = make(): what make returns
        (15, "call", "?", "bar", "stat"),            # int n: no type of the tree
        (15, "call", "w_", "draw", "stat"),          # a field, read at query time
        (16, "call", "ns", "free_fn", "stat"),
        (17, "call", "", "get", "stat"), (17, "call", "get()", "bar", "stat")}
    assert set(decls) >= {
        ("type", "", "Foo", "app.core", 3, 8), ("field", "Foo", "w_", "=Widget", 6, None),
        ("field", "Foo", "pw_", "=Widget", 7, None), ("base", "Foo", "Base", "", 3, None),
        ("base", "Foo", "ns.Other", "", 3, None), ("include", "", "", "b.h", 1, None),
        ("using", "", "", "app.core", 20, None), ("using", "", "string", "std.string", 21, None)}
    types = {(u[3], u[2]) for u in found if u[1] == "type"}
    assert ("Foo", "") in types and ("Widget", "") in types
    assert not any(u[1] == "type" and u[0] == 3 and u[3] == "Foo" for u in found)  # its own name


def test_c_calls_are_names_alone():
    found, decls = uses_of("a.c", """\
        #include <stdio.h>
        struct point { int x; struct point *next; };
        int run(struct point *p, int (*cb)(int)) {
            p->next->x = helper(1);
            p->fn(2);
            (*cb)(3);
            return cb(4) + sizeof(struct point);
        }
        """)
    assert {u for u in found if u[1] == "call"} == {
        (4, "call", "", "helper", "run"),
        (7, "call", "?", "cb", "run")}      # a function pointer parameter: unknown
    assert ("type", "", "point", "", 2, 2) in decls and \
        ("include", "", "", "stdio.h", 1, None) in decls


C_TREE = {
    "util.h": """\
        int add(int a, int b);
        static inline int clamp(int x) { return x < 0 ? 0 : x; }
        void report(const char *what);
        """,
    "util.c": """\
        #include "util.h"
        static int twice(int x) { return add(x, x); }
        int add(int a, int b) { return clamp(a) + clamp(b); }
        int scale(int x) { return twice(x); }
        """,
    "main.c": """\
        #include "util.h"
        static int twice(int x) { return x + x; }
        int main(void)
        {
            report("x");
            return add(twice(1), scale(2)) + clamp(3);
        }
        """,
    "report_text.c": "#include <stdio.h>\nvoid report(const char *w) { puts(w); }\n",
    "report_json.c": "#include <stdio.h>\nvoid report(const char *w) { printf(\"%s\", w); }\n",
}


def test_c_linkage_own_file_static_and_two_definitions(tmp_path, word_embedder):
    store = tree_of(tmp_path, C_TREE, word_embedder)
    assert callees(store, "main") == {
        ("report", 5, "ambiguous"),       # two programs' report(): listed, never picked
        ("add", 6, "resolved"), ("twice", 6, "resolved"), ("scale", 6, "resolved"),
        ("clamp", 6, "resolved")}          # a header's static inline: seen by its includers
    twice = {(c[0], c[1]) for c in callers(store, "util.c:2")}
    assert twice == {("scale", 4)}         # main.c's twice() is its own static one
    assert callers(store, "report_text.c:2") == {("main", 5, "ambiguous")}


CPP_TREE = {
    "shapes.h": """\
        namespace geo {
        class Shape {
        public:
            virtual double area() const;
            static Shape *make(int kind);
        };
        class Circle : public Shape {
        public:
            double radius() const { return 1.0; }
        };
        double total(const Shape &a);
        }
        """,
    "shapes.cpp": """\
        #include "shapes.h"
        namespace geo {
        double Shape::area() const { return 0.0; }
        Shape *Shape::make(int kind) { return new Circle(); }
        double total(const Shape &a) { return a.area(); }
        }
        """,
    "main.cpp": """\
        #include "shapes.h"
        namespace other { double total(int x) { return x; } }
        using namespace geo;
        int main()
        {
            Circle c;
            Shape *s = Shape::make(1);
            double t = geo::total(c) + total(*s) + c.radius() + s->area();
            return other::total(2) + c.area();
        }
        """,
}


def test_cpp_namespaces_classes_and_receivers(tmp_path, word_embedder):
    store = tree_of(tmp_path, CPP_TREE, word_embedder)
    assert callees(store, "main") == {
        ("Shape.make", 7, "resolved"), ("total", 8, "resolved"), ("Circle.radius", 8, "resolved"),
        ("Shape.area", 8, "resolved"), ("total", 9, "resolved"), ("Shape.area", 9, "resolved")}
    geo = {(c[0], c[1]) for c in callers(store, "geo.total")}
    assert geo == {("main", 8)}            # not other::total's call
    assert {(c[0], c[1]) for c in callers(store, "other.total")} == {("main", 9)}
    assert {(c[0], c[1]) for c in callers(store, "Circle")} == {("Shape.make", 4)}


def test_cpp_a_function_defined_outside_its_namespaces_braces(tmp_path, word_embedder):
    store = tree_of(tmp_path, {
        "app.h": "namespace app { int run(int n); class Runner { public: void go(); void stop(); }; }\n",
        "app.cpp": """\
            #include "app.h"
            int app::run(int n) { return n; }
            void app::Runner::go() { stop(); }
            void app::Runner::stop() { }
            """,
        "main.cpp": """\
            #include "app.h"
            int main() { app::Runner r; r.go(); return app::run(1); }
            """}, word_embedder)
    assert callees(store, "main") == {("app.run", 2, "resolved"), ("app.Runner.go", 2, "resolved")}
    assert callees(store, "app.Runner.go") == {("app.Runner.stop", 3, "resolved")}


# C++ as libraries write it (yaml-cpp's, spdlog's and the fmt it bundles): namespaces a macro
# opens, aliases chosen by the preprocessor, googletest's fixtures, smart pointers, a
# namespace's overloads in two headers, an anonymous namespace, `::f()`, constructions
CPP_LIBRARY = {
    "lib/base.h": """\
        #define LIB_BEGIN namespace lib { \\
          inline namespace v1 {
        #define LIB_END } }
        """,
    "lib/buffer.h": """\
        #include "base.h"
        LIB_BEGIN
        class buffer {
         public:
          void push_back(char c) {}
        };
        template <typename T> class memory_buffer : public buffer {};
        class null_atomic {
         public:
          int load() const { return 0; }
        };
        LIB_END
        """,
    "lib/match_a.h": "namespace lib { inline int Ne(int x) { return x; } }\n",
    "lib/match_b.h": "namespace lib { inline int Ne() { return 0; } }\n",
    "app/common.h": """\
        #include "lib/buffer.h"
        namespace app {
        #ifdef APP_USE_STD
        using buf_t = std::string;
        #else
        using buf_t = lib::memory_buffer<char>;
        #endif
        #if defined(APP_NO_ATOMIC)
        using level_t = lib::null_atomic;
        #else
        using level_t = std::atomic<int>;
        #endif
        class Logger {
         public:
          Logger(const char *name) {}
          void info(const char *m) {}
          void reset() {}
          static Logger &instance() { static Logger l("x"); return l; }
        };
        class Sink : public Logger {
         public:
          Sink() : Logger("sink") {}
        };
        int getenv(const char *k);
        }
        """,
    "app/log.cpp": """\
        #include "common.h"
        namespace app {
        namespace { int helper() { return 1; } }
        void log(buf_t &out, level_t &level) {
          out.push_back('x');
          level.load();
          std::shared_ptr<Logger> l = std::make_shared<Logger>("a");
          l->info("m");
          l.reset();
          auto u = std::make_unique<Logger>("b");
          u->info("n");
          Logger named("c");
          Logger::instance().info("d");
          ::getenv("HOME");
          helper();
          lib::Ne(1) + lib::Ne();
        }
        }
        """,
    "app/other.cpp": """\
        #include "common.h"
        namespace app { namespace { int helper() { return 2; } } }
        """,
    "app/third.cpp": "#include \"common.h\"\nnamespace app { int run() { return helper(); } }\n",
    "test/handler_test.h": """\
        class HandlerTest {
         protected:
          void Parse(const char *s) {}
        };
        typedef HandlerTest GenEmitterTest;
        """,
    "test/gen_test.cpp": """\
        #include "handler_test.h"
        TEST_F(GenEmitterTest, emits) {
          Parse("a");
          this->Parse("b");
        }
        """,
}


def test_cpp_as_libraries_write_it(tmp_path, word_embedder):
    store = tree_of(tmp_path, CPP_LIBRARY, word_embedder)
    assert callees(store, "app.log") == {
        ("buffer.push_back", 5, "resolved"),   # buf_t: lib::memory_buffer<char> (no APP_USE_STD),
                                               # lib: the namespace LIB_BEGIN opened; its base
        ("Logger.info", 8, "resolved"),        # shared_ptr<Logger> l; l->info()
        ("Logger.info", 11, "resolved"),       # auto u = make_unique<Logger>(...)
        ("Logger.Logger", 12, "resolved"),     # Logger named("c"): a construction
        ("Logger.instance", 13, "resolved"), ("Logger.info", 13, "resolved"),
        ("helper", 15, "resolved"),            # its own file's anonymous namespace
        ("Ne", 16, "resolved")}                # two headers' overloads of lib::Ne: one set
    assert {e.member.file for e in ask(store, "callees", "app.log").entries
            if e.member.member == "Ne"} == {"lib/match_a.h", "lib/match_b.h"}
    # level_t is std::atomic<int> unless APP_NO_ATOMIC: load() is no null_atomic's; l.reset()
    # is the shared_ptr's own; ::getenv is the global one, not app::getenv
    assert not {c for c in callees(store, "app.log") if c[1] in (6, 9, 14)}
    assert {(c[0], c[1]) for c in callers(store, "Logger")} >= {("Sink.Sink", 22)}
    assert callees(store, "app.run") == set()   # two files' anonymous helpers: neither seen
    assert callees(store, "TEST_F") == {("HandlerTest.Parse", 3, "resolved"),
                                        ("HandlerTest.Parse", 4, "resolved")}


def test_cpp_fixtures_made_by_macros_and_classes_of_one_file(tmp_path, word_embedder):
    store = tree_of(tmp_path, {
        "matchers_test.cc": """\
            INSTANTIATE_MATCHER_TEST_P(AllOfTest)
            TEST_P(AllOfTestP, Explains) {
              GreaterThan(10);
            }
            """,
        "unit_test.cc": "bool GreaterThan(int a) { return a > 0; }\n",
        "a_test.cc": """\
            class MockFoo { public: MockFoo() {} };
            void a() { MockFoo *f = new MockFoo; }
            """,
        "b_test.cc": """\
            class MockFoo { public: int x; };
            void b() { MockFoo *f = new MockFoo; }
            class Mark {
             public:
              Mark(int line) {}
              static Mark null_mark() { return Mark(-1); }
            };
            """}, word_embedder)
    # AllOfTestP's members are unknown here (a macro made it): another source file's
    # GreaterThan is not taken for its own
    assert callees(store, "TEST_P") == set()
    assert {(c[0], c[1]) for c in callers(store, "a_test.cc:1")} == {("a", 2)}
    assert {(c[0], c[1]) for c in callers(store, "b_test.cc:1")} == {("b", 2)}
    assert callees(store, "Mark.null_mark") == {("Mark.Mark", 6, "resolved")}   # Mark(-1)
