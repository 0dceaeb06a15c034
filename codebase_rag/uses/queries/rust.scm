; Rust's uses, read by uses/syntax.py (see python.scm and docs/references.md); `use`
; declarations are read by uses/rust.py from the tree.

; calls: f(), x.m(), Type::f(), module::f(), Self::f(), Type::<T>::f(); struct expressions
; Type { .. } are constructions. Macros are not read (their arguments are token trees).
(call_expression function: (identifier) @call.name)
(call_expression function: (field_expression value: (_) @call.receiver
                                             field: (field_identifier) @call.name))
(call_expression function: (scoped_identifier path: (_) @call.receiver
                                              name: (identifier) @call.name))
(call_expression function: (generic_function function: (field_expression
    value: (_) @call.receiver field: (field_identifier) @call.name)))
(call_expression function: (generic_function function: (scoped_identifier
    path: (_) @call.receiver name: (identifier) @call.name)))
(struct_expression name: (type_identifier) @new.name)
(struct_expression name: (scoped_type_identifier path: (_) @new.receiver
                                                 name: (type_identifier) @new.name))

; member references that are not calls: x.f, Type::CONST
(field_expression value: (_) @ref.receiver field: (field_identifier) @ref.name)

; types named anywhere
(type_identifier) @type.name

; locals: parameters (their type), let with a type or a value; closures' parameters, for
; and match bindings are of no type the syntax gives
(parameter pattern: (identifier) @local.name type: (_) @local.type)
(parameter pattern: (mut_pattern (identifier) @local.name) type: (_) @local.type)
(let_declaration pattern: (identifier) @local.name type: (_) @local.type)
(let_declaration pattern: (mut_pattern (identifier) @local.name) type: (_) @local.type)
(let_declaration pattern: (identifier) @local.name !type value: (_) @local.value)
(let_declaration pattern: (mut_pattern (identifier) @local.name) !type value: (_) @local.value)
(let_declaration pattern: (tuple_pattern (identifier) @local.name))
(let_declaration pattern: (tuple_struct_pattern (identifier) @local.name))
(closure_parameters (identifier) @local.name)
(for_expression pattern: (identifier) @local.name)
(tuple_struct_pattern (identifier) @local.name)
(let_condition pattern: (_ (identifier) @local.name))
(match_pattern (identifier) @local.name)

; fields of a struct
(field_declaration name: (field_identifier) @field.name type: (_) @field.type)

; structs, enums, traits, unions
(struct_item name: (type_identifier) @class.name) @class
(enum_item name: (type_identifier) @class.name) @class
(trait_item name: (type_identifier) @class.name) @class
(union_item name: (type_identifier) @class.name) @class

; scopes whose locals are their own (a handler's `r *http.Request` is not the test's r)
(closure_expression) @scope
