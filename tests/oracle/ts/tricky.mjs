/** ES module JavaScript. */
export const sum = (...xs) => xs.reduce((a, b) => a + b, 0);
export default async function main() {
    await import("./x.mjs");
}
export class Queue {
    #items = [];
    push(x) { this.#items.push(x); }
}
const config = { load() {}, parse: (s) => JSON.parse(s) };
export { config };
