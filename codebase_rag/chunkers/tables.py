"""What the one tree-sitter driver (treesitter.py) knows of each language it reads: node types
of its grammar, and the part each plays. A language read by the driver is a table here and a
row in languages.py (Language.syntax names the table); no code.

The parts (every value is a node type of the grammar, or a map of node type -> chunk kind):
  functions   a chunk when it has a `body`: kind[0] at file or namespace level, kind[1] in a
              container or when its name is qualified (`void Foo::bar()`); never entered, so
              nothing inside a body is ever a chunk
  types       a chunk whole (a struct, an enum, a typedef, a macro); never entered
  bodied      types that are nothing without a `body` (C's `struct s;`, a forward declaration)
  containers  entered through its `body`; its name joins the chain (Chunk.cls). When no
              function lies anywhere inside it, it is one chunk of its own, nested types
              included. Without a body (a forward declaration) it is nothing
  namespaces  entered through its `body`; its name joins Chunk.namespace. A chunk of its own
              only when nothing inside it is one
  through     entered as if its children stood in its place (lists, #if blocks, extern "C")
  wrappers    around one item, which takes its place, span and comments (template<...>,
              Go's `type X ...`); around several, entered as `through`
  holders     a declaration whose `type` field is a type or container with a body
              (`struct s {...} v;`): that item, over the holder's span
  leading     nodes before an item that belong to its chunk: comments, attributes
  names       how a node type's name is read, when not by its `name` field ("<...>": a
              fixed name, for a function that is its own body: Java's initializer blocks);
              "declarator" (C: down the `declarator` fields; `A::B::f` puts A.B in the chain),
              "receiver" (Go: the member's name, and the receiver's type as its container),
              "impl" (Rust: `Type`, or `Trait for Type`)
  kind_by     node type -> (field, {node type of that field -> kind}): a kind read from a
              field (Go: `type T struct` is a struct, `type T interface` an interface)
  names_ok    the pattern a chunk's name matches (else the node is no chunk: broken code)
  keywords    words that are never a declared name (the chunk contract checks it too)
  marks       (C++ only) node types tree-sitter-c lacks: a .h file whose C++ tree holds one
              is C++ (treesitter.py's header rule)
  macro_functions  (statement, block) node types: a statement that is a call missing its
              `;` and the block right after it are a function a macro defines (Catch2's
              `TEST_CASE("adds", "[math]") {...}`), named by the macro
  cut         a line pattern where a top-level region with errors is cut and each piece read
              alone (C, C++: a `}` that opens a line ends a function)
  blank       a pattern whose groups are read as spaces (lines and columns kept): what
              the grammar misreads. C and C++: a comment inside a multi-line #define, a
              macro alone on its line and macros that open a declaration; C++ also
              macros in a class's header, in a function's header, for try and catch,
              and a few templates (each pattern says below what it was misread as)
  keyword_macros  (keyword, pattern) pairs: each pattern's groups are read as the keyword
              (then blanks): macros that stand for a keyword (C++ below)
"""
from dataclasses import dataclass, field

IDENTIFIER = r"[^\W\d]\w*"


@dataclass(frozen=True)
class Syntax:
    grammar: str                           # the wheel's module[:function] (parsers.language)
    functions: dict = field(default_factory=dict)
    types: dict = field(default_factory=dict)
    bodied: frozenset = frozenset()
    containers: dict = field(default_factory=dict)
    namespaces: dict = field(default_factory=dict)
    through: frozenset = frozenset()
    wrappers: frozenset = frozenset()
    holders: frozenset = frozenset()
    leading: frozenset = frozenset()
    names: dict = field(default_factory=dict)
    kind_by: dict = field(default_factory=dict)
    names_ok: str = IDENTIFIER
    keywords: frozenset = frozenset()
    marks: tuple = ()
    macro_functions: tuple = ()
    cut: bytes = b""                       # where a region tree-sitter could not read is cut
                                           # into pieces read alone (treesitter.py's recovery)
    blank: bytes = b""                     # its groups are read as blanks: what the
                                           # grammar misreads (see above)
    keyword_macros: tuple = ()             # (keyword, pattern): its groups read as the keyword


def words(text):
    return frozenset(text.split())


