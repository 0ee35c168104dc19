// The one place the search takes its fidelity measure from: the label-free fidelity of fidelity/
// (each output measured as its kind is used; the model's score is its worst output's), and its
// lower confidence bound when a floor must hold on unseen samples.
export { fidelity, lowerBound } from '../fidelity/index.js';
export type { FidelityReport, FidelityOptions, BoundedFidelity } from '../fidelity/index.js';
