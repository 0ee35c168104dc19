// Compiled by tests/pkg/types.test.mjs in a fresh consumer project that installed the packed
// package (`tsc --strict --target es2022 --module nodenext`, with and without esnext.disposable):
// uses every public member of sparsekit-wasm with its declared types.
import init, {
  initThreadPool, threads, variant, numThreads, probeThreads, environment, ERROR_CODES, Owned,
  DEFAULT_CONFIG, DEFAULT_RULE, NM24_RULE, describeRule, nmGroupLength, nm24ConfigFor, magnitudeAllocation, defaultPlan,
  Param, View, BlockSpec, BlockCoupling, ScopeSpec, ScopeCoupling, MagnitudeSearcher,
  SparseKitError, ShapeMismatchError, CouplingError,
  getNmpruneInfo, computeValid1dPatterns, mn1dBest, m4n2_1d, createAspMask, fill, reshape1d,
  toCsr, toBsr, toNm24, sparseToDense, sparseBytes, searchPermutation, Hessian, wandaScores, sparseGpt, relReconError,
  gptq, roundToNearest, type GptqOptions, type QuantGridOptions, type QuantizedWeights,
  type ConvGeometry, type SparseGptOptions,
  type Values, type ErrorCode, type Shaped, type CsrMatrix, type BsrMatrix, type Nm24Matrix, type ProgressCallback,
  type Variant, type InitOptions, type WasmPaths, type WasmSource, type Environment, type Floats, type Mask, type GridInput,
  type BlockViewOptions, type SoftThresholdOptions, type ScopeValues, type HardThresholdOptions, type ScopeMaskOptions,
  type AspPattern, type PermutationOptions, type LayerConfig, type PlanRule, type PlanWeight, type PlanItem, type Plan,
  type MagnitudeAllocation, fitBlock, Trainer, type TrainGraph, type TrainerOptions, type Batch,
} from 'sparsekit-wasm';

/** The plan of the playground, reproduced: the default rule over two small layers. */
export function plan(): number {
  const weights: PlanWeight[] = [
    { dims: [8, 4, 3, 3], op: 'Conv', data: new Float32Array(288) },
    { dims: [16, 8], reduceAxis: 0, op: 'MatMul', data: Array.from({ length: 128 }, (_, i) => i / 128) },
  ];
  const rule: PlanRule = DEFAULT_RULE;
  const p: Plan = defaultPlan(weights, rule);
  const q: Plan = defaultPlan(weights, NM24_RULE);
  const items: PlanItem[] = [...p.items, ...q.items];
  const cfg: LayerConfig = { ...DEFAULT_CONFIG, criterion: 'soft' };
  const alloc: MagnitudeAllocation = magnitudeAllocation(weights.map((w) => w.data), 0.25, 0.5);
  const { cfg: c24, note }: { cfg: LayerConfig; note: string | null } = nm24ConfigFor([8, 4, 3, 3], undefined, 'Conv');
  const s: string = describeRule() + describeRule(rule) + p.sentence;
  void [items, cfg, c24, note, s, p.threshold];
  return alloc.threshold + alloc.total + alloc.counts[0] + alloc.uncapped[0] + nmGroupLength([16, 8], 0);
}

/** Runtime variants: feature detection and per-variant wasm locations. */
export async function runtime(): Promise<Variant> {
  const env: Environment = environment();
  const where: WasmSource = new URL('https://example.invalid/sk/st.wasm');
  const paths: WasmPaths = { simd: where, threads: '/sk/mt.wasm' };
  const opts: InitOptions = { threads: env.sharedMemory && env.worker && env.simd, wasmPaths: paths };
  await init(opts);
  const codes: readonly ErrorCode[] = ERROR_CODES;
  void [codes, probeThreads(8)];
  return variant();
}

