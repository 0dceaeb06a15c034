; JavaScript's uses, read by uses/syntax.py (see python.scm and docs/references.md).
; typescript.scm holds these same patterns, with the types.

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

; locals: parameters, declared names (with the value they were given)
(formal_parameters (identifier) @local.param)
(formal_parameters (assignment_pattern left: (identifier) @local.param))
(arrow_function parameter: (identifier) @local.param)
(variable_declarator name: (identifier) @local.name value: (_) @local.value)
(variable_declarator name: (identifier) @local.name !value)
(object_pattern (shorthand_property_identifier_pattern) @local.name)
(array_pattern (identifier) @local.name)
(for_in_statement left: (identifier) @local.name)
(catch_clause parameter: (identifier) @local.name)
(statement_block (function_declaration name: (identifier) @local.name))

; scopes whose locals are their own: each callback's parameters (`test` in one is not another's)
(arrow_function) @scope
(function_expression) @scope

; fields: this.x = ... in a class; x = ... in a class body
(assignment_expression left: (member_expression object: (this) @field.self
                                                property: (property_identifier) @field.name)
                       right: (_) @field.value)
(field_definition property: (property_identifier) @field.name value: (_) @field.value)

; classes, their bases
(class_declaration name: (identifier) @class.name) @class
(class name: (identifier) @class.name) @class
(class_heritage (identifier) @base.name)
(class_heritage (member_expression) @base.name)

; imports and re-exports: import {a as b} from "m", import * as ns, import d, require("m")
(import_statement (import_clause (named_imports (import_specifier name: (_) @import.name
    alias: (identifier) @import.alias))) source: (string (string_fragment) @import.from))
(import_statement (import_clause (named_imports (import_specifier name: (_) @import.name
    !alias))) source: (string (string_fragment) @import.from))
(import_statement (import_clause (namespace_import (identifier) @import.alias))
                  source: (string (string_fragment) @import.from))
(import_statement (import_clause (identifier) @import.default)
                  source: (string (string_fragment) @import.from))
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
(expression_statement (assignment_expression left: (identifier) right: (assignment_expression
    left: (member_expression object: (identifier) @export.module property: (property_identifier))
    right: (identifier) @export.default)))
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
(export_statement "default" declaration: (function_declaration name: (_) @export.default))
(export_statement "default" value: (identifier) @export.default)

; returns: a member whose every return gives `this` returns its receiver (a fluent method)
(return_statement) @return
(return_statement (this)) @return.this
