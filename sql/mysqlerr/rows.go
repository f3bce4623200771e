package mysqlerr

import "github.com/go-mysql-org/go-mysql/mysql"

// Codes of the row tables (Leaf, Tinyid, UidGenerator schemas).
const (
	CodeDupFieldName         uint16 = mysql.ER_DUP_FIELDNAME
	CodeInvalidDefault       uint16 = mysql.ER_INVALID_DEFAULT
	CodeMultiplePK           uint16 = mysql.ER_MULTIPLE_PRI_KEY
	CodeTableMustHaveColumns uint16 = mysql.ER_TABLE_MUST_HAVE_COLUMNS
	CodeValueOutOfRange      uint16 = mysql.ER_DATA_OUT_OF_RANGE // BIGINT arithmetic overflow
	CodeDupKeyName           uint16 = mysql.ER_DUP_KEYNAME       // ADD of a key whose name is taken
	CodeCantDropKey          uint16 = mysql.ER_CANT_DROP_FIELD_OR_KEY
	CodeInvalidUseOfNull     uint16 = mysql.ER_INVALID_USE_OF_NULL // PRIMARY KEY over a column holding NULL
	CodeWrongNameForIndex    uint16 = mysql.ER_WRONG_NAME_FOR_INDEX
)

// Codes of the row engine's conversions (ticket/rowengine/convert.go).
const (
	CodeDataTruncated uint16 = mysql.WARN_DATA_TRUNCATED       // 1265: a value cut to fit its column
	CodeInvalidGroup  uint16 = mysql.ER_INVALID_GROUP_FUNC_USE // 1111: an aggregate in WHERE or SET
)

// CodeLocalVariable is 1228: SET GLOBAL of a session-only variable.
const CodeLocalVariable uint16 = mysql.ER_LOCAL_VARIABLE