export async function everything(): Promise<number> {
  await init();
  await init({ threads: false });
  const active: boolean = await initThreadPool(2);
  const t: boolean = threads();
  const v: 'simd' | 'threads' | 'uninitialized' = variant();
  const nt: number = numThreads();

  const p = Param.fromArray(new Float32Array(8 * 12), [8, 12]);
  const shape: number[] = p.shape;
  const size: number = p.size;
  const live: Float32Array = p.data;
  const copy: Float32Array = p.toArray();
  p.set(copy);

  const view = new View(p, [12, 8], [1, 12]);
  const full: View = View.fromExisting(p);
  const same: View = View.fromExisting(view);
  const vp: Param = view.param;
  const vs: number[] = view.shape;
  const vst: number[] = view.stride;
  const nd: number = view.ndim + view.cosize + view.numel();
  const vals: Float32Array = view.values();
  const off: Int32Array = view.linearOffset(new Int32Array([0, 0, 1, 1]));
  const rc: { rows: Int32Array; cols: Int32Array } = view.toParamRc([0, 0]);
  view.applyMultiplier(new Float32Array(6), [2, 8]);
  view.applyMask(new Uint8Array(6), [2, 8]);
  const bvo: BlockViewOptions = { reorder: true, merge: false };
  const bv: Shaped<Float32Array> = View.blockViewOf(vals, [12, 8], [4, 4], bvo);
  const be: Shaped<Float32Array> = View.broadcastBlockToElement(new Float32Array(6), [3, 2], [4, 4], false);

  const spec = new BlockSpec(view, [4, -1], 'w');
  const spec2 = new BlockSpec(p, [], undefined);
  const n: number = spec.numblk() + spec.numel() + spec.numelPerBlock() + spec.nnz() + spec.nnz(1e-3) + spec.gridNdim;
  const gs: number[] = spec.gridShape;
  const bs: number[] = spec.shape;
  const sv: View = spec.view;
  const nm: string | undefined = spec.name;
  const values: Values = p;
  const norms: Float32Array = spec.norms(2, values);
  spec.norms(Infinity);
  spec.min(copy);
  spec.max();
  spec.applyMask(new Uint8Array(3));
  spec.applyMultiplier(new Float32Array(3));
  const soft: SoftThresholdOptions<Values> = { conditioners: new Float32Array(96), maxIter: 20, atol: 1e-8, eps: 1e-7 };
  spec.softThreshold(new Float32Array(3), soft);
  const floats: Floats = [1, 2, 3];
  const mask: Mask = [true, false, 1];
  const grid: GridInput<Floats> = { data: floats, shape: [3, 1] };
  spec.applyMultiplier(grid);
  spec.applyMask({ data: mask, shape: [3, 1] });
  spec.hardThreshold(new Float32Array(3), p);
  const masks: Map<BlockSpec, Uint8Array> = spec.getMasks(new Uint8Array(3));
  const bview: Shaped<Float32Array> = spec.blockView(undefined, { merge: true });

  const coupling = new BlockCoupling([spec, spec2], [[0, 1], [1, 0]], 'c');
  const cs: BlockSpec[] = coupling.specs;
  const co: number[][] = coupling.orders;
  coupling.norms(1, [p, copy]);
  coupling.min();
  coupling.max([p, p]);
  coupling.applyMask(new Uint8Array(coupling.numblk()));
  coupling.applyMultiplier(new Float32Array(coupling.numblk()));
  coupling.softThreshold(new Float32Array(coupling.numblk()), { conditioners: [p, p] });
  coupling.hardThreshold(new Float32Array(coupling.numblk()));
  const cm: Map<BlockSpec, Uint8Array> = coupling.getMasks(new Uint8Array(coupling.numblk()));
  const cbv: Shaped<Float32Array> = coupling.blockView();
  const cn: number = coupling.numel() + coupling.numelPerBlock() + coupling.nnz() + coupling.gridNdim + coupling.gridShape.length;

  const scope = new ScopeSpec(spec, [1, -1], 's');
  const scope2 = new ScopeSpec(coupling, []);
  const sn: number = scope.numblkPerScope() + scope.numelPerScope() + scope.numScopes() + scope.sparsityToNnz(0.5);
  const sg: number[] = [...scope.gridShape, ...scope.shape, ...scope.blockGridShape];
  const blk: BlockSpec | BlockCoupling = scope.block;
  scope.blockNorms(p);
  scope2.blockNorms([p, p]);
  scope.kthLargest(norms, 1);
  scope.kthMid(norms, 1, 2);
  scope.hardThreshold({ sparsity: 0.5 });
  scope.hardThreshold({ nnz: 1, values: p });
  const hard: HardThresholdOptions<ScopeValues> = { thresholds: new Float32Array(3) };
  scope.hardThreshold(hard);
  const smo: ScopeMaskOptions = { nnz: 1, values: p };
  scope.getMasks(smo);
  scope.getMasks({ nnz: 1 });
  scope.getMasks({ blockMask: new Uint8Array(3) });
  scope.getMasks({ sparsity: 0.5, blockScores: norms });
  scope.softThreshold(new Float32Array(3), { scale: true, conditioners: p, maxIter: 5 });

  const progress: ProgressCallback = (done, total) => void (done / total);
  const global = new ScopeCoupling([scope, new ScopeSpec(spec2, [-1, -1])], undefined, 'g');
  const gsc: ScopeSpec[] = global.scopes;
  const go: number[][] = global.orders;
  const gn: number = global.numblkPerScope() + global.numelPerScope() + global.numScopes() + global.sparsityToNnz(0.3) + global.gridShape.length;
  global.blockNorms();
  global.hardThreshold({ sparsity: 0.5, onProgress: progress });
  global.softThreshold(new Float32Array(1), { scale: true, onProgress: progress });
  const gm: Map<BlockSpec, Uint8Array> = global.getMasks({ nnz: 2, values: [p, p] });

  const info: { valid: boolean; m: number; n: number } = getNmpruneInfo('m4n2_1d');
  const pats: Uint8Array = computeValid1dPatterns(4, 2);
  const w = new Float32Array(16);
  const m1: Uint8Array = mn1dBest(w, [2, 8], 4, 2);
  const m2: Uint8Array = m4n2_1d(w, [2, 8]);
  const pattern: AspPattern = 'm4n2_2d_best';
  const m3: Uint8Array = createAspMask(p, undefined, pattern);
  const m4: Uint8Array = createAspMask(w, [2, 8]);
  const f: number = fill(w);
  const r: { data: Float32Array; shape: number[]; paddedShape: number[] } = reshape1d(w, [2, 8], 4);
  const searcher = new MagnitudeSearcher('m4n2_1d');
  const pat: string = searcher.pattern;
  const sm: Map<Param, Uint8Array> = searcher.computeMasks([p], { onProgress: progress });
  searcher.apply([p]);
  const csr: CsrMatrix = toCsr(w, [2, 8]);
  const bsr: BsrMatrix = toBsr(w, [2, 8], [2, 4]);
  const n24: Nm24Matrix = toNm24(w, [2, 8]);
  const dense: Float32Array = sparseToDense(csr);
  sparseToDense(bsr);
  sparseToDense(n24);
  const bytes: { dense: number; csr: number; bsr: number; nm24: number | null } = sparseBytes(w, [2, 8], [2, 4]);
  const po: PermutationOptions = { m: 4, n: 2, maxSweeps: 2 };
  const perm: { perm: Uint32Array; keptBefore: number; keptAfter: number; swaps: number } = searchPermutation(w, [2, 8], po);

  // calibration-aware pruning: a 2x8 weight, 8 inputs; a conv input [1, 2, 3, 4] with 2x2 kernels
  const h = new Hessian(8);
  h.addRows(new Float32Array(4 * 8).fill(0.5), 4);
  const geom: ConvGeometry = { kernelShape: [2, 2], strides: [1, 1], pads: [0, 0, 0, 0], dilations: [1, 1] };
  h.addConv(new Float32Array(24).fill(0.25), [1, 2, 3, 4], geom);
  const hc: number = h.cols + h.count;
  const hm: Float32Array = h.matrix();
  const hn: Float32Array = h.inputNorms();
  const ws: Float32Array = wandaScores(view, h);
  const before = view.values();
  const go2: SparseGptOptions = { sparsity: 0.5, blockSize: 128, percDamp: 0.01 };
  const keepMask: Uint8Array = sparseGpt(view, h, go2);
  const rel: number = relReconError(before, view.values(), h);
  // GPTQ (the same solver, quantized columns) and round-to-nearest: codes and scales per row and group
  const qo: GptqOptions = { bits: 4, group: 8, sym: true, blockSize: 8 };
  const q: QuantizedWeights = gptq(view, h, qo);
  const qg: QuantGridOptions = { bits: 8 };
  const qr: QuantizedWeights = roundToNearest(view, qg);
  const qn: number = q.codes.length + q.scales.length + q.group + qr.codes.length + (q.zeros?.length ?? 0) + (q.keep?.length ?? 0);
  h.free();
  try {
    new View(p, [100], [1]);
  } catch (e) {
    if (e instanceof ShapeMismatchError || e instanceof CouplingError) throw e;
    if (e instanceof SparseKitError) {
      const code: ErrorCode = e.code;
      void code;
    }
  }
  // The block a layer gets when the asked one does not divide its view (the playground's rule).
  const fitted: { block: [number, number]; note: string | null } = fitBlock(6, 8, [4, 4]);
  // A one-node training graph (y = x W), a few masked Adam steps towards a target.
  const graph: TrainGraph = {
    nodes: [{ opType: 'MatMul', inputs: ['x', 'W'], outputs: ['y'] }],
    inputs: ['x'], outputs: ['y'],
    initializers: [{ name: 'W', dims: [2, 2], values: new Float32Array([1, 0, 0.5, 1]) }],
  };
  const topts: TrainerOptions = { lr: 0.01, masked: true };
  const trainer = new Trainer(graph, topts);
  const batch: Batch = { values: new Float32Array([1, 2]), shape: [1, 2] };
  const ys: Batch[] = trainer.forward([batch]);
  const lossAfterStep: number = trainer.step([batch], [new Float32Array([1, 1])]);
  trainer.free();
  // `using` itself needs the consumer's esnext.disposable lib (tests/types/using.ts); the key works without it
  const disposable = Param.fromArray([1, 2, 3], [3]);
  disposable[Symbol.dispose]();
  const owned: Owned[] = [searcher, global, scope2, scope, coupling, spec2, spec, full, view, p];
  for (const o of owned) o.free();
  void [fitted, ys, lossAfterStep, qn, hc, hm, hn, ws, keepMask, rel, active, t, v, nt, shape, size, live, same, vp, vs, vst, nd, off, rc, bv, be, n, gs, bs, sv, nm, masks, bview, cs, co, cm, cbv, cn, sn, sg, blk, gsc, go, gn, gm, info, pats, m1, m2, m3, m4, f, r, pat, sm, dense, bytes, perm];
  return n;
}
