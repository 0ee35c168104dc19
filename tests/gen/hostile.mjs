#!/usr/bin/env node
// Writes the hostile ONNX corpus (tests/data/hostile/): small files that each break one promise a
// model makes (sizes, structure, names, nesting), with cases.json (file -> expected reason) and the
// README table. Every reader stage must refuse them with a typed OnnxError, or read them correctly
// (expect "ok"). Run: node tests/gen/hostile.mjs  (deterministic; the files are committed).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { f, varint, tensor, node, graph, model, valueInfo, rawFloats, floats } from './pb.mjs';

const OUT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../data/hostile');
const cat = (...p) => p.flat();

const W1 = { name: 'W1', dims: [4, 2, 3, 3], raw: rawFloats(72, 1) };
const B1 = { name: 'B1', dims: [4], raw: rawFloats(4, 2) };
const W2 = { name: 'W2', dims: [4, 4, 1, 1], raw: rawFloats(16, 3) };

/** x[1,2,8,8] -> Conv(W1,B1) -> Relu -> Conv(W2) -> y: the valid base every case bends. */
function base({ w1 = W1, b1 = B1, w2 = W2, nodes, inits, inputs, outputs, convAttrs = [], extraInits = [], graphExtra = [] } = {}) {
  const n = nodes ?? [
    node({ op: 'Conv', inputs: ['x', 'W1', 'B1'], outputs: ['a'], name: 'conv1', attrs: [{ name: 'kernel_shape', ints: [3, 3] }, ...convAttrs] }),
    node({ op: 'Relu', inputs: ['a'], outputs: ['b'], name: 'relu' }),
    node({ op: 'Conv', inputs: ['b', 'W2'], outputs: ['y'], name: 'conv2', attrs: [{ name: 'kernel_shape', ints: [1, 1] }] }),
  ];
  return model({
    graph: graph({
      nodes: n,
      inits: inits ?? [tensor(w1), tensor(b1), tensor(w2), ...extraInits],
      inputs: inputs ?? [valueInfo('x', [1, 2, 8, 8])],
      outputs: outputs ?? [valueInfo('y', [1, 4, 6, 6])],
      extra: graphExtra,
    }),
  });
}

/** An If node whose branches nest `depth` more If nodes; the innermost reads outer value `x`. */
function nestedIf(depth, leafInput = 'x') {
  let body = graph({
    name: `leaf`,
    nodes: [node({ op: 'Identity', inputs: [leafInput], outputs: [`o${depth}`], name: `id${depth}` })],
    outputs: [valueInfo(`o${depth}`, [1, 2, 8, 8])],
  });
  // The else branch of every level is a one-node leaf, so the file grows linearly with the depth.
  const leaf = (d) => graph({ name: `else${d}`, nodes: [node({ op: 'Identity', inputs: ['x'], outputs: [`e${d}`] })], outputs: [valueInfo(`e${d}`, [1, 2, 8, 8])] });
  for (let d = depth - 1; d >= 0; d--) {
    body = graph({
      name: `level${d}`,
      nodes: [node({ op: 'If', inputs: ['cond'], outputs: [`o${d}`], name: `if${d}`, attrs: [{ name: 'then_branch', g: body }, { name: 'else_branch', g: leaf(d) }] })],
      outputs: [valueInfo(`o${d}`, [1, 2, 8, 8])],
    });
  }
  return model({
    graph: graph({
      nodes: [node({ op: 'If', inputs: ['cond'], outputs: ['y'], name: 'top', attrs: [{ name: 'then_branch', g: body }, { name: 'else_branch', g: leaf('top') }] })],
      inputs: [valueInfo('x', [1, 2, 8, 8]), valueInfo('cond', [], 9)],
      outputs: [valueInfo('y', [1, 2, 8, 8])],
    }),
  });
}

const fp16 = (n) => new Uint8Array(new Uint16Array(n).fill(0x3c00).buffer);
const ext = (entries) => ({ name: 'W1', dims: [4, 2, 3, 3], external: entries });
const DATA = rawFloats(72 + 16, 9); // 352 bytes: W1 then W2

/**
 * The corpus: [file, what it is, expected reason ('ok': a valid model), extra files, parse limits,
 * expected reason under the default limits (the CLI's), when limits are given].
 */