GO = Syntax(
    "tree_sitter_go",
    functions={"function_declaration": ("function", "function"),
               "method_declaration": ("method", "method")},
    types={"type_spec": "type", "type_alias": "type"},
    wrappers=frozenset({"type_declaration"}),
    leading=frozenset({"comment"}),
    names={"method_declaration": "receiver"},
    kind_by={"type_spec": ("type", {"struct_type": "struct", "interface_type": "interface"})},
    keywords=words("""break case chan const continue default defer else fallthrough for func go
    goto if import interface map package range return select struct switch type var"""))

JAVA = Syntax(
    "tree_sitter_java",
    functions={"method_declaration": ("method", "method"),
               "constructor_declaration": ("constructor", "constructor"),
               "compact_constructor_declaration": ("constructor", "constructor"),
               "static_initializer": ("initializer", "initializer"),
               "block": ("initializer", "initializer")},
    containers={"class_declaration": "class", "interface_declaration": "interface",
                "enum_declaration": "enum", "record_declaration": "record",
                "annotation_type_declaration": "annotation", "enum_constant": "enum constant"},
    through=frozenset({"enum_body_declarations"}),
    leading=frozenset({"line_comment", "block_comment"}),
    names={"static_initializer": "<static initializer>", "block": "<initializer>"},
    names_ok=r"[^\W\d][\w$]*|\$[\w$]*|<(static )?initializer>",
    keywords=words("""abstract assert boolean break byte case catch char class const continue
    default do double else enum extends final finally float for goto if implements import
    instanceof int interface long native new package private protected public return short
    static strictfp super switch synchronized this throw throws transient try void volatile
    while true false null"""))

RUST = Syntax(
    "tree_sitter_rust",
    functions={"function_item": ("function", "method")},
    types={"struct_item": "struct", "enum_item": "enum", "union_item": "union",
           "type_item": "type", "macro_definition": "macro"},
    containers={"impl_item": "impl", "trait_item": "trait"},
    namespaces={"mod_item": "mod"},
    leading=frozenset({"line_comment", "block_comment", "attribute_item"}),
    names={"impl_item": "impl"},
    names_ok=IDENTIFIER + r"|r#\w+|\w(?=[\w:<>, &']*\Z)[\w:<>, &']* for \w[\w:<>, &']*",
    keywords=words("""as break const continue crate else enum extern false fn for if impl in let
    loop match mod move mut pub ref return self Self static struct super trait true type unsafe
    use where while async await dyn"""))

_C_THROUGH = frozenset({"preproc_if", "preproc_ifdef", "preproc_else", "preproc_elif",
                        "preproc_elifdef", "linkage_specification", "declaration_list"})
_C_KEYWORDS = """auto break case char const continue default do double else enum extern float
for goto if inline int long register restrict return short signed sizeof static struct switch
typedef union unsigned void volatile while"""
# Every pattern here costs time linear in the text it reads, and compiles on Python 3.10
# (no possessive quantifier): where a part could give back what it took, what follows it
# cannot take that (a run of capitals ends where a `(` or a blank must follow); a part that
# must take a whole run (a possessive one did) says so with a lookahead the next item of
# the run fails (`(?!MACRO[ \t])`); a scan of unknown length is bounded ({0,200}); and
# tests/test_linear.py holds them to it on hostile lines.
# a /* comment */ on a line a `\` continues: tree-sitter-c and -cpp end the #define there, and
# read the rest of the macro and the struct after it as a function (libuv's uv.h). The rest
# of the line is taken whole (a group a backreference must match again: atomic), so a line
# of a thousand comments reads each of them once, not a thousand times
_COMMENT_IN_MACRO = rb"(/\*(?:[^*\n]|\*(?!/)){0,200}\*/)" \
    rb"(?=(?=(?P<line_rest>[^\n]{0,1000}))(?P=line_rest)(?:(?<=\\)|(?<=\\\r))\n)"
