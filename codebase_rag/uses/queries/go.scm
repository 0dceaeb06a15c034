; Go's uses, read by uses/syntax.py (see python.scm and docs/references.md); the package
; clause and the imports are read by uses/go.py from the tree's top.

; calls: f(), pkg.F(), x.M(), T(x) (a conversion: a call of a type); composite literals
; T{...} and &pkg.T{...} are constructions
(call_expression function: (identifier) @call.name)
(call_expression function: (selector_expression operand: (_) @call.receiver
                                                field: (field_identifier) @call.name))
(call_expression function: (parenthesized_expression (identifier) @call.name))
; a generic function instantiated: f[T](x), pkg.F[T](x)
(call_expression function: (index_expression operand: (identifier) @call.name))
(call_expression function: (index_expression operand: (selector_expression
    operand: (_) @call.receiver field: (field_identifier) @call.name)))
(type_conversion_expression type: (generic_type type: (qualified_type
    package: (_) @call.receiver name: (type_identifier) @call.name)))
(composite_literal type: (type_identifier) @new.name)
(composite_literal type: (generic_type type: (type_identifier) @new.name))
(composite_literal type: (qualified_type package: (_) @new.receiver name: (type_identifier) @new.name))

; member references that are not calls: x.f, pkg.V, a method value s.M
(selector_expression operand: (_) @ref.receiver field: (field_identifier) @ref.name)

; types named anywhere: T, pkg.T
(type_identifier) @type.name
(qualified_type package: (_) @type.receiver name: (type_identifier) @type.name)

; locals: parameters and receivers (their type), var x T, x := v and var x = v (the
; value's form, for the first name; a second name is of no known type), range, switch;
; `x = v` is no declaration: x keeps its declared type
(parameter_declaration name: (identifier) @local.name type: (_) @local.type)
(variadic_parameter_declaration name: (identifier) @local.name)
(var_spec name: (identifier) @local.name type: (_) @local.type)
(var_spec . name: (identifier) @local.name . "=" value: (expression_list . (_) @local.value))
(var_spec name: (identifier) "," name: (identifier) @local.name !type)
(short_var_declaration left: (expression_list . (identifier) @local.name)
                       right: (expression_list . (_) @local.value))
(short_var_declaration left: (expression_list "," (identifier) @local.name))
(range_clause left: (expression_list (identifier) @local.name))
(type_switch_statement alias: (expression_list (identifier) @local.name))
(receive_statement left: (expression_list (identifier) @local.name))
(const_spec name: (identifier) @local.name)

; fields of a struct (a name and its type); an embedded field is a base: its methods are
; the struct's; an interface's embedded interfaces are its bases
(field_declaration name: (field_identifier) @field.name type: (_) @field.type)
(field_declaration !name type: [(type_identifier) (qualified_type)] @base.name)
(field_declaration !name type: (pointer_type [(type_identifier) (qualified_type)] @base.name))
(field_declaration !name type: (generic_type type: [(type_identifier) (qualified_type)] @base.name))
(interface_type (type_elem . [(type_identifier) (qualified_type)] @base.name .))
; an embedded field is also a field named after its type: s.Ledger.Record()
(field_declaration !name type: (type_identifier) @field.name @field.type)
(field_declaration !name type: (pointer_type (type_identifier) @field.name) @field.type)
(field_declaration !name type: (qualified_type name: (type_identifier) @field.name) @field.type)
(field_declaration !name type: (pointer_type (qualified_type name: (type_identifier) @field.name))
                   @field.type)

; an alias `type A = B` is B: B's methods are A's
(type_alias type: [(type_identifier) (qualified_type)] @base.name)
(type_alias type: (generic_type type: [(type_identifier) (qualified_type)] @base.name))

; named types: a struct, an interface, any other type
(type_spec name: (type_identifier) @class.name) @class
(type_alias name: (type_identifier) @class.name) @class

; scopes whose locals are their own (a handler's `r *http.Request` is not the test's r)
(func_literal) @scope
