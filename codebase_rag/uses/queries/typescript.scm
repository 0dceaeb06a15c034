; TypeScript's uses, read by uses/syntax.py (see python.scm and docs/references.md):
; javascript.scm's patterns, with the types. Read for .ts, .mts, .cts and .tsx.

; calls: f(), a.b.f(), super.f(), super(); constructions: new F(), new a.F()
(call_expression function: (identifier) @call.name)
(call_expression function: (member_expression object: (_) @call.receiver
                                              property: (property_identifier) @call.name))
(call_expression function: (super) @call.base)
(new_expression constructor: (identifier) @new.name)
(new_expression constructor: (member_expression object: (_) @new.receiver
                                                property: (property_identifier) @new.name))

; member references that are not calls
(member_expression object: (_) @ref.receiver property: (property_identifier) @ref.name)

; types named anywhere: annotations, type arguments, implements, extends of interfaces
(type_annotation) @type.tree
(type_arguments) @type.tree
(implements_clause) @type.tree
(extends_type_clause) @type.tree

; locals: parameters (a type where written), declared names (a type, or their value)
(required_parameter pattern: (identifier) @local.name type: (type_annotation) @local.type)
(optional_parameter pattern: (identifier) @local.name type: (type_annotation) @local.type)
(required_parameter pattern: (identifier) @local.param !type)
(optional_parameter pattern: (identifier) @local.param !type)
(arrow_function parameter: (identifier) @local.param)
(variable_declarator name: (identifier) @local.name type: (type_annotation) @local.type)
(variable_declarator name: (identifier) @local.name !type value: (_) @local.value)
(variable_declarator name: (identifier) @local.name !type !value)
(object_pattern (shorthand_property_identifier_pattern) @local.name)
(array_pattern (identifier) @local.name)
(for_in_statement left: (identifier) @local.name)
(catch_clause parameter: (identifier) @local.name)
(statement_block (function_declaration name: (identifier) @local.name))

; scopes whose locals are their own: each callback's parameters (`order` in one is not another's)
(arrow_function) @scope
(function_expression) @scope

; names bound to each element of a value: for (x of xs), xs.map(x => ...), xs.forEach(function (x) ...)
(for_in_statement left: (identifier) @each.param "of" right: (_) @each.receiver)
(call_expression function: (member_expression object: (_) @each.receiver
                                              property: (property_identifier) @each.method)
    arguments: (arguments . [(arrow_function parameter: (identifier) @each.param)
                             (arrow_function parameters: (formal_parameters
                                 . (required_parameter pattern: (identifier) @each.param !type)))
                             (function_expression parameters: (formal_parameters
                                 . (required_parameter pattern: (identifier) @each.param !type)))]))

; fields: this.x = ... in a class; declared in a class body; constructor parameter properties
(assignment_expression left: (member_expression object: (this) @field.self
                                                property: (property_identifier) @field.name)
                       right: (_) @field.value)
(public_field_definition name: (property_identifier) @field.name
                         type: (type_annotation) @field.type)
(public_field_definition name: (property_identifier) @field.name !type value: (_) @field.value)
(required_parameter (accessibility_modifier) pattern: (identifier) @field.name
                    type: (type_annotation) @field.type)

; classes (and interfaces, whose members a receiver's declared type may name), their bases
(class_declaration name: (type_identifier) @class.name) @class
(abstract_class_declaration name: (type_identifier) @class.name) @class
(class name: (type_identifier) @class.name) @class
(interface_declaration name: (type_identifier) @class.name) @class
(class_heritage (extends_clause value: (identifier) @base.name))
(class_heritage (extends_clause value: (member_expression) @base.name))
(interface_declaration (extends_type_clause type: (type_identifier) @base.name))

; imports and re-exports: import {a as b} from "m", import * as ns, import d, require("m")
(import_statement (import_clause (named_imports (import_specifier name: (_) @import.name
    alias: (identifier) @import.alias))) source: (string (string_fragment) @import.from))
(import_statement (import_clause (named_imports (import_specifier name: (_) @import.name
    !alias))) source: (string (string_fragment) @import.from))
(import_statement (import_clause (namespace_import (identifier) @import.alias))
                  source: (string (string_fragment) @import.from))
(import_statement (import_clause (identifier) @import.default)
                  source: (string (string_fragment) @import.from))
(import_statement (import_require_clause (identifier) @import.alias
                                         source: (string (string_fragment) @import.from)))
(variable_declarator name: (identifier) @import.alias
    value: (call_expression function: (identifier) @import.require
                            arguments: (arguments (string (string_fragment) @import.from))))
(variable_declarator name: (identifier) @import.alias
    value: (member_expression object: (call_expression function: (identifier) @import.require
                                 arguments: (arguments (string (string_fragment) @import.from)))
                              property: (property_identifier) @import.name))
(expression_statement (assignment_expression
    left: (member_expression object: (identifier) @export.module property: (property_identifier))
    right: (identifier) @export.default))
(variable_declarator name: (object_pattern (shorthand_property_identifier_pattern) @import.name)
    value: (call_expression function: (identifier) @import.require
                            arguments: (arguments (string (string_fragment) @import.from))))
(export_statement (export_clause (export_specifier name: (_) @import.name
    alias: (_) @import.alias)) source: (string (string_fragment) @import.from))
(export_statement (export_clause (export_specifier name: (_) @import.name !alias))
                  source: (string (string_fragment) @import.from))
(export_statement (export_clause (export_specifier name: (_) @import.name   ; export { a as b }
    alias: (_) @import.alias)) !source)
(export_statement "*" source: (string (string_fragment) @import.from)) @import.star
(export_statement "default" declaration: (class_declaration name: (_) @export.default))
(export_statement "default" declaration: (abstract_class_declaration name: (_) @export.default))
(export_statement "default" declaration: (function_declaration name: (_) @export.default))
(export_statement "default" value: (identifier) @export.default)

; returns: a member whose every return gives `this` returns its receiver (a fluent method)
(return_statement) @return
(return_statement (this)) @return.this
