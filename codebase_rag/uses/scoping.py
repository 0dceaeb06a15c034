"""Scoping: how each language finds what a name denotes, the part of resolution that is
data (references.py is the one resolver that reads it). A language with uses (EXTRACTORS
in uses/__init__.py) has a row here; see docs/references.md for what each field changes.
"""
import re
from dataclasses import dataclass, replace


@dataclass(frozen=True)
class Scoping:
    """How a language finds what a name denotes: the part of resolution that is data."""
    constructor: str          # a constructor's member name: "<type>" (its type's own), or a name
    identity: str             # "namespace": a type is its namespace and chain wherever it is
                              # declared (C#'s partial classes); "file": its file and chain
    modules: str = ""         # how imports name files: "dotted" (pkg.mod, .mod), "paths"
    #                           ("./x"), "crates" (crate::a); "" none (namespaces)
    members_in_scope: bool = False  # an unqualified name finds the enclosing types' members
    file_scope: bool = True   # an unqualified name finds the file's top-level definitions
    extension_methods: bool = False  # `static M(this T x)` is called as `x.M()`
    returns: object = None    # signature -> the type a member returns, dotted, or None
    module_objects: tuple = ()    # containers that are the module itself (`exports.f = ...`)
    member_chains: tuple = ()     # other class chains of a type's members: "{}.prototype"
    static_imports: bool = False  # `using static T;`, `import static a.T.m;`: T's statics
                                  # are unqualified names of the file
    impl_for: bool = False        # Rust: `impl Trait for Type`'s methods (class "Trait for
                                  # Type") are Type's
    package: str = ""             # a file's package, its members' namespace: "decl" (its
                                  # `package` decl: Java), "folder" (its folder: Go)
    linkage: bool = False         # C, C++: functions seen across files (linkage.py)
    headers: tuple = ()           # linkage: the files included, not compiled (a `static
                                  # inline` there is seen by every includer)
    overloads: bool = False       # linkage: the functions of a name in one namespace are one
                                  # overload set, across files (C++; C has none)
    fixtures: tuple = ()          # macros whose body is a method of a class derived from their
                                  # first argument (googletest's `TEST_F(Fixture, Name) {...}`)
    pointers: tuple = ()          # templates whose `->` is their first argument's (C++'s
                                  # `std::shared_ptr<T>`): a value of one is read as a T
    namespace_macros: bool = False    # a macro alone on its line may open a namespace (decls
                                      # "nsmacro", "macro": definitions.py's macro_space; C's
                                      # too: a .h is either, its extension says C)
    makers: tuple = ()            # function templates that make a pointer of their first
                                  # argument (`std::make_shared<T>(...)`)
    array_keeps: tuple = ()       # an array's methods that return an array of the same
                                  # elements (`xs.filter(f)`: its elements are xs's)


WRAPPERS = ("Optional", "Awaitable", "Task", "ValueTask", "Promise", "Iterator",
            "Generator", "IEnumerable", "Type", "type")     # what a type is read through


def named_type(text):
    """The first type named in a type expression as written (`Optional[Foo]`, `Foo | None`,
    `Task<Foo>`, `"Foo"`: Foo), dotted; None for none."""
    names = re.findall(r"[A-Za-z_][\w.]*", text[:200])
    names = [n for n in names if n not in ("None", "null", "undefined")]
    while len(names) > 1 and names[0].rpartition(".")[2] in WRAPPERS:
        names = names[1:]
    return names[0] if names else None


def python_returns(signature):
    """`def f(x) -> Foo:`: Foo."""
    _, arrow, tail = signature.rpartition("->")
    return named_type(tail) if arrow else None


def csharp_returns(signature):
    """`public static Foo<T> Bar(int x)`: Foo (the type before the member's name)."""
    head = signature.partition("(")[0].split()
    while head and head[0] in CSHARP_MODIFIERS:
        head = head[1:]
    return named_type(" ".join(head[:-1])) if len(head) >= 2 else None


def typescript_returns(signature):
    """`f(x: A): Foo`, `get x(): Foo`: Foo."""
    close = signature.rfind(")")
    tail = signature[close + 1:].lstrip() if close >= 0 else ""
    return named_type(tail[1:]) if tail.startswith(":") else None


def java_returns(signature):
    """`public static <T> Foo<T> bar(int x)`, `@Nullable Foo bar()`: Foo; an array, a type
    parameter's bound or a primitive is no type of the index (None or a name it lacks)."""
    head = signature.partition("(")[0]
    depth, out = 0, []                # drop annotations' arguments and generics' brackets
    for ch in head[:400]:
        if ch in "<(":
            depth += 1
        elif ch in ">)":
            depth = max(depth - 1, 0)
        elif depth == 0:
            out.append(ch)
    words = [w for w in "".join(out).split() if not w.startswith("@") and
             w not in JAVA_MODIFIERS]
    if len(words) < 2 or "[" in words[-2]:
        return None
    return words[-2] if words[-2][:1].isalpha() or words[-2][:1] == "_" else None


def rust_returns(signature):
    """`fn f(x: A) -> Foo<T>`: Foo, `-> Self`: Self (the impl's type); Option and Result
    are types of their own (their methods are not Foo's)."""
    _, arrow, tail = signature.rpartition("->")
    name = re.match(r"(?:&\s*)?(?:mut\s+)?([A-Za-z_][\w:]*)", tail.lstrip()) if arrow \
        else None
    return name.group(1).replace("::", ".") if name else None


