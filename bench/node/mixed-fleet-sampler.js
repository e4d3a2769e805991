// Watches the lock key of bench/mixed-fleet on every node while the fleet runs, and
// reports how the time divided: free everywhere, held by one value on a quorum, or split
// (held on some nodes, but no value on a quorum, so nobody can acquire until entries
// expire or are released). A client that releases its partial holds after a failed
// attempt leaves a split for a round trip; a client that keeps them while it retries
// (npm `redlock` reuses one value and never deletes it between retries) leaves splits
// that last until the entries expire, a whole TTL.
//   node mixed-fleet-sampler.js NODES(comma-separated redis:// URLs) KEY SECONDS
'use strict';
const Redis = require('ioredis');

const INTERVAL_MS = 20;

async function main() {
  const [nodesArg, key, seconds] = process.argv.slice(2);
  const nodes = nodesArg.split(',').map((url) => new Redis(url, { maxRetriesPerRequest: 1 }));
  const quorum = Math.floor(nodes.length / 2) + 1;
  const deadline = Date.now() + Number(seconds) * 1000;
  const tally = { samples: 0, free: 0, quorum: 0, split: 0 };
  let splitSince = null;
  let longestSplitMs = 0;
  while (Date.now() < deadline) {
    const now = Date.now();
    const values = await Promise.all(nodes.map((node) => node.get(key).catch(() => null)));
    const counts = new Map();
    for (const value of values) if (value !== null) counts.set(value, (counts.get(value) || 0) + 1);
    tally.samples += 1;
    let state = 'split';
    if (counts.size === 0) state = 'free';
    else if (Math.max(...counts.values()) >= quorum) state = 'quorum';
    tally[state] += 1;
    if (state === 'split') {
      if (splitSince === null) splitSince = now;
      longestSplitMs = Math.max(longestSplitMs, Date.now() - splitSince);
    } else {
      splitSince = null;
    }
    await new Promise((resolve) => setTimeout(resolve, INTERVAL_MS));
  }
  const fraction = (n) => Number((n / Math.max(tally.samples, 1)).toFixed(3));
  console.log(
    JSON.stringify({
      samples: tally.samples,
      free_fraction: fraction(tally.free),
      quorum_fraction: fraction(tally.quorum),
      split_fraction: fraction(tally.split),
      longest_split_ms: longestSplitMs,
    }),
  );
  await Promise.all(nodes.map((node) => node.quit()));
}
main().catch((e) => {
  console.error(e);
  process.exit(1);
});