const CASES = [
  ['valid-base.onnx', 'the valid model every other case bends (2 Conv, Relu)', 'ok', () => base()],
  ['huge-dims.onnx', 'Conv weight dims [2^31, 2^31, 3, 3] with 16 bytes of raw_data (issue 24)', 'bad_dims',
    () => base({ w1: { name: 'W1', dims: [2 ** 31, 2 ** 31, 3, 3], raw: rawFloats(4, 1) } })],
  ['huge-dims-fits-2p53.onnx', 'Conv weight dims [2^20, 2^20, 1, 1] (2^40 elements) with 16 bytes', 'size_mismatch',
    () => base({ w1: { name: 'W1', dims: [2 ** 20, 2 ** 20, 1, 1], raw: rawFloats(4, 1) } })],
  ['negative-dim.onnx', 'Conv weight dims [-4, 2, 3, 3]', 'bad_dims',
    () => base({ w1: { name: 'W1', dims: [-4, 2, 3, 3], raw: rawFloats(72, 1) } })],
  ['negative-dims-pair.onnx', 'dims [-4, -2, 3, 3]: a product that looks right', 'bad_dims',
    () => base({ w1: { name: 'W1', dims: [-4, -2, 3, 3], raw: rawFloats(72, 1) } })],
  ['int64-max-dim.onnx', 'a bias of dims [2^63 - 1]', 'bad_dims',
    () => base({ b1: { name: 'B1', dims: [(1n << 63n) - 1n], raw: rawFloats(4, 2) } })],
  ['empty-tensor-huge-dims.onnx', 'a weight of dims [0, 2^40]: no elements, a huge declared dim', 'bad_dims',
    () => base({ extraInits: [tensor({ name: 'E', dims: [0, 2 ** 40] })] })],
  ['raw-data-short.onnx', 'W1 [4,2,3,3] float with 100 bytes of raw_data (288 needed)', 'size_mismatch',
    () => base({ w1: { ...W1, raw: rawFloats(25, 1) } })],
  ['float-data-count.onnx', 'W1 with 5 values in float_data for 72 elements', 'size_mismatch',
    () => base({ w1: { name: 'W1', dims: [4, 2, 3, 3], floatData: floats(5) } })],
  ['int64-data-count.onnx', 'an int64 initializer of dims [4] with 3 values in int64_data', 'size_mismatch',
    () => base({ extraInits: [tensor({ name: 'S', dims: [4], dataType: 7, int64Data: [1, 2, 3] })] })],
  ['fp16-odd-bytes.onnx', 'a FLOAT16 weight with 143 bytes of raw_data (an odd count; 144 needed)', 'size_mismatch',
    () => base({ w1: { name: 'W1', dims: [4, 2, 3, 3], dataType: 10, raw: fp16(72).subarray(0, 143) } })],
  ['no-data.onnx', 'W1 [4,2,3,3] with no data at all', 'size_mismatch', () => base({ w1: { name: 'W1', dims: [4, 2, 3, 3] } })],
  ['bad-dtype.onnx', 'a tensor of data type 99', 'bad_dtype', () => base({ b1: { ...B1, dataType: 99 } })],
  ['external-outside.onnx', 'external data at offset 10^12 of a 352-byte file', 'bad_external',
    () => base({ w1: ext([['location', 'external-outside.onnx.data'], ['offset', '1000000000000'], ['length', '288']]) }),
    { 'external-outside.onnx.data': DATA }],
  ['external-negative-offset.onnx', 'external data at offset -64', 'bad_external',
    () => base({ w1: ext([['location', 'external-negative-offset.onnx.data'], ['offset', '-64'], ['length', '288']]) }),
    { 'external-negative-offset.onnx.data': DATA }],
  ['external-huge-length.onnx', 'external data length 99999999999999999999', 'bad_external',
    () => base({ w1: ext([['location', 'external-huge-length.onnx.data'], ['offset', '0'], ['length', '99999999999999999999']]) }),
    { 'external-huge-length.onnx.data': DATA }],
  ['external-length-mismatch.onnx', 'external data length 10 for a 288-byte tensor', 'size_mismatch',
    () => base({ w1: ext([['location', 'external-length-mismatch.onnx.data'], ['offset', '0'], ['length', '10']]) }),
    { 'external-length-mismatch.onnx.data': DATA }],
  ['external-ok.onnx', 'W1 and W2 in an external data file (valid: exercises the writer)', 'ok',
    () => base({ w1: ext([['location', 'external-ok.onnx.data'], ['offset', '0'], ['length', '288']]),
      w2: { name: 'W2', dims: [4, 4, 1, 1], external: [['location', 'external-ok.onnx.data'], ['offset', '288'], ['length', '64']] } }),
    { 'external-ok.onnx.data': DATA }],
  ['external-no-location.onnx', 'external data without a location', 'bad_external',
    () => base({ w1: ext([['offset', '0'], ['length', '288']]) })],
  ['external-past-end.onnx', 'external data whose range ends 1 byte past its file', 'bad_external',
    () => base({ w1: ext([['location', 'external-past-end.onnx.data'], ['offset', '65'], ['length', '288']]) }),
    { 'external-past-end.onnx.data': DATA }],
  ['truncated.onnx', 'the valid model cut in half', 'truncated', () => base().subarray(0, Math.floor(base().length / 2))],
  ['length-past-end.onnx', 'the graph field declares 2^40 bytes', 'truncated',
    () => Uint8Array.from(cat(f.varint(1, 8), varint(7 * 8 + 2), varint(2 ** 40), [1, 2, 3]))],
  ['varint-overflow.onnx', 'ir_version as a varint of 11 bytes', 'corrupt',
    () => Uint8Array.from(cat([0x08], new Array(10).fill(0xff), [0x01], [...base().subarray(2)]))],
  ['bad-wire-type.onnx', 'a graph field of wire type 7', 'corrupt',
    () => { const b = base(); const i = b.indexOf(0x3a); const c = Uint8Array.from(b); c[i] = 0x3f; return c; }],
  ['field-zero.onnx', 'a node with field number 0 inside', 'corrupt',
    () => base({ nodes: [node({ op: 'Relu', inputs: ['x'], outputs: ['y'] }).concat([0x00, 0x01])], inits: [] })],
  ['packed-misaligned.onnx', 'packed float_data of 7 bytes', 'corrupt',
    () => base({ extraInits: [cat(f.varint(2, 1), f.len(4, [0, 0, 0x80, 0x3f, 0, 0, 0x80]), f.len(8, 'P'))] })],
  ['op-not-utf8.onnx', 'an op type with a byte that is not UTF-8 (found by the fuzzer: it re-encoded differently each time)', 'corrupt',
    () => base({ nodes: [node({ op: Uint8Array.from([0x52, 0x65, 0xed, 0x75]), inputs: ['x'], outputs: ['y'], name: 'relu' })], inits: [] })],
  ['not-onnx.onnx', 'a PNG signature', 'not_onnx', () => Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0])],
  ['empty.onnx', 'an empty file', 'not_onnx', () => new Uint8Array(0)],
  ['cycle.onnx', 'two Add nodes reading each other', 'cycle',
    () => base({
      nodes: [
        node({ op: 'Add', inputs: ['x', 'q'], outputs: ['p'], name: 'add1' }),
        node({ op: 'Add', inputs: ['x', 'p'], outputs: ['q'], name: 'add2' }),
        node({ op: 'Relu', inputs: ['q'], outputs: ['y'], name: 'relu' }),
      ], inits: [],
    })],
  ['self-loop.onnx', 'a node reading its own output', 'cycle',
    () => base({ nodes: [node({ op: 'Add', inputs: ['x', 'y'], outputs: ['y'], name: 'loop' })], inits: [] })],
  ['unsorted.onnx', 'a valid graph whose nodes are listed in reverse order', 'ok',
    () => base({
      nodes: [
        node({ op: 'Conv', inputs: ['b', 'W2'], outputs: ['y'], name: 'conv2', attrs: [{ name: 'kernel_shape', ints: [1, 1] }] }),
        node({ op: 'Relu', inputs: ['a'], outputs: ['b'], name: 'relu' }),
        node({ op: 'Conv', inputs: ['x', 'W1', 'B1'], outputs: ['a'], name: 'conv1', attrs: [{ name: 'kernel_shape', ints: [3, 3] }] }),
      ],
    })],
  ['dangling-input.onnx', 'a Relu reading "ghost", which nothing defines', 'dangling_input',
    () => base({ nodes: [node({ op: 'Relu', inputs: ['ghost'], outputs: ['y'], name: 'relu' })], inits: [] })],
  ['dangling-output.onnx', 'a graph output no node produces', 'dangling_input',
    () => base({ outputs: [valueInfo('y', [1, 4, 6, 6]), valueInfo('z', [1])] })],
  ['duplicate-output.onnx', 'two nodes writing "a"', 'duplicate_name',
    () => base({
      nodes: [
        node({ op: 'Conv', inputs: ['x', 'W1', 'B1'], outputs: ['a'], name: 'conv1' }),
        node({ op: 'Relu', inputs: ['x'], outputs: ['a'], name: 'relu0' }),
        node({ op: 'Relu', inputs: ['a'], outputs: ['b'], name: 'relu' }),
        node({ op: 'Conv', inputs: ['b', 'W2'], outputs: ['y'], name: 'conv2' }),
      ],
    })],
  ['duplicate-initializer.onnx', 'two initializers named W2', 'duplicate_name', () => base({ extraInits: [tensor(W2)] })],
  ['output-shadows-initializer.onnx', 'a node writing "W2", an initializer', 'duplicate_name',
    () => base({
      nodes: [
        node({ op: 'Conv', inputs: ['x', 'W1', 'B1'], outputs: ['W2'], name: 'conv1' }),
        node({ op: 'Relu', inputs: ['W2'], outputs: ['y'], name: 'relu' }),
      ],
    })],
  ['bn-missing-inputs.onnx', 'a BatchNormalization with its input only (found by the fuzzer: the channel folding read its scale)', 'bad_node',
    () => base({
      nodes: [
        node({ op: 'Conv', inputs: ['x', 'W1', 'B1'], outputs: ['a'], name: 'conv1' }),
        node({ op: 'BatchNormalization', inputs: ['a'], outputs: ['b'], name: 'bn' }),
        node({ op: 'Conv', inputs: ['b', 'W2'], outputs: ['y'], name: 'conv2' }),
      ],
    })],
  ['conv-no-weight.onnx', 'a Conv whose weight input is the empty name', 'bad_node',
    () => base({ nodes: [node({ op: 'Conv', inputs: ['x', ''], outputs: ['y'], name: 'conv' })], inits: [] })],
  ['conv-group-zero.onnx', 'Conv with group 0', 'bad_attribute', () => base({ convAttrs: [{ name: 'group', i: 0 }] })],
  ['conv-group-huge.onnx', 'Conv with group 2^40 over 4 output channels', 'bad_attribute', () => base({ convAttrs: [{ name: 'group', i: 2 ** 40 }] })],
  ['convtranspose-group-empty.onnx', 'ConvTranspose with group 2^30 over a [0, 5, 3, 3] weight', 'bad_attribute',
    () => base({
      nodes: [node({ op: 'ConvTranspose', inputs: ['x', 'E'], outputs: ['y'], name: 'ct', attrs: [{ name: 'group', i: 2 ** 30 }] })],
      inits: [tensor({ name: 'E', dims: [0, 5, 3, 3] })],
    })],
  ['subgraph-dangling.onnx', 'an If branch reading a name nothing defines', 'dangling_input', () => nestedIf(2, 'ghost')],
  ['subgraph-ok.onnx', 'If branches nested 3 deep reading the outer input', 'ok', () => nestedIf(3)],
  ['subgraph-deep.onnx', 'If branches nested 20 deep (limit 16)', 'too_deep', () => nestedIf(20)],
  ['subgraph-very-deep.onnx', 'If branches nested 40 deep: 120 message levels (limit 100)', 'too_deep', () => nestedIf(40)],
  ['subgraph-cycle.onnx', 'a node whose If branch reads the output of a node that reads the If', 'cycle',
    () => model({
      graph: graph({
        nodes: [
          node({ op: 'If', inputs: ['cond'], outputs: ['p'], name: 'if', attrs: [
            { name: 'then_branch', g: graph({ nodes: [node({ op: 'Identity', inputs: ['q'], outputs: ['t'] })], outputs: [valueInfo('t', [1])] }) },
            { name: 'else_branch', g: graph({ nodes: [node({ op: 'Identity', inputs: ['x'], outputs: ['e'] })], outputs: [valueInfo('e', [1])] }) },
          ] }),
          node({ op: 'Relu', inputs: ['p'], outputs: ['q'], name: 'relu' }),
          node({ op: 'Identity', inputs: ['q'], outputs: ['y'], name: 'out' }),
        ],
        inputs: [valueInfo('x', [1]), valueInfo('cond', [], 9)],
        outputs: [valueInfo('y', [1])],
      }),
    })],
  ['type-nesting.onnx', 'a graph input whose type nests 200 sequence types', 'too_deep',
    () => {
      let tp = cat(f.len(1, f.varint(1, 1)));
      for (let i = 0; i < 200; i++) tp = f.len(4, f.len(1, tp));
      return base({ inputs: [valueInfo('x', [1, 2, 8, 8]), cat(f.len(1, 'seq'), f.len(2, tp))] });
    }],
  ['many-empty-nodes.onnx', '100 000 empty nodes (2 bytes each) after a valid graph: a repeated-field bomb', 'too_large',
    () => base({ graphExtra: new Array(100_000).fill([0x0a, 0x00]).flat() })],
  ['many-dims.onnx', 'a weight with 100 000 dims of 1, one byte each (every int64 decodes into an object)', 'too_large',
    () => base({ extraInits: [tensor({ name: 'D', dims: new Array(100_000).fill(1), raw: rawFloats(1, 4) })] })],
  ['many-dims-allowed.onnx', 'the same, read with limits that allow one object per byte', 'ok',
    () => base({ extraInits: [tensor({ name: 'D', dims: new Array(100_000).fill(1), raw: rawFloats(1, 4) })] }), undefined, { bytesPerObject: 1 }, 'too_large'],
];

