package model

// ExprOp says what a RowExpr computes.
type ExprOp uint8

// Expression operators. The numbers are part of the replicated log format.
const (
	EVal       ExprOp = 1  // Val
	ECol       ExprOp = 2  // the column Col of the current row
	EEq        ExprOp = 3  // Args[0] = Args[1]
	ENe        ExprOp = 4  // <>, !=
	ELt        ExprOp = 5  // <
	ELe        ExprOp = 6  // <=
	EGt        ExprOp = 7  // >
	EGe        ExprOp = 8  // >=
	ENullEq    ExprOp = 9  // <=>
	EIsNull    ExprOp = 10 // Args[0] IS NULL
	EIsNotNull ExprOp = 11 // Args[0] IS NOT NULL
	EIn        ExprOp = 12 // Args[0] IN (Args[1:])
	ENotIn     ExprOp = 13 // Args[0] NOT IN (Args[1:])
	EBetween   ExprOp = 14 // Args[0] BETWEEN Args[1] AND Args[2]
	ENotBetw   ExprOp = 15 // NOT BETWEEN
	EAnd       ExprOp = 16
	EOr        ExprOp = 17
	ENot       ExprOp = 18
	EAdd       ExprOp = 19
	ESub       ExprOp = 20
	EMul       ExprOp = 21
	EInterval  ExprOp = 22 // Args[0] + INTERVAL Args[1] Unit (Args[1] negated for -)
	ELastID    ExprOp = 23 // LAST_INSERT_ID(Args[0])
	ENeg       ExprOp = 24 // -Args[0]
	EXor       ExprOp = 25
	ELike      ExprOp = 26 // Args[0] LIKE Args[1] ESCAPE Escape
	ENotLike   ExprOp = 27
	// EValues is VALUES(Col) in ON DUPLICATE KEY UPDATE: the value the
	// row being inserted would have had (NULL elsewhere, as in MariaDB).
	EValues ExprOp = 28
	// The catalogue's operators, evaluated over in-memory rows only
	// (information_schema's views, SHOW's outputs, a SELECT without FROM:
	// rowengine.NewEval). The wire layer never puts them in a row-table
	// statement, so no replicated command holds them.
	ECase ExprOp = 29 // Args: condition, result pairs, then the ELSE result
	ECall ExprOp = 30 // the function Unit of Args (rowengine/eval_call.go)
)

// RowExpr is one node of a row-table expression.
type RowExpr struct {
	Op   ExprOp
	Col  string `json:",omitempty"`
	Val  *Value `json:",omitempty"`
	Unit string `json:",omitempty"` // EInterval: SECOND, MINUTE, HOUR, DAY, WEEK
	// Escape is ELike's escape character (0: none).
	Escape byte      `json:",omitempty"`
	Args   []RowExpr `json:",omitempty"`
}

// RowAssign is one assignment of an UPDATE in expression form: Col = Expr,
// or Col = DEFAULT when Default is set.
type RowAssign struct {
	Col     string
	Expr    RowExpr
	Default bool `json:",omitempty"`
}

// RowOrder is one ORDER BY term of an UPDATE or DELETE.
type RowOrder struct {
	Col  string
	Desc bool `json:",omitempty"`
}
