package mysqlerr

import "github.com/go-mysql-org/go-mysql/mysql"

// Codes of the row tables (Leaf, Tinyid, UidGenerator schemas).
const (
	CodeDupFieldName         uint16 = mysql.ER_DUP_FIELDNAME
	CodeInvalidDefault       uint16 = mysql.ER_INVALID_DEFAULT
	CodeMultiplePK           uint16 = mysql.ER_MULTIPLE_PRI_KEY
	CodeTableMustHaveColumns uint16 = mysql.ER_TABLE_MUST_HAVE_COLUMNS
	CodeRecordFileFull       uint16 = mysql.ER_RECORD_FILE_FULL  // a row table at ticket.MaxRows
	CodeValueOutOfRange      uint16 = mysql.ER_DATA_OUT_OF_RANGE // BIGINT arithmetic overflow
)