export function writeCorpus(dir = OUT) {
  fs.mkdirSync(dir, { recursive: true });
  for (const f0 of fs.readdirSync(dir)) if (/\.onnx(\.data)?$/.test(f0)) fs.unlinkSync(path.join(dir, f0));
  const manifest = [];
  for (const [file, what, expect, make, extra, limits, expectDefault] of CASES) {
    const bytes = make();
    fs.writeFileSync(path.join(dir, file), bytes);
    for (const [k, v] of Object.entries(extra ?? {})) fs.writeFileSync(path.join(dir, k), v);
    manifest.push({ file, what, expect, bytes: bytes.length, ...(limits ? { limits, expectDefault } : {}) });
  }
  fs.writeFileSync(path.join(dir, 'cases.json'), JSON.stringify(manifest, null, 1) + '\n');
  const rows = manifest.map((c) => `| \`${c.file}\` | ${c.bytes} | ${c.what} | ${c.expect === 'ok' ? 'loads (valid)' : `\`${c.expect}\``}${c.limits ? ` with \`limits: ${JSON.stringify(c.limits)}\`; default limits: ${c.expectDefault === 'ok' ? 'loads' : `\`${c.expectDefault}\``}` : ''} |`);
  fs.writeFileSync(path.join(dir, 'README.md'), `# Hostile ONNX files

Generated by \`node tests/gen/hostile.mjs\` (do not edit by hand); run through every stage by
\`tests/onnx/hostile.test.mjs\` (\`loadOnnx\`, \`findChannelGroups\`, \`pruneSparsity\`, \`pruneNm\`,
\`removeChannels\`, the CLI under \`--max-old-space-size=512\`). Each file is refused at load with
an \`OnnxError\` of the reason given (the CLI: exit 1, one line, no output file), or is a valid model
that every stage handles. \`cases.json\` holds the same table for the test. Reasons: docs/errors.md.

| file | bytes | what it is | expected |
|---|---:|---|---|
${rows.join('\n')}
`);
  return manifest;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const m = writeCorpus();
  console.log(`wrote ${m.length} cases to ${path.relative(process.cwd(), OUT)}`);
}
