"""How the TypeScript/JavaScript chunker (codebase_rag.chunkers.typescript) cuts code into
chunks, written as snippet -> chunks.

Each test shows a small snippet and the chunks it must yield, as tuples
(kind, cls, member, start_line, end_line). Lines are 1-based and inclusive, and line 1 is the
first line of the snippet (the newline right after the opening quotes is dropped).

The rules (those of the TypeScript compiler oracle, tests/oracle/ts/ts_oracle.js):
  * a chunk per function: declarations; arrows and function expressions bound to a
    const/let/var, to `export default` or to a module-level assignment, also when a call
    wraps them (memo(forwardRef(...)), styled(...)(...)); a callback passed to a call that is
    a whole module-level statement (named after the callee);
  * a chunk per class or object-literal method, constructor, getter and setter with a body,
    and per class field or property whose value is a function;
  * a chunk per interface, type alias and enum, and per class or namespace with no chunk
    inside it; a class or namespace with chunks is their container, not a chunk;
  * nothing inside a function body is a chunk; declarations without a body (overloads,
    abstract methods, `declare`) are not chunks;
  * `cls` is the chain of classes, namespaces, object literals and assignments around it;
  * a chunk starts at its attached JSDoc (the last one above it, no blank line between) or
    its first decorator, and ends on its last token, a closing `;` included;
  * whatever the input, chunking never raises (but for a minified file or nesting beyond
    MAX_NESTING: ChunkerLimit) and every chunk lies inside the file.
"""
import os
import random
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from codebase_rag.chunkers import ChunkerLimit, contract, typescript

ROOT = Path(__file__).resolve().parents[1]
def ts(src):
    """Dedent a snippet; line 1 is the line after the opening quotes."""
    src = textwrap.dedent(src)
    return src[1:] if src.startswith("\n") else src


def problems(text, result):
    """What is wrong with the chunks of text, whatever the text (the one chunk contract)."""
    return contract.problems(text, result, "typescript")


def chunk(src, ext=".ts"):
    """The Chunk objects for a snippet (after checking they are sane)."""
    text = ts(src)
    result = typescript.chunk(text, ext)
    assert problems(text, result) == []
    return result


def chunks(src, ext=".ts"):
    """snippet -> [(kind, cls, member, start_line, end_line)]"""
    return [(c.kind, c.cls, c.member, c.start_line, c.end_line) for c in chunk(src, ext)]


# ----------------------------------------------------------------------------- functions
def test_function_declarations_and_functions_bound_to_names():
    assert chunks("""
        function plain(a: number) {
            return a;
        }
        export async function* stream() {}
        const arrow = (x: number) => x * 2;
        export let expr = function named() {};
        var old = async () => {
            await go();
        };
        const notAFunction = 42;
        """) == [
        ("function", "", "plain", 1, 3),
        ("function", "", "stream", 4, 4),
        ("function", "", "arrow", 5, 5),
        ("function", "", "expr", 6, 6),
        ("function", "", "old", 7, 9),
    ]


def test_nested_and_inline_functions_are_inside_their_parent():
    # Hooks' callbacks, local helpers and classes built in a body are the body's business.
    assert chunks("""
        export function outer() {
            function inner() {}
            const local = () => {};
            class Local { m() {} }
            return [1, 2].map(x => x + 1);
        }
        export const Component = () => {
            const onClick = useCallback(() => {}, []);
            useEffect(() => { subscribe(); }, []);
            return null;
        };
        """) == [
        ("function", "", "outer", 1, 6),
        ("function", "", "Component", 7, 11),
    ]


def test_a_function_value_through_casts_and_parentheses():
    assert chunks("""
        const a = (() => 1) as unknown as () => number;
        const b = (function () {}) satisfies Fn;
        const c = (<T>(x: T) => x)!;
        """) == [
        ("function", "", "a", 1, 1),
        ("function", "", "b", 2, 2),
        ("function", "", "c", 3, 3),
    ]


def test_each_declarator_of_many_is_its_own_span_the_first_starting_at_const():
    assert chunks("""
        const a = () => 1,
            b = 2,
            c = function () {
                return 3;
            };
        """) == [
        ("function", "", "a", 1, 1),
        ("function", "", "c", 3, 5),
    ]


