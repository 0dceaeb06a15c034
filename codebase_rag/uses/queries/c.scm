; C's uses, read by uses/cfamily.py (the capture names are uses/syntax.py's vocabulary; see
; docs/references.md). C calls a function by its name alone: a call through a field
; (`s->fn(x)`) or a pointer (`(*cb)(x)`) is a function pointer, never a function of the
; tree, so only a plain name is a call here.

(call_expression function: (identifier) @call.name)

; types named: a struct, union or enum by its tag (not where it is defined), a typedef'd
; name in a declaration, a parameter, a field, a cast or sizeof, a return type
(struct_specifier name: (type_identifier) @type.name !body)
(union_specifier name: (type_identifier) @type.name !body)
(enum_specifier name: (type_identifier) @type.name !body)
(declaration type: (type_identifier) @type.name)
(parameter_declaration type: (type_identifier) @type.name)
(field_declaration type: (type_identifier) @type.name)
(type_descriptor type: (type_identifier) @type.name)
(function_definition type: (type_identifier) @type.name)

; the types a file defines
(struct_specifier name: (type_identifier) @class.name body: (_)) @class
(union_specifier name: (type_identifier) @class.name body: (_)) @class
(enum_specifier name: (type_identifier) @class.name body: (_)) @class

; #include "x.h": what the file sees (decls kind "include")
(preproc_include path: (string_literal) @include.path)
(preproc_include path: (system_lib_string) @include.path)

; locals and parameters: a call of one is a call of a function pointer, never a function of
; the tree (cfamily.py makes it unknown)
(parameter_declaration declarator: [(identifier) @local.name
  (pointer_declarator declarator: (identifier) @local.name)
  (function_declarator declarator: (parenthesized_declarator
                                    (pointer_declarator declarator: (identifier) @local.name)))])
(declaration declarator: [(identifier) @local.name
  (pointer_declarator declarator: (identifier) @local.name)
  (init_declarator declarator: [(identifier) @local.name
                                (pointer_declarator declarator: (identifier) @local.name)])
  (function_declarator declarator: (parenthesized_declarator
                                    (pointer_declarator declarator: (identifier) @local.name)))
  (init_declarator declarator: (function_declarator declarator: (parenthesized_declarator
                                    (pointer_declarator declarator: (identifier) @local.name))))])
; a macro that opens or closes C++ namespaces, in a header read as C (one of `#define`s alone)
(preproc_def name: (identifier) @macro.name value: (preproc_arg) @macro.value)
