// Package mysqlerr is the catalogue of the MySQL errors ticketd answers
// with: one named code for each MySQL error number used anywhere in
// ticketd, the SQLSTATE that goes with it, the one error type that sql and
// ticket both return, and constructors for the messages that more than one
// place builds. A client sees the code, the SQLSTATE and the message, so
// all three must stay byte-identical to what MariaDB answers (the
// differential test in integration checks them).
//
// The numbers come from go-mysql's mysql package (its ER_* constants and
// its MySQLState table), which already mirrors the server's list; this
// package only names the subset ticketd uses and records where ticketd's
// SQLSTATE differs from that table (MariaDB's, not MySQL's).
//
// Names: Code* are error numbers, Err* are error values, and the
// constructors are named after the condition they report.
package mysqlerr

import (
	"fmt"

	"github.com/go-mysql-org/go-mysql/mysql"
)

// MySQL error numbers ticketd answers with, in numeric order. Each is
// go-mysql's constant of the same error (whose name is in the comment),
// except for the three that go-mysql does not list.
const (
	// CodeAutoincRange is MariaDB's storage-engine error for an
	// AUTO_INCREMENT column that has handed out its largest value
	// (HA_ERR_AUTOINC_ERANGE); MySQL answers 1467 instead.
	CodeAutoincRange uint16 = 167

	CodeDBCreateExists          uint16 = mysql.ER_DB_CREATE_EXISTS
	CodeDBDropExists            uint16 = mysql.ER_DB_DROP_EXISTS
	CodeConCount                uint16 = mysql.ER_CON_COUNT_ERROR // --max-connections reached
	CodeHandshake               uint16 = mysql.ER_HANDSHAKE_ERROR
	CodeDBAccessDenied          uint16 = mysql.ER_DBACCESS_DENIED_ERROR
	CodeAccessDenied            uint16 = mysql.ER_ACCESS_DENIED_ERROR
	CodeNoDB                    uint16 = mysql.ER_NO_DB_ERROR
	CodeUnknownCommand          uint16 = mysql.ER_UNKNOWN_COM_ERROR
	CodeBadNull                 uint16 = mysql.ER_BAD_NULL_ERROR
	CodeBadDB                   uint16 = mysql.ER_BAD_DB_ERROR
	CodeTableExists             uint16 = mysql.ER_TABLE_EXISTS_ERROR
	CodeBadTable                uint16 = mysql.ER_BAD_TABLE_ERROR // DROP of an unknown table
	CodeBadField                uint16 = mysql.ER_BAD_FIELD_ERROR
	CodeDupEntry                uint16 = mysql.ER_DUP_ENTRY
	CodeWrongFieldSpec          uint16 = mysql.ER_WRONG_FIELD_SPEC
	CodeParse                   uint16 = mysql.ER_PARSE_ERROR
	CodeEmptyQuery              uint16 = mysql.ER_EMPTY_QUERY
	CodeKeyColumnMissing        uint16 = mysql.ER_KEY_COLUMN_DOES_NOT_EXITS
	CodeWrongAutoKey            uint16 = mysql.ER_WRONG_AUTO_KEY
	CodeNoTablesUsed            uint16 = mysql.ER_NO_TABLES_USED
	CodeUnknown                 uint16 = mysql.ER_UNKNOWN_ERROR
	CodeFieldSpecifiedTwice     uint16 = mysql.ER_FIELD_SPECIFIED_TWICE
	CodeHostIsBlocked           uint16 = mysql.ER_HOST_IS_BLOCKED // too many failed logins from a host
	CodeWrongValueCount         uint16 = mysql.ER_WRONG_VALUE_COUNT_ON_ROW
	CodeNoSuchGrant             uint16 = mysql.ER_NONEXISTING_GRANT
	CodeTableAccessDenied       uint16 = mysql.ER_TABLEACCESS_DENIED_ERROR
	CodeNoSuchTable             uint16 = mysql.ER_NO_SUCH_TABLE
	CodePacketTooLarge          uint16 = mysql.ER_NET_PACKET_TOO_LARGE
	CodeUnknownSystemVar        uint16 = mysql.ER_UNKNOWN_SYSTEM_VARIABLE
	CodeIncompleteRollback      uint16 = mysql.ER_WARNING_NOT_COMPLETE_ROLLBACK
	CodeSpecificAccessDenied    uint16 = mysql.ER_SPECIFIC_ACCESS_DENIED_ERROR
	CodeWrongValueForVar        uint16 = mysql.ER_WRONG_VALUE_FOR_VAR
	CodeWrongTypeForVar         uint16 = mysql.ER_WRONG_TYPE_FOR_VAR
	CodeNotSupported            uint16 = mysql.ER_NOT_SUPPORTED_YET
	CodeReadOnlyVar             uint16 = mysql.ER_INCORRECT_GLOBAL_LOCAL_VAR
	CodeUnknownStmtHandler      uint16 = mysql.ER_UNKNOWN_STMT_HANDLER
	CodeDataOutOfRange          uint16 = mysql.ER_WARN_DATA_OUT_OF_RANGE
	CodeReadOnly                uint16 = mysql.ER_OPTION_PREVENTS_STATEMENT // --read-only's error; ticketd's "no leader with a quorum"
	CodeDiskFull                uint16 = mysql.ER_DISK_FULL                 // a replica's Raft log cannot be written: no space
	CodeTruncatedWrongValue     uint16 = mysql.ER_TRUNCATED_WRONG_VALUE     // a clamped variable (a warning)
	CodeNoDefault               uint16 = mysql.ER_NO_DEFAULT_FOR_FIELD
	CodeIncorrectValue          uint16 = mysql.ER_TRUNCATED_WRONG_VALUE_FOR_FIELD
	CodeDataTooLong             uint16 = mysql.ER_DATA_TOO_LONG
	CodeMalformedPacket         uint16 = mysql.ER_MALFORMED_PACKET
	CodeWrongArguments          uint16 = mysql.ER_WRONG_ARGUMENTS            // a COM_STMT_EXECUTE parameter that is no value of its type
	CodeTooBigField             uint16 = mysql.ER_TOO_BIG_FIELDLENGTH        // CHAR/VARCHAR longer than a row holds
	CodeTooBigRow               uint16 = mysql.ER_TOO_BIG_ROWSIZE            // columns longer together than a row holds
	CodeCollationCharset        uint16 = mysql.ER_COLLATION_CHARSET_MISMATCH // COLLATE of another character set
	CodeCollationMix2           uint16 = mysql.ER_CANT_AGGREGATE_2COLLATIONS // "Illegal mix of collations" of two operands
	CodeCollationMix3           uint16 = mysql.ER_CANT_AGGREGATE_3COLLATIONS // ... of three
	CodeCollationMixN           uint16 = mysql.ER_CANT_AGGREGATE_NCOLLATIONS // ... of more
	CodeConflictingDecl         uint16 = mysql.ER_CONFLICTING_DECLARATIONS   // two CHARACTER SETs or COLLATEs that differ
	CodeSecureTransportRequired uint16 = 3159                                // MySQL 8's ER_SECURE_TRANSPORT_REQUIRED
	CodeClientTimeout           uint16 = 4031                                // MySQL 8's ER_CLIENT_INTERACTION_TIMEOUT
)