def test_export_default_functions_are_named_default():
    assert [(c.kind, c.member, c.start_line, c.end_line) for c in chunk("""
        export default function () {
            return 1;
        }
        """)] == [("function", "default", 1, 3)]
    assert chunks("export default () => 1;\n") == [("function", "", "default", 1, 1)]
    assert chunks("export default function main() {}\n") == [("function", "", "main", 1, 1)]
    assert chunks("export default async function* gen() {}\n") == [("function", "", "gen", 1, 1)]


# ----------------------------------------------------------------------------- wrapped functions
def test_functions_wrapped_in_calls_are_chunks_named_by_their_binding_with_the_wrapper():
    result = chunk("""
        export const Input = forwardRef<HTMLInputElement, Props>(function Input(props, ref) {
            return <input ref={ref} />;
        });
        export const Card = React.memo(forwardRef((props: P, ref) => <div ref={ref} />));
        export const Box = styled("div")((p: { gap: number }) => ({ gap: p.gap }));
        const onResize = debounce(() => layout(), 100);
        export default memo(function Page() { return null; });
        """, ".tsx")
    assert [(c.kind, c.member, c.start_line, c.end_line, c.wrapper) for c in result] == [
        ("function", "Input", 1, 3, "forwardRef"),
        ("function", "Card", 4, 4, "memo"),
        ("function", "Box", 5, 5, "styled"),
        ("function", "onResize", 6, 6, "debounce"),
        ("function", "default", 7, 7, "memo"),
    ]
    assert result[0].signature == \
        "export const Input = forwardRef<HTMLInputElement, Props>(function Input(props, ref)"


def test_a_call_without_a_function_argument_is_not_a_function():
    # styled.div`...` is a tagged template, not a call: the arrow inside it is CSS's business.
    assert chunks("""
        export const Title = styled.h1`
          color: ${(p) => p.color};
        `;
        export default connect(mapState)(Component);
        const value = compute(1, 2);
        """, ".tsx") == []


# ----------------------------------------------------------------------------- TSX and JSX
def test_tsx_is_parsed_with_the_jsx_grammar():
    # In .tsx `<T,>(x: T) => ...` is a generic arrow and `<div>` an element; a comment opener
    # inside JSX text is text.
    assert chunks("""
        export const Generic = <T,>(props: { items: T[] }) => (
            <ul>{props.items.map((item) => <li>{`${item}}`}</li>)}</ul>
        );
        export const Button = ({ label }: { label: string }) => <b>/** no doc */ {label}</b>;
        export function After() {}
        """, ".tsx") == [
        ("function", "", "Generic", 1, 3),
        ("function", "", "Button", 4, 4),
        ("function", "", "After", 5, 5),
    ]


def test_ts_files_allow_angle_bracket_casts():
    assert chunks("""
        const n = <number>value;
        const f = <T>(x: T): T => x;
        """, ".ts") == [("function", "", "f", 2, 2)]


def test_js_files_hold_jsx_too():
    assert chunks("""
        export const Arrow = () => <p>{"}"}</p>;
        export default function App() { return <div />; }
        """, ".js") == [
        ("function", "", "Arrow", 1, 1),
        ("function", "", "App", 2, 2),
    ]


def test_jsx_constants_are_data_but_function_valued_properties_are_methods():
    assert chunks("""
        export const icons = {
            close: <svg viewBox="0 0 1 1"><path d="M0 0" /></svg>,
            render: () => <svg />,
        };
        """, ".tsx") == [("method", "icons", "render", 3, 3)]


# ----------------------------------------------------------------------------- classes
def test_class_members_with_bodies_and_function_valued_fields():
    assert chunks("""
        export class Repo<T> extends Base<T> {
            private items: T[] = [];
            static readonly EMPTY = 0;
            onChange = (item: T) => this.items.push(item);
            debounced = debounce((e: Event) => log(e), 100);
            constructor(private name: string) {
                super();
            }
            find(id: number): T { return this.items[id]; }
            get size() { return this.items.length; }
            set size(n: number) { this.items.length = n; }
            #secret() {}
            [Symbol.iterator]() {}
            static { Repo.count = 0; }
        }
        """) == [
        ("method", "Repo", "onChange", 4, 4),
        ("method", "Repo", "debounced", 5, 5),
        ("constructor", "Repo", "constructor", 6, 8),
        ("method", "Repo", "find", 9, 9),
        ("getter", "Repo", "size", 10, 10),
        ("setter", "Repo", "size", 11, 11),
        ("method", "Repo", "#secret", 12, 12),
        ("method", "Repo", "[Symbol.iterator]", 13, 13),
    ]


