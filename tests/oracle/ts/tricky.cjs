/** CommonJS in a .cjs file. */
module.exports = function main(argv) {
    return argv.length;
};
module.exports.helper = () => "{";
exports.other = function () {};
