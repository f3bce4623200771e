// node-mysql2: query() and execute() (server-side prepared), insertId,
// a pool's connections, ping, changeUser (COM_CHANGE_USER), a wrong
// password.
let mysql, version;
try {
  mysql = require('mysql2/promise');
  ({ version } = require('mysql2/package.json'));
} catch (e) {
  if (e.code !== 'MODULE_NOT_FOUND') throw e;
  // make compat's SKIP line, with what to run: the module is pinned by
  // package-lock.json next to this file and installed by .ci/run.
  console.log('skip: node-mysql2 is not installed here: run npm ci --prefix integration/compat/node');
  process.exit(0);
}

const cfg = {
  host: process.env.TICKETD_HOST,
  port: Number(process.env.TICKETD_PORT),
  user: process.env.TICKETD_USER,
  password: process.env.TICKETD_PASSWORD,
};
const db = process.env.TICKETD_DB;
const table = process.env.TICKETD_TABLE;

function fail(msg) {
  console.error('FAIL: ' + msg);
  process.exit(1);
}

let prev = 0;
function check(what, id, lid) {
  if (Number(id) !== Number(lid)) fail(`${what}: driver insert id ${id}, LAST_INSERT_ID() ${lid}`);
  if (Number(id) <= prev) fail(`${what}: id ${id} not above ${prev}`);
  prev = Number(id);
}

(async () => {
  console.log(`version: node ${process.version} mysql2 ${version}`);
  const c = await mysql.createConnection(cfg);
  await c.query(`CREATE DATABASE IF NOT EXISTS ${db}`);
  await c.changeUser({ user: cfg.user, password: cfg.password, database: db });
  await c.query(`CREATE TABLE IF NOT EXISTS ${table} (id bigint(20) unsigned NOT NULL auto_increment, ` +
    "stub char(1) NOT NULL default '', PRIMARY KEY (id), UNIQUE KEY stub (stub)) ENGINE=MyISAM");
  for (let i = 0; i < 2; i++) {
    const [r] = await c.query(`REPLACE INTO ${table} (stub) VALUES ('a')`);
    const [[row]] = await c.query('SELECT LAST_INSERT_ID() AS id');
    check('query', r.insertId, row.id);
  }
  for (let i = 0; i < 2; i++) {
    const [r] = await c.execute(`REPLACE INTO ${table} (stub) VALUES (?)`, ['a']);
    const [[row]] = await c.execute('SELECT LAST_INSERT_ID() AS id');
    check('execute', r.insertId, row.id);
  }
  const [[sel]] = await c.execute(`SELECT id FROM ${table} WHERE stub = ?`, ['a']);
  if (Number(sel.id) !== prev) fail(`row a ${sel.id}, want ${prev}`);
  await c.ping();
  await c.end();

  const pool = mysql.createPool({ ...cfg, database: db, connectionLimit: 2 });
  for (let i = 0; i < 3; i++) {
    const pc = await pool.getConnection();
    await pc.ping();
    const [r] = await pc.execute(`REPLACE INTO ${table} (stub) VALUES (?)`, ['b']);
    const [[row]] = await pc.query('SELECT LAST_INSERT_ID() AS id');
    check('pool', r.insertId, row.id);
    pc.release();
  }
  await pool.end();

  try {
    await mysql.createConnection({ ...cfg, password: 'wrong' });
    fail('wrong password accepted');
  } catch (e) {
    if (e.errno !== 1045) fail(`wrong password: ${e.errno} ${e.message}`);
  }
  console.log('ok');
})().catch((e) => fail(e.stack || String(e)));
