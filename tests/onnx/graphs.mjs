// The model builders live in kit/ (shared with the benches); tests import them from here as before.
export * from '../../kit/graphs.mjs';