# a macro alone on its line, a word or a call (fmt's `FMT_BEGIN_NAMESPACE`, Qt's `Q_OBJECT`,
# rapidjson's `RAPIDJSON_DIAG_OFF(padded)`): read as the type of the declaration after it,
# which then swallows what follows; not one a block follows (macro_functions: a test), nor
# the last line of a #define (blank, the #define swallowed the next line: googletest's TEST)
_MACRO_NAME = rb"(?=_*[A-Z])[A-Z_][A-Z0-9_]+"        # capitals, digits and _, a capital in it
_MACRO_ARGS = rb"\((?:[^()\n]|\((?:[^()\n]|\([^()\n]{0,200}\)){0,200}\)){0,400}\)"  # on its line
_MACRO_LINE = rb"^(?<!\\\n)(?<!\\\r\n)[ \t]*(" + _MACRO_NAME + rb"(?:" + _MACRO_ARGS + rb")?)" \
    rb"[ \t]*(?://[^\n]*)?\r?$(?!\s*\{)"
# macros that open a declaration, CLI11's `CLI11_NODISCARD CLI11_INLINE std::string f()`:
# read as its type, so `std::string` became the function's class (every macro of the run)
_OPENING_MACRO = rb"[A-Z][A-Z0-9]*_[A-Z0-9_]*[ \t]"
_MACRO_BEFORE = rb"^[ \t]*(?:template[ \t]*<[^<>\n]*>[ \t]*)?" \
    rb"((?:" + _OPENING_MACRO + rb"[ \t]*)+)(?!" + _OPENING_MACRO + rb")(?=[A-Za-z_:~])"
# an annotation between a function's header and its body, on a line of its own (gtest's
# `void f()` / `    GTEST_LOCK_EXCLUDED_(mutex_) {`): read as a call, the body as a block;
# on the header's line (rapidjson's `void Clear() RAPIDJSON_NOEXCEPT {`, leveldb's
# `MutexLock(Mutex* mu) EXCLUSIVE_LOCK_FUNCTION(mu) : mu_(mu) {`): read as its name
_MACRO_AFTER = rb"(?:(?:(?<=\)\n)|(?<=const\n))[ \t]+|(?<=\) )|(?<=const ))" \
    rb"([A-Z][A-Z0-9_]*(?:\([^()\n]*\))?)[ \t]*(?=\{|:(?!:)|\r?\n[ \t]*\{)"
# a macro between a function's return type and its name, on the line that opens with them
# (google/benchmark's `int BENCHMARK_NOINLINE Factorial(int n) {`, curl's `static
# CURL_THREAD_RETURN_T CURL_STDCALL run(void *arg)`): read as the name's scope. A macro
# right after `static` is the type itself (curl's `static SIGHANDLER_T set_signal(`): every
# specifier of the run is one. The type's `*` and `&` each come after their blanks
_SPECIFIER = rb"(?:static|inline|extern|virtual|constexpr|friend|explicit)[ \t]"
_MACRO_BETWEEN = rb"^[ \t]*(?:template[ \t]*<[^<>\n]*>[ \t]*)?" \
    rb"(?:" + _SPECIFIER + rb"[ \t]*)*(?!" + _SPECIFIER + rb")" \
    rb"(?!(?:return|else|typedef|new|delete|throw|case|goto|sizeof)\b)" \
    rb"[A-Za-z_][\w:]*(?:<[^<>\n]*>)?(?:[ \t]*[*&])*[ \t]+([A-Z][A-Z0-9]*_[A-Z0-9_]*)[ \t]+" \
    rb"(?=[A-Za-z_~]\w*[ \t]*\()"
_MACROS = b"|".join((_MACRO_LINE, _MACRO_BEFORE, _MACRO_AFTER, _MACRO_BETWEEN))
# a macro called as a statement, `;` after it, alone on its lines: unindented, at namespace
# scope (gmock's `GMOCK_DEFINE_DEFAULT_ACTION_FOR_RETURN_TYPE_(unsigned char, '\0');`,
# abseil's `ABSL_FLAG(int, limit, 256 << 10,` / `"help");`), or indented with a built-in
# type among its arguments (re2's `PARSE_FOR_TYPE(int16_t, 0);`): tree-sitter-cpp reads a
# call with a type argument as a function's header, and its recovery swallowed the next 80
# lines, or the rest of the namespace; read as blanks, the `;` left is an empty statement.
# Other indented calls stay: tree-sitter reads them well (a test's `REQUIRE(x);`), and
# blanking them split Catch2's test cases into their SECTIONs
_BUILTIN_TYPE = rb"\b(?:bool|char|short|int|long|float|double|void|signed|unsigned|size_t|" \
    rb"u?int(?:8|16|32|64)_t|wchar_t|char(?:8|16|32)_t)\b"
