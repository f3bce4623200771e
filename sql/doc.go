// Package sql turns query text into ticketd's small, closed set of plans,
// using the TiDB parser. It is pure: no I/O, no catalog, so it cannot tell
// a ticket table from an unknown one; the wire layer resolves names against
// ticket's state. Plans are immutable and cached by query text (Cache)
// because drivers send the same few strings over and over; a driver that
// interpolates its parameters sends a new text per value instead, and
// Cache.ParseQuery answers those from a template: the plan of an earlier
// text with its values (the integers and plain strings that its WHERE
// compares with, that UPDATE's SET assigns, that INSERT's VALUES lists) as
// '?' placeholders, taken only for a text that differs from it in nothing
// else (template.go).
//
// Parse returns one plan per statement of a query, each one of the types
// in plan.go and nothing else:
//
//   - Select: SELECT of expressions without FROM (LAST_INSERT_ID(),
//     @@variables, @user variables, a few functions such as DATABASE() and
//     VERSION(), arithmetic, and the catalogue's expressions of
//     catalogexpr.go: comparisons, CASE, IF(), CAST AS SIGNED), or of one
//     table's columns (a ticket table or an information_schema view;
//     which, the wire layer decides), or of an inner join of
//     information_schema views (Join, catalogjoin.go), with a WHERE,
//     ORDER BY and LIMIT. The WHERE is kept twice: as `col = value` terms
//     ANDed (Where, for ticket tables; WhereErr when it is more) and whole
//     as a predicate (Filter: for row tables in rowexpr.go's language,
//     FilterErr when it is not; for views in the select list's).
//     COUNT(*), COUNT/MIN/MAX/SUM/AVG(col) are ExprAgg fields; GroupBy
//     (columns) and Distinct are for row tables.
//   - Insert: INSERT, INSERT IGNORE and REPLACE ... VALUES (or the
//     equivalent SET form, or VALUES ()); a VALUES item that is an
//     expression is in Exprs (row tables compute it). ON DUPLICATE KEY
//     UPDATE is OnDup: every assignment, expressions of rowexpr.go with
//     VALUES(col).
//   - Update: any UPDATE t SET ... [WHERE ...] [ORDER BY ...] [LIMIT n]:
//     Assigns (expressions of rowexpr.go, left to right), Filter, ORDER BY
//     and LIMIT.
//   - Delete: DELETE FROM t [WHERE ...] [ORDER BY ...] [LIMIT n], its
//     WHERE as a Filter.
//
// Row-table expressions (rowexpr.go) are the closed set ticket's row
// engine evaluates: columns, literals and '?', + - *, unary minus, =, <>,
// !=, <, <=, >, >=, <=>, IS [NOT] NULL, [NOT] IN (list), [NOT] BETWEEN,
// [NOT] LIKE, AND, OR, XOR, NOT, NOW() and its synonyms (UTC_TIMESTAMP()
// too: ticketd's time zone is UTC), NOW() ± INTERVAL n
// SECOND|MINUTE|HOUR|DAY|WEEK, LAST_INSERT_ID() (the session's value,
// which wire writes in) and LAST_INSERT_ID(expr), DEFAULT, and in ON
// DUPLICATE KEY UPDATE VALUES(col).
//   - Set: SET of session, global and user variables; SET NAMES and SET
//     CHARACTER SET become the variables they set.
//   - Show: the SHOW statements in ShowKind (DESCRIBE t is SHOW COLUMNS).
//   - CreateTable, DropTable, AlterTable (AUTO_INCREMENT and COMMENT
//     options, ADD/DROP of keys; CREATE INDEX and DROP INDEX are
//     AlterTable too), CreateDatabase, DropDatabase, Use: the DDL ticket
//     and row tables need. CreateTable describes the table as written; whether it is a
//     ticket table is ticket's decision (ticket.NewTableDef).
//   - CreateSequence, AlterSequence, DropSequence: MariaDB's sequence DDL
//     (sequence.go); NEXTVAL(s) / NEXT VALUE FOR s, LASTVAL(s) and
//     SETVAL(s, n) are ExprSequence expressions of a Select.
//   - Txn: BEGIN / START TRANSACTION, COMMIT, ROLLBACK.
//   - Empty: a statement that answers OK and does nothing: a query that is
//     only a comment, DO with literals, FLUSH, LOCK and UNLOCK TABLES, and
//     SET TRANSACTION without SESSION or GLOBAL (it is for the next
//     transaction only, and ticketd's transactions are no-ops).
//   - Unsupported: a statement that parsed but is outside ticketd's
//     surface, or holds a construct that is (a '?' where no value goes, DO
//     with an expression); it answers 1235 naming what, and the
//     statements before it in a multi-statement query still run.
//   - Failed: a statement that did not parse after statements that did,
//     in a multi-statement query; it answers its parse error.
//
// Each statement has one plan in one form: the parser cannot know the
// table's kind, and the general form is what every kind is offered. A
// ticket table takes a restriction of it, the ticket form (ticketform.go):
// one id assignment id = [LAST_INSERT_ID](id ± n | value), or VALUES(id) in
// ON DUPLICATE KEY UPDATE, and a WHERE of one `col = value` term; the
// wire layer derives it with Update.TicketForm and Insert.TicketOnDup
// where it runs a statement on a ticket table, and those answer the
// ticket table's refusals (1235 naming ORDER BY, LIMIT, several columns,
// the expression, the WHERE or its several terms). A statement neither form takes does not
// parse, with the ticket form's refusal unless the row form's names the
// construct better (updateRefusal).
//
// Literals and '?' placeholders are Values (ParamCount counts a plan's
// placeholders); Value kinds share model.ValueKind's numbers. Errors are
// *Error, the catalogue's type (package sql/mysqlerr), with MySQL's code,
// SQLSTATE and message: 1064 for syntax, 1065 for an empty query, 1054 and
// 1096 for a column or * without a table, and the codes the grammar raises
// itself.
package sql
