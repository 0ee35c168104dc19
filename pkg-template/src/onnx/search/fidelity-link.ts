// The one place the search takes its fidelity measure from: the label-free fidelity of fidelity/
// (each output measured as its kind is used; the model's score is its worst output's).
export { fidelity } from '../fidelity/index.js';
export type { FidelityReport, FidelityOptions } from '../fidelity/index.js';
