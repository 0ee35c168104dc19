// Writes NumPy .npy files (format 1.0, C order) for the calibration tests: float32, int64, or any
// typed array with its dtype given.
import fs from 'node:fs';

export function writeNpy(file, data, shape, descr = data instanceof BigInt64Array ? '<i8' : '<f4') {
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': (${shape.join(', ')}${shape.length === 1 ? ',' : ''}), }`;
  header += ' '.repeat(63 - ((10 + header.length) % 64)) + '\n';
  const head = Buffer.from([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0, 0, 0]);
  head.writeUInt16LE(header.length, 8);
  fs.writeFileSync(file, Buffer.concat([head, Buffer.from(header, 'latin1'), Buffer.from(data.buffer, data.byteOffset, data.byteLength)]));
}