def go_returns(signature):
    """`func (s *S) F(x int) (*Foo, error)`, `func F[T any]() pkg.Foo`: Foo, pkg.Foo (the
    first result); None for none."""
    at, depth, parens = 0, 0, 0           # the end of the parameters' group, at depth 0
    text = signature[:400]
    want = 2 if text.startswith("func (") else 1      # a method's receiver, then its own
    for i, ch in enumerate(text):
        if ch in "([":
            depth += 1
            parens += ch == "(" and depth == 1
        elif ch in ")]":
            depth = max(depth - 1, 0)
            if depth == 0 and ch == ")" and parens == want:
                at = i + 1
                break
    tail = text[at:].strip() if at else ""
    tail = tail[1:].strip() if tail.startswith("(") else tail
    tail = tail[1:] if tail.startswith("*") else tail
    name = re.match(r"[A-Za-z_][\w.]*", tail)
    return name.group(0) if name and name.group(0) not in ("func", "chan", "map") else None


JAVA_MODIFIERS = frozenset("""public private protected static final abstract synchronized
native strictfp default transient volatile sealed non-sealed void""".split())


def cfamily_returns(signature):
    """`static const Foo *make(int x)`, `ns::Foo& Bar::get() const`: Foo (the type before
    the member's name, its scope kept: ns.Foo)."""
    head = signature.partition("(")[0]
    if head.startswith("template"):           # `template <typename T, int N> Foo<T> f(`
        depth, at = 0, len(head)
        for i, ch in enumerate(head[:400]):
            depth += (ch == "<") - (ch == ">")
            if ch == ">" and depth == 0:
                at = i + 1
                break
        head = head[at:]
    head = head.replace("::", ".").replace("*", " ").replace("&", " ")
    words = [w for w in head.split() if w not in CFAMILY_MODIFIERS]
    if len(words) < 2:
        return None
    names = re.findall(r"[A-Za-z_][\w.]*", " ".join(words[:-1])[:200])
    pointers = SCOPING["cpp"].pointers          # `std::shared_ptr<Foo> make()`: Foo
    while len(names) > 1 and names[0].rpartition(".")[2] in pointers:
        names = names[1:]
    return named_type(" ".join(names)) if names else None


def extended_type(signature):
    """The type a C# extension method extends: `Clamp(this int value, ...)` -> int."""
    m = re.search(r"\(this\s+(?:ref\s+|in\s+)?([\w.]+)", signature)
    return m.group(1).rpartition(".")[2] if m else ""


CSHARP_MODIFIERS = frozenset("""public private protected internal static sealed abstract virtual
override readonly extern unsafe volatile new partial async const void""".split())
CFAMILY_MODIFIERS = frozenset("""static inline extern const constexpr consteval virtual
explicit friend volatile unsigned signed struct class union enum typename void
__inline __forceinline""".split())
SCOPING = {
    "csharp": Scoping(constructor="<type>", identity="namespace", members_in_scope=True,
                      file_scope=False, extension_methods=True, returns=csharp_returns),
    "java": Scoping(constructor="<type>", identity="file", members_in_scope=True,
                    file_scope=False, static_imports=True, returns=java_returns,
                    package="decl"),
    "go": Scoping(constructor="", identity="namespace", file_scope=False, returns=go_returns,
                  package="folder"),
    "rust": Scoping(constructor="", identity="file", modules="crates", returns=rust_returns,
                    impl_for=True),
    "python": Scoping(constructor="__init__", identity="file", modules="dotted",
                      returns=python_returns),
    "typescript": Scoping(constructor="constructor", identity="file", modules="paths",
                          returns=typescript_returns,
                          module_objects=("exports", "module.exports"),
                          member_chains=("{}.prototype",),
                          array_keeps=("filter", "slice", "concat", "sort", "reverse",
                                       "toSorted", "toReversed", "splice")),
    "javascript": Scoping(constructor="constructor", identity="file", modules="paths",
                          returns=typescript_returns,
                          module_objects=("exports", "module.exports"),
                          member_chains=("{}.prototype",)),
}
SCOPING["c"] = Scoping(constructor="<type>", identity="namespace", members_in_scope=True,
                       linkage=True, returns=cfamily_returns, namespace_macros=True,
                       headers=(".h", ".hh", ".hpp", ".hxx", ".inl", ".ipp", ".tcc"))
SCOPING["cpp"] = replace(
    SCOPING["c"], overloads=True,
    fixtures=("TEST_F", "TEST_P", "TYPED_TEST", "TYPED_TEST_P"),
    pointers=("shared_ptr", "unique_ptr", "auto_ptr", "scoped_ptr", "intrusive_ptr", "optional",
              "QSharedPointer", "QScopedPointer", "QPointer", "ComPtr"),
    makers=("make_shared", "make_unique", "allocate_shared"))
MODULE_SUFFIXES = {
    "dotted": ((".py", ".pyi"), ("/__init__.py", "/__init__.pyi")),
    "crates": ((".rs",), ("/mod.rs",)),
    "paths": ((".ts", ".tsx", ".js", ".jsx", ".mts", ".mjs", ".cts", ".cjs", ".d.ts"),
           ("/index.ts", "/index.tsx", "/index.js", "/index.jsx", "/index.mjs")),
}


def scoping(language):
    """The Scoping of a language (a language with no row resolves as C# does: by types
    and namespaces, which needs no imports)."""
    return SCOPING.get(language) or SCOPING["csharp"]
