; C++'s uses, read by uses/cfamily.py (the capture names are uses/syntax.py's vocabulary;
; see docs/references.md). A scope `a::b::f()` is the receiver `a.b` (cfamily.py reads the
; whole scope: tree-sitter nests it to the right).

; calls: f(), f<T>(), a.f(), p->f(), a.template f<T>(); a scoped call (ns::f(), Type::f(),
; a::b::f<T>()) is read in cfamily.py: its innermost scope's name is the callee
(call_expression function: (identifier) @call.name)
(call_expression function: (template_function name: (identifier) @call.name))
(call_expression function: (field_expression argument: (_) @call.receiver operator: _ @call.op
                                              field: (field_identifier) @call.name))
(call_expression function: (field_expression argument: (_) @call.receiver operator: _ @call.op
                             field: (template_method name: (field_identifier) @call.name)))
(call_expression function: (qualified_identifier) @call.scoped)

; constructions: new T(...), new T<U>(...), new ns::T(...) (a scoped name: cfamily.py)
(new_expression type: (type_identifier) @new.name)
(new_expression type: (template_type name: (type_identifier) @new.name))
(new_expression type: (qualified_identifier) @new.scoped)

; constructions written as a type and its arguments: `T{x}`, `ns::T<U>{x}`, a declaration
; `T x(1);` or `T x{1};`, a base's or a delegated constructor in a member initializer list
; `: Base(x)` (a field's `: f_(x)` is read too: no type of that name, nothing found)
(compound_literal_expression type: (type_identifier) @new.name)
(compound_literal_expression type: (template_type name: (type_identifier) @new.name))
(compound_literal_expression type: (qualified_identifier) @new.scoped)
(declaration type: (type_identifier) @new.name
  declarator: (init_declarator value: [(argument_list) (initializer_list)]))
(declaration type: (template_type name: (type_identifier) @new.name)
  declarator: (init_declarator value: [(argument_list) (initializer_list)]))
(declaration type: (qualified_identifier) @new.scoped
  declarator: (init_declarator value: [(argument_list) (initializer_list)]))
(field_initializer (field_identifier) @new.name)
(field_initializer (template_method name: (field_identifier) @new.name))
(field_initializer (qualified_identifier) @new.scoped)

; member references that are not calls
(field_expression argument: (_) @ref.receiver field: (field_identifier) @ref.name)

; types named where a type is written (not where one is defined): a name, a template's,
; a scoped one (cfamily.py reads its scope)
(declaration type: (type_identifier) @type.name)
(declaration type: (template_type name: (type_identifier) @type.name))
(declaration type: (qualified_identifier) @type.scoped)
(parameter_declaration type: (type_identifier) @type.name)
(parameter_declaration type: (template_type name: (type_identifier) @type.name))
(parameter_declaration type: (qualified_identifier) @type.scoped)
(optional_parameter_declaration type: (type_identifier) @type.name)
(optional_parameter_declaration type: (template_type name: (type_identifier) @type.name))
(optional_parameter_declaration type: (qualified_identifier) @type.scoped)
(field_declaration type: (type_identifier) @type.name)
(field_declaration type: (template_type name: (type_identifier) @type.name))
(field_declaration type: (qualified_identifier) @type.scoped)
(type_descriptor type: (type_identifier) @type.name)
(type_descriptor type: (template_type name: (type_identifier) @type.name))
(type_descriptor type: (qualified_identifier) @type.scoped)
(function_definition type: (type_identifier) @type.name)
(function_definition type: (template_type name: (type_identifier) @type.name))
(function_definition type: (qualified_identifier) @type.scoped)
(struct_specifier name: (type_identifier) @type.name !body)
(class_specifier name: (type_identifier) @type.name !body)

; locals: a declared type where written (a pointer or a reference to it too), else the
; value an `auto` was given; any other local (a loop's, a primitive's) hides the name
(declaration type: [(type_identifier) (qualified_identifier) (template_type)] @local.type
  declarator: [(identifier) @local.name
               (pointer_declarator declarator: (identifier) @local.name)
               (reference_declarator (identifier) @local.name)
               (init_declarator declarator: [(identifier) @local.name
                                             (pointer_declarator declarator: (identifier) @local.name)
                                             (reference_declarator (identifier) @local.name)])])
(declaration type: (placeholder_type_specifier)
  declarator: (init_declarator declarator: [(identifier) @local.name
                                            (pointer_declarator declarator: (identifier) @local.name)
                                            (reference_declarator (identifier) @local.name)]
                               value: (_) @local.value))
(declaration type: [(primitive_type) (sized_type_specifier)]
  declarator: [(identifier) @local.name
               (init_declarator declarator: (identifier) @local.name)])
(parameter_declaration type: [(type_identifier) (qualified_identifier) (template_type)] @local.type
  declarator: [(identifier) @local.name
               (pointer_declarator declarator: (identifier) @local.name)
               (reference_declarator (identifier) @local.name)])
(parameter_declaration type: [(primitive_type) (sized_type_specifier) (placeholder_type_specifier)]
  declarator: [(identifier) @local.name
               (pointer_declarator declarator: (identifier) @local.name)
               (reference_declarator (identifier) @local.name)])
(optional_parameter_declaration declarator: [(identifier) @local.name
               (pointer_declarator declarator: (identifier) @local.name)
               (reference_declarator (identifier) @local.name)])
(for_range_loop declarator: [(identifier) @local.name
               (reference_declarator (identifier) @local.name)
               (pointer_declarator declarator: (identifier) @local.name)])
(structured_binding_declarator (identifier) @local.name)
(lambda_capture_specifier (identifier) @local.name)

; fields declared in a class body (a pointer or a reference to the type too)
(field_declaration type: [(type_identifier) (qualified_identifier) (template_type)] @field.type
  declarator: [(field_identifier) @field.name
               (pointer_declarator declarator: (field_identifier) @field.name)
               (reference_declarator (field_identifier) @field.name)])

; classes, their bases
(class_specifier name: (type_identifier) @class.name body: (_)) @class
(struct_specifier name: (type_identifier) @class.name body: (_)) @class
(union_specifier name: (type_identifier) @class.name body: (_)) @class
(enum_specifier name: (type_identifier) @class.name body: (_)) @class
(class_specifier (base_class_clause [(type_identifier) (qualified_identifier) (template_type)]
                                    @base.name)) @base.class
(struct_specifier (base_class_clause [(type_identifier) (qualified_identifier) (template_type)]
                                     @base.name)) @base.class

; namespaces (their names: `namespace a::b {`), using namespace, using a::B, #include
(namespace_definition name: (_) @namespace.name body: (_)) @namespace
; an anonymous namespace: what it holds is its file's alone, as a `static` function is
(namespace_definition !name body: (_)) @namespace.internal
; aliases, `using X = T;` and `typedef T X;`: a type whose one base is T (its members are T's)
(alias_declaration name: (type_identifier) @alias.name type: (type_descriptor type: (_) @alias.type)) @alias
(type_definition type: (_) @alias.type declarator: (type_identifier) @alias.name) @alias
; an alias in a branch of the preprocessor, with the directive around it: of two alternatives
; (`#ifdef X using T = A; #else using T = B; #endif`), the one compiled when the macros tested
; are not defined is kept (cfamily.py), as a build that sets none compiles it
(preproc_ifdef [(alias_declaration) (type_definition)] @preproc.branch) @preproc
(preproc_ifdef alternative: (preproc_else [(alias_declaration) (type_definition)] @preproc.branch))
  @preproc
(preproc_if [(alias_declaration) (type_definition)] @preproc.branch) @preproc
(preproc_if alternative: (preproc_else [(alias_declaration) (type_definition)] @preproc.branch))
  @preproc
(using_declaration "namespace" (_) @using.namespace)
(using_declaration (qualified_identifier) @using.name)
(preproc_include path: (string_literal) @include.path)
(preproc_include path: (system_lib_string) @include.path)
(base_class_clause (type_identifier) @type.name)
(base_class_clause (template_type name: (type_identifier) @type.name))
(base_class_clause (qualified_identifier) @type.scoped)
; a function pointer parameter or local: a call of it is no function of the tree
(parameter_declaration declarator: (function_declarator declarator: (parenthesized_declarator
                                    (pointer_declarator declarator: (identifier) @local.name))))
(declaration declarator: (init_declarator declarator: (function_declarator
  declarator: (parenthesized_declarator (pointer_declarator declarator: (identifier) @local.name)))))
; a macro that opens or closes namespaces (fmt's `#define FMT_BEGIN_NAMESPACE namespace fmt {`):
; the chunker read the lines that use it as blanks; resolution puts what they hold back in it
(preproc_def name: (identifier) @macro.name value: (preproc_arg) @macro.value)