def test_a_class_without_chunks_inside_is_one_chunk_and_a_class_with_them_is_a_container():
    assert chunks("""
        export class Dto {
            id = 0;
            name?: string;
        }
        export class Error2 extends Error {}
        export class Service {
            run() {}
        }
        """) == [
        ("class", "", "Dto", 1, 4),
        ("class", "", "Error2", 5, 5),
        ("method", "Service", "run", 7, 7),
    ]


def test_overloads_abstract_methods_and_declare_forms_have_no_body_and_no_chunk():
    assert chunks("""
        export function parse(s: string): number;
        export function parse(s: string, radix: number): number;
        export function parse(s: string, radix = 10): number {
            return parseInt(s, radix);
        }
        declare function external(x: number): void;
        declare const VERSION: string;
        export abstract class Shape {
            abstract area(): number;
            abstract get name(): string;
            describe() { return "shape"; }
            declare tag: string;
        }
        """) == [
        ("function", "", "parse", 3, 5),
        ("method", "Shape", "describe", 11, 11),
    ]


def test_a_declared_class_is_a_memberless_class():
    assert chunks("""
        declare class Ambient {
            method(): void;
        }
        """) == [("class", "", "Ambient", 1, 3)]


def test_class_expressions_take_the_name_they_are_bound_to():
    assert chunks("""
        export const Mixin = class extends Base {
            run() {}
        };
        export default class {
            go() {}
        }
        register(class { anonymous() {} });
        """) == [
        ("method", "Mixin", "run", 2, 2),
        ("method", "default", "go", 5, 5),
        ("method", "", "anonymous", 7, 7),
    ]


def test_a_field_ends_at_its_semicolon():
    assert chunks("""
        class C {
            handler = () => {
                go();
            };
            other = () => 1
        }
        """) == [
        ("method", "C", "handler", 2, 4),
        ("method", "C", "other", 5, 5),
    ]


# ----------------------------------------------------------------------------- docs and decorators
def test_jsdoc_and_decorators_start_the_chunk():
    [c] = chunk("""
        class C {
            /**
             * Finds one by {@link Id | id}.
             *
             * @param id the id
             * @returns the row
             */
            @Get(":id")
            @UseGuards(
                AuthGuard)
            public async find(id: string) {
                return id;
            }
        }
        """)
    assert (c.member, c.start_line, c.sig_line, c.end_line) == ("find", 2, 11, 13)
    assert c.doc == "Finds one by id."
    assert c.doc_lines == (2, 7)
    assert c.signature == "public async find(id: string)"


def test_decorated_exported_class_starts_at_its_decorator():
    assert chunks("""
        /** An entity. */
        @Entity()
        export class User {
            @Column() name: string;
        }
        """) == [("class", "", "User", 1, 5)]


def test_a_jsdoc_is_attached_only_when_it_is_the_last_one_and_no_blank_line_follows():
    result = chunk("""
        /** Orphan. */

        function a() {}
        /** First. */
        /** Second. */
        // a plain comment between is fine
        function b() {}
        """)
    assert [(c.member, c.start_line, c.doc, c.doc_lines) for c in result] == [
        ("a", 3, "", ()),
        ("b", 5, "Second.", (5, 5)),
    ]


def test_owner_doc_is_the_doc_of_the_innermost_class_or_namespace():
    result = chunk("""
        /** The namespace. */
        namespace N {
            /** The class. */
            export class C {
                m() {}
            }
            export function f() {}
        }
        """)
    assert [(c.cls, c.member, c.owner_doc) for c in result] == [
        ("N.C", "m", "The class."),
        ("N", "f", "The namespace."),
    ]


