// One interface over onnxruntime-web (page, worker) and onnxruntime-node (bench, tests): the caller
// passes its `ort` namespace, the pipeline sees only createSession(bytes) -> {run(feeds), release()}.

/**
 * @param ort the onnxruntime-web or onnxruntime-node module
 * @param sessionOptions passed to InferenceSession.create (e.g. executionProviders)
 */
export function makeOrtRunner(ort, sessionOptions = {}) {
  return {
    async createSession(bytes) {
      const session = await ort.InferenceSession.create(bytes, sessionOptions);
      return {
        /** feeds {name: {type, data, dims}} -> {name: {data, dims}} of the requested outputs (all if none). */
        async run(feeds, outputNames) {
          const t = {};
          for (const [k, v] of Object.entries(feeds)) t[k] = new ort.Tensor(v.type, v.data, v.dims);
          const res = outputNames ? await session.run(t, outputNames) : await session.run(t);
          const out = {};
          for (const [k, v] of Object.entries(res)) out[k] = { data: v.data, dims: v.dims.map(Number) };
          return out;
        },
        async release() { try { await session.release?.(); } catch { /* already released */ } },
      };
    },
  };
}
