"""Preprocess: what tree-sitter-c and tree-sitter-cpp misread in C and C++, and why: the
macros (and a few templates) whose text the driver (treesitter.py) reads as blanks, or as the
keyword they stand for, before it parses a file, lines and columns kept. A table of
tables.py names these patterns; each says what the grammar made of the text without it.

They were fitted to the trees whose code their comments quote. A new pattern must also gain
on trees held out from the fitting, which no pattern here may name (HELD_OUT; the layout
test holds it), not only on its own tree: the oracle's table in bench/README.md gives both.
"""

# trees no pattern may be fitted to: C's and C++'s exactness against clang is measured on
# them as well as on the trees the patterns name (bench/README.md, chunker oracles). A tree
# whose misses were read to write a pattern leaves, and a tree nobody has read takes its
# place: cJSON (the lone name after capitals, _LONE_NAME), then zlib and imgui (their
# misses showed the calling convention of _CALLING_CONVENTION)
HELD_OUT = {"c": ("lua", "sds", "jq"), "cpp": ("spdlog", "yaml-cpp", "tinyxml2", "snappy")}

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

# C only: a run of capitals before a lone name is no macro but the declaration's own type, a
# typedef named in capitals (`UNITY_INT8 p0[] = {1, 8};`, `UNITY_INTERNAL_PTR
# UnityNumToPtr(const UNITY_INT num) {`): read as blanks, the declaration had no type, and
# the function it opens, or the function around it, was lost. A macro that opens a
# declaration has the type and then the name after it; C has no constructor, whose name
# alone follows its macro (C++'s `FMT_CONSTEXPR basic_string_view(const Char* s)`). A name
# is alone before `=`, `;`, `[`, `,`, `)`, `{`, a bit-field's `:`, or its parameters' `(`:
# not a pointer's `(*` (`REDISMODULE_API int (*RedisModule_Init)(...)`), nor a name in
# parentheses, which no function-like macro expands (`LIB_API void (open_lib) (State *s`):
# the word before either is the type
_LONE_NAME = rb"(?![A-Za-z_]\w*[ \t]*(?:[=;\[,){]|:(?!:)|" \
    rb"\((?![ \t]*\*|[ \t]*[A-Za-z_]\w*[ \t]*\)[ \t]*\()))"
# C and C++: a calling convention before a function pointer's name, in its parentheses
# (libuv's Windows headers: `typedef int (WINAPI *uv__peersockfunc)(SOCKET, ...)`,
# `typedef void (PASCAL *LPFN_GETACCEPTEXSOCKADDRS)` / `(PVOID lpOutputBuffer, ...`,
# `typedef int (WSAAPI* LPFN_WSARECV)`; a macro that holds the `*` too has none after it):
# tree-sitter reads two words in a declarator as an error, and the typedef is lost. No
# expression has a word, a blank or `*`, a name and `)(`: read as blanks, the rest parses
_CALLING_CONVENTION = rb"\([ \t]*([A-Z][A-Z0-9_]*)(?:[ \t]+\*?|\*)[ \t]*[A-Za-z_]\w*[ \t]*\)" \
    rb"[ \t]*(?:\r?\n[ \t]*)?\("
C_BLANK = b"|".join((_MACRO_LINE, _MACRO_BEFORE + _LONE_NAME, _MACRO_AFTER, _MACRO_BETWEEN,
                     _COMMENT_IN_MACRO, _CALLING_CONVENTION))
CPP_BLANK = b"|".join((_CLASS_MACROS, _BLOCK_MACRO, _MACROS, _COMMENT_IN_MACRO,
                       _CALLING_CONVENTION,
                       _TEMPLATE_COMPARISON, _MACRO_STATEMENT, _MACRO_RETURNS,
                       _TRY_CATCH_MACRO, _UNNAMED_DEFAULT, _IF_QUALIFIER))
CPP_KEYWORD_MACROS = ((b"if", _IF_MACRO), (b"public", _ACCESS_MACRO))
