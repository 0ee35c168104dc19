// A CommonJS consumer: `require` resolves the same generated types (and dist/index.cjs at run time).
import sk = require('sparsekit-wasm');

const p = sk.Param.fromArray([1, -2, 3, -4, 5, -6, 7, -8], [2, 4]);
const code: sk.ErrorCode = 'shape_mismatch';
const mask: Uint8Array = sk.createAspMask(p, [2, 4], 'm4n2_1d');
console.log(JSON.stringify({ variant: sk.variant(), size: p.size, code, kept: mask.reduce((a, x) => a + x, 0) }));
p.free();
