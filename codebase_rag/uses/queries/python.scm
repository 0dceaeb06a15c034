; Python's uses, read by uses/syntax.py (the capture names are its vocabulary; see
; docs/references.md). A receiver is any expression: the driver reads its simple form.

; calls: f(), a.b.f(), super().f(), Foo()
(call function: (identifier) @call.name)
(call function: (attribute object: (_) @call.receiver attribute: (identifier) @call.name))

; member references that are not calls (the driver drops those a call already took)
(attribute object: (_) @ref.receiver attribute: (identifier) @ref.name)

; type annotations, exception types, isinstance's classes
(type) @type.tree
(except_clause (identifier) @type.name)
(except_clause (attribute object: (_) @type.receiver attribute: (identifier) @type.name))

; locals: parameters and names assigned in a function (a type where it is written, or the
; value it was given, from which a construction's type is read)
(typed_parameter (identifier) @local.name type: (type) @local.type)
(typed_default_parameter name: (identifier) @local.name type: (type) @local.type)
(parameters (identifier) @local.param)
(default_parameter name: (identifier) @local.param)
(lambda_parameters (identifier) @local.name)
(assignment left: (identifier) @local.name type: (type) @local.type)
(assignment left: (identifier) @local.name right: (_) @local.value)
(augmented_assignment left: (identifier) @local.name)
(for_statement left: (identifier) @local.name)
(for_in_clause left: (identifier) @local.name)
(pattern_list (identifier) @local.name)
(tuple_pattern (identifier) @local.name)
(as_pattern_target (identifier) @local.name)
(except_clause (as_pattern alias: (as_pattern_target (identifier) @local.name)))
(named_expression name: (identifier) @local.name value: (_) @local.value)
(block (function_definition name: (identifier) @local.name))
(global_statement (identifier) @local.global)
(nonlocal_statement (identifier) @local.global)

; attributes: self.x = ... in a method, x: T = ... in a class body
(assignment left: (attribute object: (identifier) @field.self attribute: (identifier) @field.name)
            type: (type) @field.type)
(assignment left: (attribute object: (identifier) @field.self attribute: (identifier) @field.name)
            right: (_) @field.value)

; classes, their bases
(class_definition name: (identifier) @class.name) @class
(class_definition superclasses: (argument_list (identifier) @base.name))
(class_definition superclasses: (argument_list (attribute) @base.name))

; imports: import a.b, import a.b as c, from m import x as y, from m import *
(import_statement name: (dotted_name) @import.module)
(import_statement name: (aliased_import name: (dotted_name) @import.module
                                        alias: (identifier) @import.alias))
(import_from_statement module_name: (_) @import.from name: (dotted_name) @import.name)
(import_from_statement module_name: (_) @import.from
                       name: (aliased_import name: (dotted_name) @import.name
                                             alias: (identifier) @import.alias))
(import_from_statement module_name: (_) @import.from (wildcard_import) @import.star)
