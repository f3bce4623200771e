// ticketd's Redis front door through the Node `redis` client, unchanged
// (integration/redis_clients_test.go). Usage: node client.js HOST PORT KEY N;
// prints one line per check, then "ok".
const { createClient } = require('redis');

async function main() {
  const [host, port, key, n] = [process.argv[2], Number(process.argv[3]), process.argv[4], Number(process.argv[5])];
  const c = createClient({ socket: { host, port } });
  c.on('error', (e) => { console.error('client error', e); });
  await c.connect();
  if (await c.ping() !== 'PONG') throw new Error('PING');
  const got = [];
  for (let i = 0; i < n; i++) got.push(await c.incr(key));
  for (let i = 1; i < got.length; i++) if (got[i] <= got[i - 1]) throw new Error('not increasing: ' + got);
  console.log('incr', got[0], got[got.length - 1]);
  // Pipelined: the client sends these together.
  const piped = await Promise.all(Array.from({ length: 10 }, () => c.incr(key)));
  for (let i = 1; i < piped.length; i++) if (piped[i] !== piped[i - 1] + 1) throw new Error('pipeline: ' + piped);
  if (await c.incrBy(key, 5) !== piped[9] + 5) throw new Error('INCRBY');
  if (await c.set('node:k', 'v', { EX: 100 }) !== 'OK') throw new Error('SET EX');
  const ttl = await c.ttl('node:k');
  if (ttl < 99 || ttl > 100) throw new Error('TTL ' + ttl);
  if (await c.set('node:k', 'w', { NX: true }) !== null) throw new Error('SET NX');
  const mget = await c.mGet(['node:k', 'node:none']);
  if (mget[0] !== 'v' || mget[1] !== null) throw new Error('MGET ' + mget);
  if (await c.del('node:k') !== 1 || await c.get('node:k') !== null) throw new Error('DEL');
  await c.set('node:s', 'text');
  try {
    await c.incr('node:s');
    throw new Error('INCR of a string did not fail');
  } catch (e) {
    if (e.message !== 'ERR value is not an integer or out of range') throw e;
  }
  await c.del('node:s');
  await c.select(2);
  if (await c.incr(key) !== 1) throw new Error('SELECT 2: a fresh key');
  console.log('commands');
  await c.quit();
  console.log('ok');
}

main().catch((e) => { console.error(e); process.exit(1); });
