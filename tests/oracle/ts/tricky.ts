/**
 * Constructs that fool a regex or a brace counter, held against the TypeScript compiler.
 */
import { Injectable } from "./di";

const OPEN = "{", CLOSE = '}';
const BRACES = /[{}]+\}/g;          // a regex literal with braces
const TEMPLATE = `a ${OPEN + `${CLOSE}`} { b`;

/** Overloads: only the implementation has a body. */
export function parse(text: string): number;
export function parse(text: string, radix: number): number;
export function parse(text: string, radix = 10): number {
    const inner = () => { return "}"; };   // nested: never a chunk
    return parseInt(text.replace(BRACES, inner()), radix);
}

export const identity = <T>(value: T): T => value;
export const pair = <A, B extends Array<A>>(a: A, b: B): [A, B] => [a, b];
const castArrow = (<T>(x: T) => x) as unknown as (x: number) => number;

/** A decorated class with every kind of member. */
@Injectable({ scope: "{" })
export class Repository<T extends { id: number }> extends Base implements Disposable {
    private items: T[] = [];
    static readonly EMPTY = { brace: "}" };
    onChange = (item: T) => this.items.push(item);
    debounced = debounce((e: Event) => console.log(e), 100);
    declare readonly tag: string;

    /** Builds it. */
    constructor(private readonly name: string) {
        super();
    }

    @Log()
    @Memoize({ key: (a: string) => `${a}}` })
    find(id: number): T | undefined {
        return this.items.find(i => i.id === id);
    }

    get size(): number { return this.items.length; }
    set size(value: number) { this.items.length = value; }

    async *stream(): AsyncGenerator<T> {
        for (const item of this.items) yield item;
    }

    #secret(): string { return `${this.name}{`; }
    static { Repository.count = 0; }
    [Symbol.iterator]() { return this.items[Symbol.iterator](); }
};

export abstract class Shape {
    abstract area(): number;
    describe(): string { return `area ${this.area()}`; }
}

export class Empty {}
export class Dto { id = 0; name?: string; }

export interface Options {
    name: string;
    run(): void;
}
export type Handler<T> = (event: T) => void;
export type Shape2 = { kind: "square"; size: number } | { kind: "circle"; r: number };
export enum Color { Red = "{", Green = "}" }
export const enum Flags { A = 1 << 0, B = 1 << 1 }

export namespace Outer.Inner {
    export function helper(): string { return "}"; }
    export namespace Deep {
        export const fn = function named() { return 1; };
    }
}
namespace TypesOnly { export interface I { x: number } }
namespace Nothing { export const x = 1; }

declare function external(x: number): void;
declare class Ambient { method(): void; }
declare global {
    interface Window { tricky: boolean }
}
declare module "virtual" {
    export function v(): void;
}

export const api = {
    get(url: string) { return fetch(url); },
    post: async (url: string) => fetch(url, { method: "POST" }),
    nested: { deeper: { leaf() { return "{"; } } },
    ["computed" + OPEN]: () => 1,
    "quoted-name"() {},
};

export default class {
    run() {}
}

Repository.prototype.extra = function (this: Repository<any>) { return 1; };
(window as any).hook = () => {};
setTimeout(() => {
    console.log("}");
}, 0);
(function iife() { /* { */ })();
extensions.handle(ExtensionType.BlendMode, (value) =>
{
    BLEND_MODE_FILTERS[value.name] = value.ref;
}, (value) =>
{
    delete BLEND_MODE_FILTERS[value.name];
});
