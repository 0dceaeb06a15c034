; Java's uses, read by uses/syntax.py (see python.scm and docs/references.md); the package,
; imports and `super(...)` are read by uses/jvm.py from the tree's top.

; calls: f(), a.b.f(), this.f(), super.f(), F.<T>f(); constructions: new F(), new a.F<T>()
(method_invocation !object name: (identifier) @call.name)
(method_invocation object: (_) @call.receiver name: (identifier) @call.name)
(object_creation_expression type: (type_identifier) @new.name)
(object_creation_expression type: (generic_type (type_identifier) @new.name))
(object_creation_expression type: (scoped_type_identifier (_) @new.receiver
                                                          (type_identifier) @new.name .))
(object_creation_expression type: (generic_type (scoped_type_identifier (_) @new.receiver
                                                          (type_identifier) @new.name .)))

; member references that are not calls: a.b, Type::m
(field_access object: (_) @ref.receiver field: (identifier) @ref.name)
(method_reference . (_) @ref.receiver . (identifier) @ref.name .)

; types named anywhere (a name inside scoped_type_identifier: its last part)
(type_identifier) @type.name

; locals: parameters, declared names (a type; `var`: their value, Forms.inferred: a
; predicate here costs half the query), for and catch names,
; lambdas' parameters (their type only inference gives)
(formal_parameter type: (_) @local.type name: (identifier) @local.name)
(spread_parameter (_) @local.type (variable_declarator name: (identifier) @local.name))
(local_variable_declaration type: (_) @local.type
    declarator: (variable_declarator name: (identifier) @local.name value: (_)? @local.value))
(enhanced_for_statement type: (_) @local.type name: (identifier) @local.name)
(catch_formal_parameter name: (identifier) @local.name)
(resource type: (_) @local.type name: (identifier) @local.name)
(lambda_expression parameters: (identifier) @local.param)
(inferred_parameters (identifier) @local.param)
(instanceof_expression right: (_) @local.type name: (identifier) @local.name)

; fields: declared in a class body; a record's components
(field_declaration type: (_) @field.type
    declarator: (variable_declarator name: (identifier) @field.name))
(constant_declaration type: (_) @field.type
    declarator: (variable_declarator name: (identifier) @field.name))
(record_declaration parameters: (formal_parameters
    (formal_parameter type: (_) @field.type name: (identifier) @field.name)))

; classes, interfaces, enums, records, annotations; their bases
(class_declaration name: (identifier) @class.name) @class
(interface_declaration name: (identifier) @class.name) @class
(enum_declaration name: (identifier) @class.name) @class
(record_declaration name: (identifier) @class.name) @class
(annotation_type_declaration name: (identifier) @class.name) @class
(superclass [(type_identifier) (scoped_type_identifier)] @base.name)
(superclass (generic_type [(type_identifier) (scoped_type_identifier)] @base.name))
(super_interfaces (type_list [(type_identifier) (scoped_type_identifier)] @base.name))
(super_interfaces (type_list (generic_type [(type_identifier) (scoped_type_identifier)] @base.name)))
(extends_interfaces (type_list [(type_identifier) (scoped_type_identifier)] @base.name))
(extends_interfaces (type_list (generic_type [(type_identifier) (scoped_type_identifier)] @base.name)))