_MACRO_STATEMENT = rb"^(" + _MACRO_NAME + rb"\((?:[^(){};]|\([^(){};\n]{0,200}\)){0,400}\))" \
    rb"[ \t]*;[ \t]*(?://[^\n]*)?\r?$|^[ \t]+(" + _MACRO_NAME + rb"\((?=[^()\n]*?" \
    + _BUILTIN_TYPE + rb")[^()\n]*\))[ \t]*;"
# a macro call that is a function's return type, on the line of its name (rapidjson's
# `RAPIDJSON_DISABLEIF_RETURN((NotExpr<...>), (GenericValue&)) operator[](T* name) {`): the
# function is lost; read as blanks, the rest parses as a function without a return type
_MACRO_RETURNS = rb"^[ \t]*(" + _MACRO_NAME + _MACRO_ARGS + \
    rb")[ \t]+(?=operator\b|[A-Za-z_~]\w*[ \t]*\()"
# a macro that stands for `if` (rapidjson's `RAPIDJSON_IF_CONSTEXPR (sizeof(Ch) == 1) {`,
# Catch2's `CHECKED_IF(x) {`): read as a call missing its `;`, the `else` after its block is
# an error that closed the class around it (rapidjson's GenericPointer lost 45 members)
_IF_MACRO = rb"^[ \t]+((?:[A-Z][A-Z0-9]*_)+IF(?:_CONSTEXPR)?)[ \t]*(?=" + _MACRO_ARGS + \
    rb"[ \t]*\{)"
# a macro that stands for an access specifier, alone on its line (nlohmann/json's
# `JSON_PRIVATE_UNLESS_TESTED:`, private unless its tests are built): read as a bit-field
# or a label, it broke the class (iter_impl's methods); any access reads the same here.
# The line is first seen to be a word of capitals and `_` and a colon (a lookahead), so each
# place the access word is tried costs no more than that word
_ACCESS_END = rb"[ \t]*:(?!:)[ \t]*\r?$"
_ACCESS_MACRO = rb"^[ \t]*(?=[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*" + _ACCESS_END + rb")" \
    rb"((?:[A-Z][A-Z0-9]*_)*(?:PRIVATE|PROTECTED|PUBLIC)(?:_[A-Z0-9]+)*)" + _ACCESS_END
# macros that stand for `try` and `catch`, their block on the same line or the next
# (nlohmann/json's `JSON_TRY` / `{...}` / `JSON_CATCH(...) {}`, Catch2's `} CATCH_CATCH_ALL{`):
# the catch was read as a function that a macro defines, inside the function around it;
# read as blanks, each is a plain block (a `{` in a comment after it is none)
_TRY_CATCH_MACRO = rb"(?:^[ \t]+|(?<=\})[ \t]*)((?:[A-Z][A-Z0-9]*_)+" \
    rb"(?:TRY|CATCH(?:_ALL|_ANON)?(?:[ \t]*" + _MACRO_ARGS + rb")?))[ \t]*" \
    rb"(?=(?://[^\n]*$)?(?:\r?\n[ \t]*)?\{)"
# a macro between `if` and its condition (fmt's `if FMT_CONSTEXPR20 (need_copy<T>::value) {`,
# `constexpr` or nothing): the `if` was lost and dynamic_format_arg_store with it
_IF_QUALIFIER = rb"(?:^[ \t]*|\belse[ \t]+|\}[ \t]*)if[ \t]+([A-Z][A-Z0-9_]*)[ \t]*(?=\()"
# an unnamed pointer parameter with a default (Catch2's `void destruct_on_exit(
# std::enable_if_t<Destruct, U>* = nullptr) {`): tree-sitter-cpp has no form for it, and
# ObjectStorage's methods were one chunk; its default read as blanks, the parameter parses
_UNNAMED_DEFAULT = rb"(?<=\*)[ \t]*(=[ \t]*nullptr)(?=[ \t]*\))"
# a comparison in the template arguments of a return type, on a line that opens with that
# type (Catch2's `std::enable_if_t<sizeof(typename G::result_type) >= sizeof(T),` / `T> f()`):
# tree-sitter-cpp reads `> ` or `< ` as the list's end or a new one, so the function is
# lost, a bogus chunk stands in its place and the chains after it lose their namespace;
# read as blanks, the declaration parses (a comparison in a template parameter list parses
# as it is)
_TEMPLATE_COMPARISON = rb"^[ \t]*(?:typename[ \t]+)?(?:[A-Za-z_]\w*::)*[A-Za-z_]\w*<" \
    rb"[^;{}<>\n]{0,200}?\)[ \t]*(>=|<=|<(?![<=]))"