# ----------------------------------------------------------------------------- types, namespaces
def test_interfaces_type_aliases_and_enums_are_chunks():
    assert chunks("""
        export interface Options {
            name: string;
            run(): void;
        }
        export type Handler<T> = (event: T) => void;
        type Shape = { kind: "square" } | { kind: "circle" };
        export enum Color { Red, Green }
        export const enum Flags { A = 1 }
        declare enum Ambient { X }
        """) == [
        ("interface", "", "Options", 1, 4),
        ("type", "", "Handler", 5, 5),
        ("type", "", "Shape", 6, 6),
        ("enum", "", "Color", 7, 7),
        ("enum", "", "Flags", 8, 8),
        ("enum", "", "Ambient", 9, 9),
    ]


def test_namespaces_give_the_chain_and_a_namespace_without_chunks_is_one():
    assert chunks("""
        export namespace Outer.Inner {
            export function helper() {}
            export namespace Deep {
                export const fn = () => 1;
            }
        }
        namespace Constants { export const X = 1; }
        declare global {
            interface Window { x: boolean }
        }
        declare module "virtual" {
            export function v(): void;
        }
        declare module "shorthand";
        """) == [
        ("function", "Outer.Inner", "helper", 2, 2),
        ("function", "Outer.Inner.Deep", "fn", 4, 4),
        ("namespace", "", "Constants", 7, 7),
        ("interface", "global", "Window", 9, 9),
        ("namespace", "", "virtual", 11, 13),
    ]


def test_a_declaration_file_yields_its_declarations_only():
    assert chunks("""
        export declare function create(options?: Options): App;
        export interface Options { debug?: boolean }
        export declare class App {
            run(): Promise<void>;
        }
        export type Plugin = (app: App) => void;
        """) == [
        ("interface", "", "Options", 2, 2),
        ("class", "", "App", 3, 5),
        ("type", "", "Plugin", 6, 6),
    ]


# ----------------------------------------------------------------------------- objects, CommonJS
def test_object_literal_members_at_module_level_are_methods_of_the_object():
    assert chunks("""
        export const api = {
            get(url: string) { return fetch(url); },
            post: async (url: string) => fetch(url),
            nested: { deeper: { leaf() {} } },
            get version() { return "1"; },
            "quoted-name"() {},
            value: 42,
        };
        export const saveAction = register({ perform() {} });
        """) == [
        ("method", "api", "get", 2, 2),
        ("method", "api", "post", 3, 3),
        ("method", "api.nested.deeper", "leaf", 4, 4),
        ("getter", "api", "version", 5, 5),
        ("method", "api", "quoted-name", 6, 6),
        ("method", "saveAction", "perform", 9, 9),
    ]


def test_commonjs_exports_and_prototype_assignments():
    assert chunks("""
        function Legacy(name) { this.name = name; }
        Legacy.prototype.greet = function () {
            return this.name;
        };
        Legacy.create = (name) => new Legacy(name);
        module.exports = {
            run(args) { return args; },
            helper: function () {},
        };
        module.exports.extra = async function extra() {};
        exports.short = x => x;
        """, ".js") == [
        ("function", "", "Legacy", 1, 1),
        ("function", "Legacy.prototype", "greet", 2, 4),
        ("function", "Legacy", "create", 5, 5),
        ("method", "module.exports", "run", 7, 7),
        ("method", "module.exports", "helper", 8, 8),
        ("function", "module.exports", "extra", 10, 10),
        ("function", "exports", "short", 11, 11),
    ]


# ----------------------------------------------------------------------------- callbacks
def test_functions_passed_to_a_module_level_call_are_callbacks_named_after_the_callee():
    assert chunks("""
        (function () {
            var hidden = function () {};
        })();
        window.addEventListener("load", () => {
            start();
        });
        Promise.resolve()
            .then(() => 1)
            .catch(function (err) { report(err); });
        const list = [() => 1];
        !function bang() {}();
        """, ".js") == [
        ("function", "", "", 1, 3),
        ("function", "", "addEventListener", 4, 6),
        ("function", "", "then", 8, 8),
        ("function", "", "catch", 9, 9),
    ]


def test_module_level_blocks_are_walked_but_function_bodies_are_not():
    assert chunks("""
        if (typeof window !== "undefined") {
            function inIf() {}
            window.onload = () => {};
        }
        """, ".js") == [
        ("function", "", "inIf", 2, 2),
        ("function", "window", "onload", 3, 3),
    ]


