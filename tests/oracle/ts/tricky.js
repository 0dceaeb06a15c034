'use strict';
/** CommonJS with every way of exporting a function. */
const path = require("path");

const BRACE = /\{[^}]*\}/;
const tpl = `${"{"}${`}`}`;

function plain(a, b = "}") {
    function inner() { return "{"; }
    return inner() + a + b;
}

/** prototype methods */
function Legacy(name) {
    this.name = name;
}
Legacy.prototype.greet = function () {
    return `hi ${this.name} {`;
};
Legacy.prototype["quoted"] = function () {};
Legacy.create = (name) => new Legacy(name);

module.exports = {
    plain,
    run(args) { return args; },
    get version() { return "1"; },
    helper: function () { return BRACE.test("{x}"); },
    nested: { deep: () => 1 },
};
module.exports.extra = async function extra() {};
exports.short = x => x;

class Base {
    static create() { return new this(); }
    value = 1;
    handler = () => this.value;
    #hidden() {}
}

(function () {
    var local = function () {};
})();

!function bang() {}();

process.on("exit", function onExit() {
    console.log("{");
});

Promise.resolve()
    .then(() => 1)
    .catch(function (err) { console.error(err); });

var a = function () {}, b = 2, c = () => {};

if (typeof window !== "undefined") {
    window.addEventListener("load", () => {});
    function inIf() {}
}
