// Package schemes owns faithful Go clients of the ID schemes that sit on
// top of a MySQL row or sequence, and the workloads that run them against
// any MySQL-protocol server: MariaDB as the reference, ticketd single
// nodes and clusters as the system under test (issue 12).
//
// Each client sends the statements its source sends, in the same order
// and on one dedicated connection, with the driver set up as the scheme's
// Java stack sets up Connector/J (client-side parameter interpolation,
// autocommit toggled with SET autocommit):
//
//   - Leaf (Meituan Leaf-segment, MyBatis): SET autocommit=0; UPDATE
//     leaf_alloc SET max_id = max_id + step (or + ?) WHERE biz_tag = ?;
//     SELECT biz_tag, max_id, step ...; COMMIT; SET autocommit=1. It owns
//     (max_id - step, max_id].
//   - Tinyid (Didi, Spring @Transactional(READ_COMMITTED) over JdbcTemplate):
//     SELECT the row, then the optimistic UPDATE ... WHERE id=? AND
//     max_id=? AND version=? AND biz_type=?; one affected row means it owns
//     (max_id, max_id + step], none means retry (up to Constants.RETRY).
//   - UidGenerator (Baidu, DisposableWorkerIdAssigner): INSERT INTO
//     WORKER_NODE, the worker id is the generated key; then the SELECT by
//     host and port.
//   - Sequence callers (MariaDB sequences): SELECT NEXTVAL(s) and SELECT
//     NEXT VALUE FOR s, on a sequence with CACHE 1000 or NOCACHE.
//   - Flickr's ticket (the baseline ticketd serves today): REPLACE INTO
//     Tickets64 (stub) VALUES ('a'), SELECT LAST_INSERT_ID().
//
// Run drives many such clients against a Target (one or more servers,
// given as DSNs) and records every allocation, as the range of ids it
// handed out, in integration/history histories; history.Check then
// decides whether the server kept the scheme's promise (no id twice,
// strictly increasing in real time). Setup creates the schemes' tables
// with their published DDL.
package schemes
