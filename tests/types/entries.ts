// The Node ESM entry declares the same API as the package's type entry (which is the browser's):
// each module type must be assignable to the other.
import * as index from 'sparsekit-wasm';
import * as node from './node_modules/sparsekit-wasm/src/node.js';

export const nodeAsIndex: typeof index = node;
export const indexAsNode: typeof node = index;