// SQLSTATEs that ticketd sets by hand rather than through State.
const (
	// StateGeneral is the SQLSTATE of errors without a more specific one.
	StateGeneral = mysql.DEFAULT_MYSQL_STATE
	// StateConnection is the SQLSTATE of connection-level failures
	// (malformed or oversized packets), whichever their code.
	StateConnection = "08S01"
)

// stateOverrides are the codes whose SQLSTATE, as MariaDB sends it,
// differs from go-mysql's table (which has none for these).
var stateOverrides = map[uint16]string{
	CodeAutoincRange:   "22003",
	CodeIncorrectValue: "22007",
}

// State is the SQLSTATE ticketd sends with code.
func State(code uint16) string {
	if s, ok := stateOverrides[code]; ok {
		return s
	}
	if s, ok := mysql.MySQLState[code]; ok {
		return s
	}
	return StateGeneral
}

// Error is a statement error as a client receives it: MySQL's code,
// SQLSTATE and message. sql and ticket both return it (as sql.Error and
// model.Error), so the wire layer turns every statement error into an ERR
// packet in one place. ticket's errors are deterministic outcomes of a
// command, the same on every replica, and travel in forwarded results.
type Error struct {
	Code    uint16
	State   string // SQLSTATE; "" means HY000
	Message string
}

