package wire

import (
	"strconv"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/ticketd/ticketd/sql"
	"github.com/ticketd/ticketd/sql/mysqlerr"
	"github.com/ticketd/ticketd/ticket"
	"github.com/ticketd/ticketd/ticket/model"
)

// set runs SET. Assignments are checked first and applied after, so a bad
// one leaves the session unchanged, as MySQL does.
func (s *session) set(p *sql.Set, args []any) (*mysql.Result, error) {
	e := &evalCtx{s: s, args: args}
	var apply []func() error
	for i := range p.Vars {
		v := &p.Vars[i]
		f, err := s.setOne(e, v)
		if err != nil {
			return nil, err
		}
		apply = append(apply, f)
	}
	for _, f := range apply {
		if err := f(); err != nil {
			return nil, err
		}
	}
	return okResult(0, 0), nil
}

func errWrongType(name string) error {
	return mysqlerr.New(mysqlerr.CodeWrongTypeForVar, "Incorrect argument type to variable '%s'", name)
}

func (s *session) setOne(e *evalCtx, v *sql.SetVar) (func() error, error) {
	name := strings.ToLower(v.Name)
	isDefault := v.Value.Kind == sql.ExprValue && v.Value.Value.Kind == sql.ValDefault
	if v.User {
		val, err := e.eval(&v.Value)
		if err != nil {
			return nil, err
		}
		return func() error { s.userVars[name] = val; return nil }, nil
	}
	if name == ticket.VarIncrement || name == ticket.VarOffset {
		return s.setAutoInc(e, v, name, isDefault)
	}
	if name == "timestamp" {
		if v.Scope == sql.ScopeGlobal {
			return nil, mysqlerr.New(mysqlerr.CodeLocalVariable, "Variable 'timestamp' is a SESSION variable and can't be used with SET GLOBAL")
		}
		var val any
		if !isDefault {
			var err error
			if val, err = e.eval(&v.Value); err != nil {
				return nil, err
			}
		}
		return s.setTimestamp(val, isDefault)
	}
	def, ok := s.vars[name]
	if !ok {
		return nil, unknownVariable(name)
	}
	if def.readOnly {
		return nil, mysqlerr.New(mysqlerr.CodeReadOnlyVar, "Variable '%s' is a read only variable", name)
	}
	if v.Scope == sql.ScopeGlobal {
		return nil, unsupported("SET GLOBAL " + name)
	}
	var val any
	if isDefault {
		val = def.value
	} else if v.Value.Kind == sql.ExprIdent {
		val = v.Value.Name
	} else {
		var err error
		if val, err = e.eval(&v.Value); err != nil {
			return nil, err
		}
	}
	if name == "sql_mode" {
		// Only modes ticketd honours can be set (rowengine.go).
		text, ok := val.(string)
		if !ok {
			return nil, unsupported("sql_mode as a number")
		}
		norm, err := normalizeMode(text)
		if err != nil {
			return nil, err
		}
		val = norm
	}
	if name == "autocommit" {
		on, ok := boolValue(val)
		if !ok {
			t, _ := textValue(val)
			return nil, mysqlerr.New(mysqlerr.CodeWrongValueForVar, "Variable 'autocommit' can't be set to the value of '%s'", t)
		}
		return func() error {
			if on {
				// SET autocommit = 1 commits an open transaction.
				s.endTxn()
				s.conn.SetStatus(mysql.SERVER_STATUS_AUTOCOMMIT)
			} else {
				s.conn.UnsetStatus(mysql.SERVER_STATUS_AUTOCOMMIT)
			}
			return nil
		}, nil
	}
	// Integer variables keep integer values so that reads parse as numbers.
	if _, isInt := def.value.(int64); isInt {
		if b, ok := boolValue(val); ok {
			if b {
				val = int64(1)
			} else {
				val = int64(0)
			}
		} else if n, ok := toInt(val); ok {
			val = n
		}
	}
	if name == "names" {
		cs, _ := textValue(val)
		return func() error {
			for _, n := range []string{"character_set_client", "character_set_connection", "character_set_results"} {
				s.setVars[n] = cs
			}
			return nil
		}, nil
	}
	return func() error { s.setVars[name] = val; return nil }, nil
}

// boolValue reads ON/OFF/TRUE/FALSE/1/0.
func boolValue(v any) (bool, bool) {
	switch x := v.(type) {
	case int64:
		return x != 0, x == 0 || x == 1
	case uint64:
		return x != 0, x <= 1
	case string:
		switch strings.ToUpper(x) {
		case "ON", "TRUE", "1", "YES":
			return true, true
		case "OFF", "FALSE", "0", "NO":
			return false, true
		}
	}
	return false, false
}

// setAutoInc sets auto_increment_increment/offset: session values live in
// the session, global values are replicated through Raft so every node
// and every restart sees them. Values are clamped to 1..65535 with warning
// 1292; non-integers are error 1232, as in MySQL.
func (s *session) setAutoInc(e *evalCtx, v *sql.SetVar, name string, isDefault bool) (func() error, error) {
	var n int64
	text := ""
	switch {
	case isDefault && v.Scope == sql.ScopeGlobal:
		n = 1
	case isDefault:
		n = int64(s.srv.svc.Global(name, 1))
	default:
		val, err := e.eval(&v.Value)
		if err != nil {
			return nil, err
		}
		switch x := val.(type) {
		case int64:
			n = x
		case uint64:
			n, text = 1<<62, strconv.FormatUint(x, 10)
		default:
			return nil, errWrongType(name)
		}
	}
	clamped, w := ticket.ClampAutoIncVar(name, n, text)
	return func() error {
		if w != nil {
			s.warnings = append(s.warnings, *w)
		}
		if v.Scope == sql.ScopeGlobal {
			_, err := s.exec(&model.Command{Op: model.OpSetGlobal, Name: name, Value: clamped})
			return err
		}
		if name == ticket.VarIncrement {
			s.ts.Increment = clamped
		} else {
			s.ts.Offset = clamped
		}
		return nil
	}, nil
}
