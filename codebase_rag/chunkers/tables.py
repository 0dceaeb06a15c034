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
  uncut       node types of text that is no code (strings, comments): a `cut` line inside
              one is no cut (a `}` that opens a line of a string a backslash continues)
  blank       a pattern whose groups are read as spaces (lines and columns kept): what
              the grammar misreads (C and C++: preprocess.py, each pattern with what it
              was misread as)
  keyword_macros  (keyword, pattern) pairs: each pattern's groups are read as the keyword
              (then blanks): macros that stand for a keyword (C++: preprocess.py)
"""
from dataclasses import dataclass, field

from .preprocess import C_BLANK, CPP_BLANK, CPP_KEYWORD_MACROS

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
    uncut: frozenset = frozenset()         # no cut inside these (strings, comments)
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
_C_TEXT = frozenset({"string_content", "comment"})     # (a `}` inside: the node at its byte)
_C_KEYWORDS = """auto break case char const continue default do double else enum extern float
for goto if inline int long register restrict return short signed sizeof static struct switch
typedef union unsigned void volatile while"""

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
    uncut=_C_TEXT,
    blank=C_BLANK)

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
    uncut=_C_TEXT | {"raw_string_content"},
    blank=CPP_BLANK,
    keyword_macros=CPP_KEYWORD_MACROS,
    marks=("class_specifier", "namespace_definition", "template_declaration",
           "access_specifier", "qualified_identifier", "reference_declarator",
           "field_initializer_list", "destructor_name", "operator_name", "template_type",
           "alias_declaration", "using_declaration"))

TABLES = {"go": GO, "java": JAVA, "rust": RUST, "c": C, "cpp": CPP}