func (e *Error) Error() string {
	return fmt.Sprintf("ERROR %d (%s): %s", e.Code, e.SQLState(), e.Message)
}

// SQLState is the error's SQLSTATE, HY000 when none was set.
func (e *Error) SQLState() string {
	if e.State == "" {
		return StateGeneral
	}
	return e.State
}

// New builds an Error with code's SQLSTATE and a formatted message.
func New(code uint16, format string, args ...any) *Error {
	return &Error{Code: code, State: State(code), Message: fmt.Sprintf(format, args...)}
}

// Messages that several places build. Each is MariaDB's text.

// UnknownColumn is 1054 for a column that a clause (where: 'field list',
// 'INSERT INTO', 'SET', 'WHERE', ...) names but the table lacks.
func UnknownColumn(col, where string) *Error {
	return New(CodeBadField, "Unknown column '%s' in '%s'", col, where)
}

// NoSuchTable is 1146.
func NoSuchTable(db, table string) *Error {
	return New(CodeNoSuchTable, "Table '%s.%s' doesn't exist", db, table)
}

// UnknownDB is 1049.
func UnknownDB(db string) *Error {
	return New(CodeBadDB, "Unknown database '%s'", db)
}

// NotSupported is 1235 naming what ticketd does not implement.
func NotSupported(what string) *Error {
	return New(CodeNotSupported, "This version of ticketd doesn't yet support '%s'", what)
}

// TableAccessDenied is 1142: a role without the privilege of command
// (DROP, CREATE, ALTER, INSERT, ...) on table.
func TableAccessDenied(command, user, host, table string) *Error {
	return New(CodeTableAccessDenied, "%s command denied to user '%s'@'%s' for table '%s'", command, user, host, table)
}

// DBAccessDenied is 1044: a role without a database-level privilege.
func DBAccessDenied(user, host, db string) *Error {
	return New(CodeDBAccessDenied, "Access denied for user '%s'@'%s' to database '%s'", user, host, db)
}

// SpecificAccessDenied is 1227: a role without a global privilege (SET
// GLOBAL needs SUPER or SYSTEM_VARIABLES_ADMIN).
func SpecificAccessDenied(privileges string) *Error {
	return New(CodeSpecificAccessDenied, "Access denied; you need (at least one of) the %s privilege(s) for this operation", privileges)
}

// OutOfRange is 1264 for a value outside the column's type.
func OutOfRange(col string, row int) *Error {
	return New(CodeDataOutOfRange, "Out of range value for column '%s' at row %d", col, row)
}

// AutoincExhausted is 167: the AUTO_INCREMENT column has no value left.
func AutoincExhausted(col string, row int) *Error {
	return New(CodeAutoincRange, "Out of range value for column '%s' at row %d", col, row)
}

// NoDefault is 1364 for a NOT NULL column without a default left out.
func NoDefault(col string) *Error {
	return New(CodeNoDefault, "Field '%s' doesn't have a default value", col)
}

// BadNull is 1048 for NULL given to a NOT NULL column.
func BadNull(col string) *Error {
	return New(CodeBadNull, "Column '%s' cannot be null", col)
}

// UnknownSystemVar is 1193.
func UnknownSystemVar(name string) *Error {
	return New(CodeUnknownSystemVar, "Unknown system variable '%s'", name)
}

// NoTablesUsed is 1096: SELECT * without FROM.
func NoTablesUsed() *Error {
	return New(CodeNoTablesUsed, "No tables used")
}

// Syntax is 1064 with MariaDB's wording; near is the text from the
// offending token on (the caller shortens it).
func Syntax(near string, line int) *Error {
	return New(CodeParse, "You have an error in your SQL syntax; check the manual that "+
		"corresponds to your MySQL server version for the right syntax to use near '%s' at line %d",
		near, line)
}

// MalformedPacket is 1835 for a client packet that does not decode; it
// is a connection-level failure, so its SQLSTATE is StateConnection.
func MalformedPacket() *Error {
	return &Error{Code: CodeMalformedPacket, State: StateConnection, Message: "Malformed communication packet."}
}

// SyntaxBecause is 1064 with ticketd's own reason in place of MariaDB's
// "check the manual" text, for statements MariaDB would have parsed.
func SyntaxBecause(reason string) *Error {
	return New(CodeParse, "You have an error in your SQL syntax; %s", reason)
}
