#!/usr/bin/env node
'use strict';
// The npm `redlock` package (v5, over ioredis) as the other side of interop_npm_test.
// Each command runs to completion and prints one line on stdout; the test parses it.
// A lock this process acquires stays on the nodes after it exits (until its TTL).
//
//   npm_redlock_peer.js PORTS acquire KEY TTL_MS
//       one attempt: "acquired VALUE" or "refused ERROR_NAME"
//   npm_redlock_peer.js PORTS release KEY VALUE
//       release KEY held by VALUE: "released N" (N nodes deleted it)
//   npm_redlock_peer.js PORTS contend KEY TTL_MS SECONDS COUNTER_PORT
//       for SECONDS: acquire KEY (retrying every 40 ms +/- 20 until SECONDS have passed),
//       then in the critical section read the counter key on COUNTER_PORT, wait 2 ms,
//       write it + 1, release; pause 10 ms between sections. "sections N" (the critical sections completed).
//
// PORTS: comma-separated ports of the lock nodes on 127.0.0.1. NODE_PATH must name the
// node_modules that holds redlock and ioredis.

const fs = require('fs');
const path = require('path');
const Redis = require('ioredis');
const redlockModule = require('redlock');

const Redlock = redlockModule.default || redlockModule;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function main() {
  const [ports, command, ...args] = process.argv.slice(2);
  const entry = require.resolve('redlock'); // .../node_modules/redlock/dist/cjs/index.js
  const manifest = path.join(entry.slice(0, entry.lastIndexOf(`${path.sep}dist${path.sep}`)), 'package.json');
  const { version } = JSON.parse(fs.readFileSync(manifest, 'utf8'));
  if (!/^v?5\./.test(version)) throw new Error(`redlock ${version} installed, 5.x expected`);
  const clients = ports.split(',').map((port) => new Redis({ host: '127.0.0.1', port: Number(port) }));
  const extra = [];
  try {
    const redlock = new Redlock(clients, { retryCount: 0, retryDelay: 40, retryJitter: 20 });
    redlock.on('error', () => {}); // a node refusing is an expected event here
    if (command === 'acquire') {
      const [key, ttl] = args;
      try {
        const lock = await redlock.acquire([key], Number(ttl));
        // acquire() returns at a quorum; its stats resolve once every node answered (a
        // NOSCRIPT is followed by an EVAL that a QUIT sent now would cut off).
        await Promise.all(lock.attempts);
        console.log(`acquired ${lock.value}`);
      } catch (error) {
        await Promise.all(error.attempts || []);
        console.log(`refused ${error.name}`);
      }
    } else if (command === 'release') {
      const [key, value] = args;
      const lock = new redlockModule.Lock(redlock, [key], value, [], 0);
      // The stats of an attempt resolve once every node voted; an ExecutionError (no
      // quorum deleted it) carries them too.
      let attempts;
      try {
        ({ attempts } = await redlock.release(lock, { retryCount: 0 }));
      } catch (error) {
        if (!error.attempts) throw error;
        ({ attempts } = error);
      }
      console.log(`released ${(await attempts[0]).votesFor.size}`);
    } else if (command === 'contend') {
      const [key, ttl, seconds, counterPort] = args;
      const counter = new Redis({ host: '127.0.0.1', port: Number(counterPort) });
      extra.push(counter);
      const end = Date.now() + Number(seconds) * 1000;
      let sections = 0;
      while (Date.now() < end) {
        let lock;
        try {
          // Retries bounded by the time left: npm redlock 5 keeps a failed attempt's
          // entries while it retries and counts a node that holds its own value as a
          // refusal, so contenders whose entries split the nodes can all retry until
          // every entry has expired at once, which may never happen. Its release of the
          // partial entries comes only when the retries run out.
          lock = await redlock.acquire([key], Number(ttl), {
            retryCount: Math.max(0, Math.ceil((end - Date.now()) / 40)),
          });
        } catch (error) {
          continue;
        }
        // A racy read-modify-write: two holders at once lose an increment.
        const value = Number((await counter.get('counter')) || '0');
        await sleep(2);
        await counter.set('counter', String(value + 1));
        sections++;
        await lock.release().catch(() => {});
        await sleep(10);
      }
      console.log(`sections ${sections}`);
    } else {
      throw new Error(`unknown command ${command}`);
    }
  } finally {
    // QUIT is answered after the commands sent before it: nothing in flight is cut off.
    await Promise.all([...clients, ...extra].map((client) => client.quit().catch(() => {})));
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
