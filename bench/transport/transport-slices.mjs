// Representative slices of a large model file, for checking the transport-size estimate against
// brotli 11 where compressing the whole file is too slow (SmolLM2-135M's 623 MiB: ~35 min of one
// core at quality 11): N slices of SIZE bytes at evenly spaced offsets ((i + 0.5) / N of the file),
// concatenated, the same offsets in every file given (a model and its pruned copy hold the same
// tensors at nearly the same places). Usage: node bench/transport/transport-slices.mjs OUT_PREFIX FILE...
// writes OUT_PREFIX.<n>.bin per file (n: its position in the list) and prints their paths.
import fs from 'node:fs';

const N = 16, SIZE = 1 << 20;
const [prefix, ...files] = process.argv.slice(2);
files.forEach((f, n) => {
  const fd = fs.openSync(f, 'r'), size = fs.fstatSync(fd).size, out = Buffer.alloc(N * SIZE);
  for (let i = 0; i < N; i++) fs.readSync(fd, out, i * SIZE, SIZE, Math.floor(((i + 0.5) / N) * size - SIZE / 2));
  fs.closeSync(fd);
  fs.writeFileSync(`${prefix}.${n}.bin`, out);
  console.log(`${prefix}.${n}.bin`);
});