# ----------------------------------------------------------------------------- literals
@pytest.mark.parametrize("literal", [
    '"{"', "'}'", "`{`", "`${'}'}`", "`a ${`${'{'}`} b`", "/[{}]+\\}/g", "/\\{/", "'\\'{'",
    "`\n{\n`", "/* { */ 1", "// {\n1",
], ids=["double quote", "single quote", "template", "template hole", "nested template",
        "regex class", "regex escape", "escaped quote", "template over lines", "block comment",
        "line comment"])
def test_braces_inside_literals_and_comments_are_not_code(literal):
    text = "function m() {\n    const s = " + literal + ";\n}\nfunction after() {}\n"
    extra = literal.count("\n")
    assert chunks(text) == [
        ("function", "", "m", 1, 3 + extra),
        ("function", "", "after", 4 + extra, 4 + extra),
    ]


# ----------------------------------------------------------------------------- broken input
def test_a_file_that_does_not_parse_still_yields_its_well_formed_parts():
    result = chunk("""
        class Broken {
            ok() { return 1; }
            bad( {
        }
        function after() {}
        """)
    assert [(c.cls, c.member, c.start_line, c.end_line) for c in result] == [
        ("Broken", "ok", 2, 2),
        ("", "after", 5, 5),
    ]
    assert result.parse_errors > 0
    half_typed = chunk("""
        export const x = ;
        export function fine() {}
        const y = {
            m() {},
            n:
        };
        """)
    assert [(c.cls, c.member, c.start_line) for c in half_typed] == [("", "fine", 2), ("y", "m", 4)]
    assert half_typed.parse_errors > 0
    assert chunk("function ok() {}\n").parse_errors == 0


def test_statements_of_a_body_torn_open_by_an_error_are_not_methods():
    # find()'s deleted `{` lets tree-sitter read `if (x) {` as a method named `if`.
    assert chunks("""
        class C {
            find(x)
                if (x) {
                    return 1;
                }
            }
            after() {}
        }
        """) == [("class", "", "C", 1, 6)]        # no method left inside: the class stands
    # Without errors, a method may well be named like a keyword.
    assert [c.member for c in chunk("class P { catch(e) {} delete() {} }")] == ["catch", "delete"]


def test_input_that_sends_the_parser_quadratic_is_refused_not_hung():
    # tree-sitter's error recovery once took 45 s over 36 KB of this; its work is capped.
    text = "a ? b : \n" * 1000 + "}}\n" * 1000
    with pytest.raises(ChunkerLimit, match="parser gave up"):
        typescript.chunk(text, ".ts")
    assert chunks("function ok() {}\n") == [("function", "", "ok", 1, 1)]   # parser reset


def test_an_unterminated_string_swallows_what_follows_into_its_function():
    assert chunks("""
        function a() { return "abc; }
        function b() {}
        """) == [("function", "", "a", 1, 2)]


@pytest.mark.parametrize("text", [
    "", "   \n", "// only a comment\n", "{", "}", "(", ")", "`${", "/", "/*", "/**", "<div>",
    "class", "class {", "function", "function (", "=>", "export default", "namespace N {",
    "@", "@dec", "declare", "declare module", "module.exports = {", "const f = () =>",
    "\x00\x01\ufffd", "#!/usr/bin/env node\n", "get x() {}", "constructor() {}",
])
def test_fragments_do_not_raise(text):
    for ext in (".ts", ".tsx", ".js"):
        assert problems(text, typescript.chunk(text, ext)) == []


def test_a_minified_file_raises_a_one_line_chunker_limit():
    bundle = "!function(e){var t={};function n(r){if(t[r])return t[r].exports;}" * 200
    with pytest.raises(ChunkerLimit, match=r"^looks minified or generated: line 2 has "):
        typescript.chunk("'use strict';\n" + bundle + "\n", ".js")


def test_a_long_line_of_data_is_not_minified():
    # Real source holds lines of 9-32 KB that are one regex or string (keyword lists, SVG
    # paths, base64): no `;{}` in them, so they are not minified code.
    keywords = "/\\b(?:" + "|".join(f"kw{i}" for i in range(3000)) + ")\\b/"
    path = '"M0 0' + " L10 10" * 2000 + '"'
    text = f"export const KEYWORDS = {keywords};\nexport const PATH = {path};\n" \
           "export function f() {}\n"
    assert len(max(text.split("\n"), key=len)) > typescript.MAX_LINE
    assert chunks(text) == [("function", "", "f", 3, 3)]