# C++ also: macros between `class` and its name (`class LEVELDB_EXPORT Cache {`, google/
# benchmark's `class BENCHMARK_EXPORT BENCHMARK_INTERNAL_CACHELINE_ALIGNED State {`), read as
# a function named Cache (the name is a whole word: `class X Afinal(` is no class named A);
# and a statement macro that opens a block (Catch2's `CATCH_TRY {`), read as an initializer
# list that closed the function early
_CLASS_MACROS = rb"\b(?:class|struct|union)\s+" \
    rb"((?:[A-Z][A-Z0-9_]+(?:\((?:[^()]|\([^()]{0,200}\)){0,400}\))?\s+)+)" \
    rb"(?=(?:\[\[[^\]\n]{0,200}\]\]\s*)*[A-Za-z_]\w*\b\s*(?:<[^{};<>]*(?:<[^{};<>]*>" \
    rb"[^{};<>]*)*>\s*)?(?:final\b|[:{]))"
_BLOCK_MACRO = rb"^[ \t]+([A-Z][A-Z0-9_]+)(?<!_)[ \t]*(?=\{)"

C = Syntax(
    "tree_sitter_c",
    functions={"function_definition": ("function", "function")},
    types={"struct_specifier": "struct", "union_specifier": "union", "enum_specifier": "enum",
           "type_definition": "typedef"},
    bodied=frozenset({"struct_specifier", "union_specifier", "enum_specifier"}),
    through=_C_THROUGH,
    holders=frozenset({"declaration"}),
    leading=frozenset({"comment"}),
    names={"function_definition": "declarator", "type_definition": "declarator"},
    keywords=words(_C_KEYWORDS),
    cut=rb"^\}[^\n]*\n",
    blank=_MACROS + b"|" + _COMMENT_IN_MACRO)

CPP = Syntax(
    "tree_sitter_cpp",
    functions={"function_definition": ("function", "method")},
    types={"enum_specifier": "enum", "type_definition": "typedef", "alias_declaration": "type"},
    bodied=frozenset({"enum_specifier"}),
    containers={"class_specifier": "class", "struct_specifier": "struct",
                "union_specifier": "union"},
    namespaces={"namespace_definition": "namespace"},
    through=_C_THROUGH,
    wrappers=frozenset({"template_declaration"}),
    holders=frozenset({"declaration", "field_declaration"}),
    leading=frozenset({"comment"}),
    names={"function_definition": "declarator", "type_definition": "declarator"},
    names_ok=IDENTIFIER + r"|~" + IDENTIFIER + r"|operator\W.*|operator \w.*",
    keywords=words(_C_KEYWORDS + """ class namespace template typename this new delete
    public private protected virtual friend using try catch throw""")
    - {"operator"},
    macro_functions=("expression_statement", "compound_statement"),
    cut=rb"^\}[^\n]*\n",
    blank=b"|".join((_CLASS_MACROS, _BLOCK_MACRO, _MACROS, _COMMENT_IN_MACRO,
                     _TEMPLATE_COMPARISON, _MACRO_STATEMENT, _MACRO_RETURNS, _TRY_CATCH_MACRO,
                     _UNNAMED_DEFAULT, _IF_QUALIFIER)),
    keyword_macros=((b"if", _IF_MACRO), (b"public", _ACCESS_MACRO)),
    marks=("class_specifier", "namespace_definition", "template_declaration",
           "access_specifier", "qualified_identifier", "reference_declarator",
           "field_initializer_list", "destructor_name", "operator_name", "template_type",
           "alias_declaration", "using_declaration"))

TABLES = {"go": GO, "java": JAVA, "rust": RUST, "c": C, "cpp": CPP}
