package wire

import (
	_ "embed"
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
	if name == "character_set_connection" || name == "collation_connection" {
		apply, err := s.setConnection(name, val)
		if err == nil && v.NamesCharset != nil {
			err = s.namesCollation(e, v.NamesCharset, val)
		}
		return apply, err
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

// setConnection sets character_set_connection or collation_connection,
// and with it the other, as MariaDB does: a character set brings its
// default collation (so SET NAMES without COLLATE, which sets the
// character set, resets the collation), a collation its character set.
// Names are lowercased and utf8 is utf8mb3, as MariaDB 10.11 reports them;
// an unknown one is MariaDB's error 1115 or 1273 (collationCharset knows
// MariaDB's collations). A collation is taken whether or not ticketd
// compares by it (statements that would are refused there).
func (s *session) setConnection(name string, val any) (func() error, error) {
	var cs, coll string
	if name == "character_set_connection" {
		text := charsetName(val)
		def, ok := defaultCollations[text]
		if !ok {
			return nil, mysqlerr.New(mysql.ER_UNKNOWN_CHARACTER_SET, "Unknown character set: '%s'", text)
		}
		cs, coll = text, def
	} else {
		text := collationName(val)
		var ok bool
		if cs, ok = collationCharset(text); !ok {
			return nil, mysqlerr.New(mysql.ER_UNKNOWN_COLLATION, "Unknown collation: '%s'", text)
		}
		coll = text
	}
	return func() error {
		s.setVars["character_set_connection"] = cs
		s.setVars["collation_connection"] = coll
		return nil
	}, nil
}

// namesCollation refuses SET NAMES cs COLLATE coll where coll is not one
// of cs's collations, as MariaDB does (1253); setConnection has already
// refused an unknown cs or coll.
func (s *session) namesCollation(e *evalCtx, csExpr *sql.Expr, coll any) error {
	var cs any = csExpr.Name
	if csExpr.Kind != sql.ExprIdent {
		var err error
		if cs, err = e.eval(csExpr); err != nil {
			return err
		}
	}
	csText, collText := charsetName(cs), collationName(coll)
	if of, _ := collationCharset(collText); of == csText {
		return nil
	}
	return mysqlerr.New(mysqlerr.CodeCollationCharset, "COLLATION '%s' is not valid for CHARACTER SET '%s'", collText, csText)
}

// charsetName is a character set's name as MariaDB 10.11 reports it:
// lower case, utf8 as utf8mb3.
func charsetName(v any) string {
	text, _ := textValue(v)
	if text = strings.ToLower(text); text == "utf8" {
		return "utf8mb3"
	}
	return text
}

// collationName is a collation's name as MariaDB 10.11 reports it: lower
// case, utf8_... as utf8mb3_....
func collationName(v any) string {
	text, _ := textValue(v)
	text = strings.ToLower(text)
	if rest, ok := strings.CutPrefix(text, "utf8_"); ok {
		return "utf8mb3_" + rest
	}
	return text
}

// collations is MariaDB 10.11's information_schema.COLLATIONS
// (collations.txt): each collation's character set, and the UCA 14.0.0
// collations (uca1400_*), listed without one, which MariaDB takes with
// the name of a Unicode character set before them (utf8mb4_uca1400_ai_ci).
// TestDifferentialNames sets each one against MariaDB.
var collations = loadCollations(collationsText)

// collationTable is MariaDB's collations by name: charsets holds each
// collation's character set, uca the uca1400 names.
type collationTable struct {
	charsets map[string]string
	uca      map[string]bool
}

// loadCollations reads collations.txt: "name charset" a line, or a
// uca1400 name alone.
func loadCollations(text string) collationTable {
	c := collationTable{charsets: map[string]string{}, uca: map[string]bool{}}
	for line := range strings.Lines(text) {
		coll, cs, ok := strings.Cut(strings.TrimSpace(line), " ")
		if ok {
			c.charsets[coll] = cs
		} else if coll != "" {
			c.uca[coll] = true
		}
	}
	return c
}

// ucaCharsets are the character sets that take the uca1400 collations.
var ucaCharsets = map[string]bool{"utf8mb3": true, "utf8mb4": true, "ucs2": true, "utf16": true, "utf32": true}

// collationCharset is the character set of the collation named (lower
// case, utf8 spelled utf8mb3), false for a name MariaDB does not know.
func collationCharset(name string) (string, bool) {
	if cs, ok := collations.charsets[name]; ok {
		return cs, true
	}
	cs, uca, _ := strings.Cut(name, "_")
	return cs, ucaCharsets[cs] && collations.uca[uca]
}

//go:embed collations.txt
var collationsText string

// defaultCollations is MariaDB 10.11's default collation of each character
// set it has (SHOW CHARACTER SET; TestDifferentialNames compares them).
var defaultCollations = map[string]string{
	"armscii8": "armscii8_general_ci", "ascii": "ascii_general_ci", "big5": "big5_chinese_ci",
	"binary": "binary", "cp1250": "cp1250_general_ci", "cp1251": "cp1251_general_ci",
	"cp1256": "cp1256_general_ci", "cp1257": "cp1257_general_ci", "cp850": "cp850_general_ci",
	"cp852": "cp852_general_ci", "cp866": "cp866_general_ci", "cp932": "cp932_japanese_ci",
	"dec8": "dec8_swedish_ci", "eucjpms": "eucjpms_japanese_ci", "euckr": "euckr_korean_ci",
	"gb2312": "gb2312_chinese_ci", "gbk": "gbk_chinese_ci", "geostd8": "geostd8_general_ci",
	"greek": "greek_general_ci", "hebrew": "hebrew_general_ci", "hp8": "hp8_english_ci",
	"keybcs2": "keybcs2_general_ci", "koi8r": "koi8r_general_ci", "koi8u": "koi8u_general_ci",
	"latin1": "latin1_swedish_ci", "latin2": "latin2_general_ci", "latin5": "latin5_turkish_ci",
	"latin7": "latin7_general_ci", "macce": "macce_general_ci", "macroman": "macroman_general_ci",
	"sjis": "sjis_japanese_ci", "swe7": "swe7_swedish_ci", "tis620": "tis620_thai_ci",
	"ucs2": "ucs2_general_ci", "ujis": "ujis_japanese_ci", "utf16": "utf16_general_ci",
	"utf16le": "utf16le_general_ci", "utf32": "utf32_general_ci", "utf8mb3": "utf8mb3_general_ci",
	"utf8mb4": "utf8mb4_general_ci",
}