def test_an_unknown_extension_is_a_caller_error():
    with pytest.raises(ValueError):
        typescript.chunk("x", ".py")


FRAGMENTS = [
    "function", "class", "interface", "type", "enum", "namespace", "declare", "export",
    "default", "const", "async", "get", "set", "static", "abstract", "constructor", "new",
    "return", "if", "memo(", "forwardRef(", "module.exports", ".prototype.", "x", "T", "<T,>",
    "(", ")", "{", "}", "[", "]", ";", ",", ":", ".", "=", "=>", "@dec", "#p", "<div>",
    "</div>", "`", "${", '"', "'", "/", "/{/", "//", "/*", "*/", "/**", "\n", " ",
]


def test_random_garbage_never_raises_and_chunks_stay_in_the_file():
    rng = random.Random(20240601)
    failures = []
    for _ in range(2000):
        text = "".join(rng.choice(FRAGMENTS) if rng.random() < 0.85 else chr(rng.randint(0, 0x2FF))
                       for _ in range(rng.randint(0, 60)))
        ext = rng.choice(list(typescript.GRAMMAR))
        try:
            bad = problems(text, typescript.chunk(text, ext))
        except Exception as e:       # noqa: BLE001 - any exception is a failure here
            bad = [repr(e)]
        if bad:
            failures.append((len(text), text, bad[0]))
    failures.sort()
    assert failures == [], f"{len(failures)} inputs fail, shortest: {failures[0][1:]}"


SAMPLE = ts('''
    /** A sample. */
    import React, { memo } from "react";

    @Component({ selector: "{" })
    export class Widget<T> extends Base implements OnInit {
        value = `${"}"}`;
        onClick = () => this.run(/[{]/);
        constructor(private s: Service) { super(); }
        get size() { return 1; }
        run(x?: RegExp) {}
    }
    export const View = memo(({ a }: { a: string }) => <div>{a}</div>);
    export namespace N { export interface I { x: number } }
    module.exports = { go() {} };
    ''')


def test_every_prefix_of_a_file_chunks_sanely():
    # What an editor hook sees while a file is being typed: any prefix at all.
    failures = []
    for cut in range(len(SAMPLE) + 1):
        text = SAMPLE[:cut]
        try:
            bad = problems(text, typescript.chunk(text, ".tsx"))
        except Exception as e:       # noqa: BLE001 - any exception is a failure here
            bad = [repr(e)]
        if bad:
            failures.append((cut, text[-40:], bad[0]))
    assert failures == [], f"{len(failures)} prefixes fail, first: {failures[0]}"


# ----------------------------------------------------------------------------- limits
def test_thousands_of_nested_blocks_and_calls_chunk_without_recursion():
    blocks = "if (x) {\n" * 3000 + "function deep() {}\n" + "}\n" * 3000
    assert chunks(blocks) == [("function", "", "deep", 3001, 3001)]
    calls = "go(\n" * 3000 + "() => {}" + ")\n" * 3000
    assert [(c.kind, c.member) for c in chunk(calls)] == [("function", "go")]


def test_nesting_beyond_the_stated_limit_is_an_error_the_indexer_reports():
    text = "export const o = " + "{ a:\n" * (typescript.MAX_NESTING + 2) + "1" + "}\n" * \
        (typescript.MAX_NESTING + 2)
    with pytest.raises(ChunkerLimit, match="nested over"):
        typescript.chunk(text, ".ts")


def test_a_short_fuzz_run_over_mutated_real_typescript_finds_nothing():
    # The long run (100,000+ cases over real repositories) is bench/fuzz_chunker.py --lang ts.
    fuzz = [sys.executable, str(ROOT / "bench" / "fuzz_chunker.py"), "--lang", "ts", "--source",
            str(ROOT / "tests" / "oracle" / "ts"), "--cases", "3000", "--seed", "11"]
    proc = subprocess.run(fuzz, capture_output=True, text=True, timeout=600, check=False,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "3,000 cases" in proc.stdout and " 0 failures" in proc.stdout
