package mysqlerr

// MariaDB's sequence errors (10.3 and later; go-mysql lists none of
// them). The three "not found" kinds carry SQLSTATE 42S02, as MariaDB
// sends them.
const (
	CodeSequenceRunOut      uint16 = 4084 // ER_SEQUENCE_RUN_OUT
	CodeSequenceInvalidData uint16 = 4085 // ER_SEQUENCE_INVALID_DATA
	CodeNotSequence         uint16 = 4089 // ER_NOT_SEQUENCE
	CodeNotSequence2        uint16 = 4090 // ER_NOT_SEQUENCE2 (DROP SEQUENCE of a table)
	CodeUnknownSequence     uint16 = 4091 // ER_UNKNOWN_SEQUENCES
)

const stateNoTable = "42S02"

// SequenceRunOut is NEXTVAL's error on a sequence past its bound without CYCLE.
func SequenceRunOut(db, name string) *Error {
	return New(CodeSequenceRunOut, "Sequence '%s.%s' has run out", db, name)
}

// SequenceInvalidData is CREATE or ALTER SEQUENCE's error for options
// that contradict each other.
func SequenceInvalidData(db, name string) *Error {
	return New(CodeSequenceInvalidData, "Sequence '%s.%s' has out of range value for options", db, name)
}

// NotSequence is the error of a sequence function or statement naming a
// table that is not a sequence; drop selects DROP SEQUENCE's code.
func NotSequence(db, name string, drop bool) *Error {
	code := CodeNotSequence
	if drop {
		code = CodeNotSequence2
	}
	return &Error{Code: code, State: stateNoTable, Message: "'" + db + "." + name + "' is not a SEQUENCE"}
}

// UnknownSequence is the error for a sequence that does not exist; name
// is quoted as MariaDB does (just the name for NEXTVAL and ALTER, db.name
// for DROP).
func UnknownSequence(name string) *Error {
	return &Error{Code: CodeUnknownSequence, State: stateNoTable, Message: "Unknown SEQUENCE: '" + name + "'"}
}
