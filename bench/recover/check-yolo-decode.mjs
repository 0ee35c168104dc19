// Checks bench/lib/yolo-detections.mjs against ultralytics' own predict (bench/recover/yolo-predict.py)
// on the same images: the JS decoding runs onnxruntime-node on DIR/<set>/<NNNNN>.npy, ultralytics on
// DIR/png/<set>/<NNNNN>.png (the same pixels; a 320 x 320 image is not resized). Same detections =
// same count per image, same classes, corners within `--tol` pixels, confidences within 1e-4.
//   node bench/recover/check-yolo-decode.mjs [--dir bench/out/yolov8-shapes] [--model FILE] [--set test]
//        [--count 16] [--conf 0.25] [--iou 0.7] [--tol 0.01]
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { parseArgs } from 'node:util';
import ort from 'onnxruntime-node';
import fs from 'node:fs';
import { OnnxModel, makeOrtRunner, readCalibrationDir } from 'sparsekit-wasm/onnx';
import { detectAll } from '../lib/yolo-detections.mjs';

const { values: opt } = parseArgs({
  options: {
    dir: { type: 'string', default: 'bench/out/yolov8-shapes' }, model: { type: 'string' }, set: { type: 'string', default: 'test' },
    count: { type: 'string', default: '16' }, conf: { type: 'string', default: '0.25' }, iou: { type: 'string', default: '0.7' }, tol: { type: 'string', default: '0.01' },
  },
});
const modelPath = opt.model ?? path.join(opt.dir, 'model.onnx');
const bytes = new Uint8Array(fs.readFileSync(modelPath));
const runner = makeOrtRunner(ort, { intraOpNumThreads: 1, logSeverityLevel: 3 });
const samples = await readCalibrationDir(path.join(opt.dir, opt.set), OnnxModel.parse(bytes), { limit: Number(opt.count) });
const session = await runner.createSession(bytes);
const size = 320;
const mine = await detectAll(session, samples, { conf: Number(opt.conf), iouThreshold: Number(opt.iou), clip: [size, size] });
await session.release();
const pngs = samples.map((s) => path.join(opt.dir, 'png', opt.set, `${s.source.replace(/\.npy$/, '')}.png`));
const py = process.env.PYTHON ?? '/work/venv/bin/python';
// Ultralytics logs to stdout too ("Loading …"): the JSON is the last line.
const ref = JSON.parse(execFileSync(py, ['bench/recover/yolo-predict.py', modelPath, '--conf', opt.conf, '--iou', opt.iou, '--imgsz', String(size), ...pngs], { maxBuffer: 1 << 28 }).toString().trim().split('\n').pop());
let same = 0, boxes = 0, worst = 0;
for (const [i, p] of pngs.entries()) {
  const r = ref[p], m = mine[i];
  boxes += r.length;
  let ok = r.length === m.length;
  // Ultralytics returns its detections in NMS order (highest confidence first), as the lib does.
  for (let j = 0; ok && j < r.length; j++) {
    const d = Math.max(...m[j].box.map((v, k) => Math.abs(v - r[j][k])));
    worst = Math.max(worst, d);
    ok = m[j].cls === r[j][4] && d <= Number(opt.tol) && Math.abs(m[j].conf - r[j][5]) <= 1e-4;
  }
  if (ok) same++;
  else console.error(`${p}: ultralytics ${r.length} detections, the lib ${m.length}`);
}
console.log(`${same} of ${pngs.length} images with the same detections as ultralytics' predict (${boxes} detections, conf ${opt.conf}, iou ${opt.iou}; largest corner difference ${worst.toExponential(2)} px)`);
process.exitCode = same === pngs.length ? 0 : 1;
