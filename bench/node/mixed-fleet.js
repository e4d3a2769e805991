// One npm `redlock` client of bench/mixed-fleet: loops on one key until the deadline, each
// critical section a racy read-modify-write of a counter on the storage Redis, and prints
// how many it ran. npm redlock never announces its releases; it retries every
// retryDelay (+ jitter) while the key is held. With SECTION the critical section is that
// shell command (the one `redlock run` runs on the other side, so both sides' sections
// cost the same); without it, the read-modify-write is done in process.
//   node mixed-fleet.js NODES(comma-separated redis:// URLs) STORAGE_PORT KEY SECONDS [SECTION]
'use strict';
const { execFile } = require('child_process');
const { promisify } = require('util');
const Redis = require('ioredis');
const { default: Redlock } = require('redlock');

const run = promisify(execFile);

async function main() {
  const [nodesArg, storagePort, key, seconds, section] = process.argv.slice(2);
  const clients = nodesArg.split(',').map((url) => new Redis(url, { maxRetriesPerRequest: 1 }));
  const storage = new Redis({ port: Number(storagePort), host: '127.0.0.1' });
  const redlock = new Redlock(clients, { retryCount: -1, retryDelay: 40, retryJitter: 20 });
  const deadline = Date.now() + Number(seconds) * 1000;
  let sections = 0;
  while (Date.now() < deadline) {
    let lock;
    try {
      lock = await redlock.acquire([key], 3000, { retryCount: Math.ceil((deadline - Date.now()) / 40) });
    } catch (e) {
      break;
    }
    if (section) {
      await run('sh', ['-c', section]);
    } else {
      const value = Number((await storage.get('mixed:counter')) || 0);
      await new Promise((r) => setTimeout(r, 5));
      await storage.set('mixed:counter', String(value + 1));
    }
    sections += 1;
    try {
      await lock.release();
    } catch (e) {}
  }
  console.log(sections);
  await Promise.all(clients.map((c) => c.quit()));
  await storage.quit();
}
main().catch((e) => {
  console.error(e);
  process.exit(1);
});
