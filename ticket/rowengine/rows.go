package rowengine

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ticketd/ticketd/sql/mysqlerr"
	"github.com/ticketd/ticketd/ticket/model"
)

// Row tables are the tables of the ID schemes around Flickr's: Meituan
// Leaf-segment's leaf_alloc, Didi Tinyid's tiny_id_info, Baidu
// UidGenerator's WORKER_NODE, and any user table of the same column
// kinds. Any table that is not a ticket table (one integer id and at most
// one stub) but has only integer, CHAR/VARCHAR and DATE/DATETIME/TIMESTAMP
// columns is one. Its rows are stored per row by clustering key, with an
// index per other key (store.go); every statement on one is a single
// replicated command that applies entirely or not at all (InnoDB's
// statement atomicity, which is what the schemes were written against).
// There is no row cap: a row costs memory on every replica (about 200
// bytes for a WORKER_NODE row, see the README), which is the bound.

// Time formats of the canonical Datum text.
const (
	dateFormat     = "2006-01-02"
	dateTimeFormat = "2006-01-02 15:04:05"
)

// NewRowsDef builds the definition of a row table from s, or the error
// MariaDB gives for it; 1235 names what ticketd does not hold.
func NewRowsDef(s *model.TableSpec, tc model.Collation, colls []model.Collation) (*model.TableDef, error) {
	// A row table answers as InnoDB does (DESIGN §4a), whatever ENGINE it
	// was created with, and says so.
	d := &model.TableDef{DB: s.DB, Name: s.Name, Engine: "InnoDB", Comment: s.Comment}
	rd := &model.RowsDef{Collation: tc}
	index := map[string]int{}
	for i := range s.Columns {
		c := &s.Columns[i]
		lname := strings.ToLower(c.Name)
		if _, dup := index[lname]; dup {
			return nil, mysqlerr.New(mysqlerr.CodeDupFieldName, "Duplicate column name '%s'", c.Name)
		}
		index[lname] = i
		col := model.RowCol{Name: c.Name, NotNull: c.NotNull || c.PrimaryKey, AutoInc: c.AutoInc, Comment: c.Comment,
			DefaultNow: c.DefaultNow, OnUpdateNow: c.OnUpdateNow}
		switch k, isInt := model.IntKindOf(c.Type); {
		case isInt:
			col.Kind = model.ColInt
			col.Int = model.IntType{Kind: k, Unsigned: c.Unsigned, Width: c.Width}
			if col.Int.Width == 0 {
				col.Int.Width = model.DefaultWidth(k, c.Unsigned)
			}
			col.Type = col.Int.SQL()
		case c.Type == "char" || c.Type == "varchar":
			col.Kind = model.ColString
			col.Len = c.Width
			if c.Type == "char" && col.Len == 0 {
				col.Len = 1
			}
			if c.Type == "varchar" && c.Width <= 0 {
				return nil, mysqlerr.Syntax("", 1)
			}
			col.Type = c.Type + "(" + strconv.Itoa(col.Len) + ")"
			if colls[i] != tc {
				col.Collation = colls[i]
			}
		case c.Type == "date":
			col.Kind, col.Type = model.ColDate, "date"
		case c.Type == "datetime":
			col.Kind, col.Type = model.ColDateTime, "datetime"
		case c.Type == "timestamp":
			col.Kind, col.Type = model.ColTimestamp, "timestamp"
		default:
			return nil, mysqlerr.NotSupported("column type " + c.Type)
		}
		if c.AutoInc {
			if col.Kind != model.ColInt {
				return nil, mysqlerr.New(mysqlerr.CodeWrongFieldSpec, "Incorrect column specifier for column '%s'", c.Name)
			}
			if d.AutoInc {
				return nil, mysqlerr.New(mysqlerr.CodeWrongAutoKey, "Incorrect table definition; there can be only one auto column and it must be defined as a key")
			}
			d.AutoInc, d.IDCol, d.IDType, d.IDNotNull = true, c.Name, col.Int, true
			col.NotNull = true
		}
		if (c.DefaultNow || c.OnUpdateNow) && col.Kind != model.ColDateTime && col.Kind != model.ColTimestamp {
			return nil, mysqlerr.New(mysqlerr.CodeInvalidDefault, "Invalid default value for '%s'", c.Name)
		}
		if c.HasDefault && !c.DefaultNow {
			if c.AutoInc {
				return nil, mysqlerr.New(mysqlerr.CodeInvalidDefault, "Invalid default value for '%s'", c.Name)
			}
			dv, e := convert(&col, c.Default, time.Time{}, 0, "", "")
			if (col.Kind == model.ColDate || col.Kind == model.ColDateTime || col.Kind == model.ColTimestamp) && c.Default.Kind != model.ValNull && zeroDate(model.ValueText(c.Default)) {
				// MariaDB takes it without NO_ZERO_DATE; ticketd holds no
				// zero date.
				return nil, mysqlerr.NotSupported("zero dates")
			}
			if e != nil || (dv.Null && col.NotNull) || (col.Kind == model.ColString && rd.CollOf(&col).MB3() && wideAt(dv.S) >= 0) {
				return nil, mysqlerr.New(mysqlerr.CodeInvalidDefault, "Invalid default value for '%s'", c.Name)
			}
			col.HasDefault, col.Default = true, dv
		}
		rd.Cols = append(rd.Cols, col)
	}
	if len(rd.Cols) == 0 {
		return nil, mysqlerr.New(mysqlerr.CodeTableMustHaveColumns, "A table must have at least 1 column")
	}
	addKey := func(k model.RowKey) error {
		for _, c := range k.Cols {
			if k.Primary {
				rd.Cols[c].NotNull = true
			}
		}
		if k.Primary {
			for _, old := range rd.Keys {
				if old.Primary {
					return mysqlerr.New(mysqlerr.CodeMultiplePK, "Multiple primary key defined")
				}
			}
			// MariaDB lists the primary key first.
			rd.Keys = append([]model.RowKey{k}, rd.Keys...)
			return nil
		}
		rd.Keys = append(rd.Keys, k)
		return nil
	}
	for i := range s.Columns {
		c := &s.Columns[i]
		if c.PrimaryKey {
			if err := addKey(model.RowKey{Name: model.PrimaryKey, Primary: true, Unique: true, Cols: []int{i}}); err != nil {
				return nil, err
			}
		} else if c.Unique {
			if err := addKey(model.RowKey{Name: c.Name, Unique: true, Cols: []int{i}}); err != nil {
				return nil, err
			}
		}
	}
	for _, k := range s.Keys {
		rk := model.RowKey{Name: k.Name, Primary: k.Primary, Unique: k.Unique || k.Primary}
		for _, name := range k.Columns {
			j, ok := index[strings.ToLower(name)]
			if !ok {
				return nil, mysqlerr.New(mysqlerr.CodeKeyColumnMissing, "Key column '%s' doesn't exist in table", name)
			}
			rk.Cols = append(rk.Cols, j)
		}
		if rk.Primary {
			rk.Name = model.PrimaryKey
		} else if rk.Name == "" && len(rk.Cols) > 0 {
			rk.Name = rd.Cols[rk.Cols[0]].Name
		}
		if err := addKey(rk); err != nil {
			return nil, err
		}
	}
	if d.AutoInc {
		keyed := false
		for _, k := range rd.Keys {
			if strings.EqualFold(rd.Cols[k.Cols[0]].Name, d.IDCol) {
				keyed = true
			}
		}
		if !keyed {
			return nil, mysqlerr.New(mysqlerr.CodeWrongAutoKey, "Incorrect table definition; there can be only one auto column and it must be defined as a key")
		}
	}
	d.Rows = rd
	return d, nil
}

// PrimaryKeyOf is r's clustering key (store.go), which compares as
// the key does; ok is false for a table clustered by hidden row id.
func PrimaryKeyOf(rd *model.RowsDef, r []model.Datum) (string, bool) {
	c := ClusterKey(rd)
	if c < 0 || len(r) != len(rd.Cols) {
		return "", false
	}
	k, _ := IndexKey(rd, c, r)
	return k, true
}

// colError names a column as MariaDB's conversion messages do.
func colName(db, table, col string) string {
	return "`" + db + "`.`" + table + "`.`" + col + "`"
}

// convert turns a statement's value into col's stored form, or the strict
// mode error MariaDB answers.
func convert(col *model.RowCol, v model.Value, now time.Time, row int, db, table string) (model.Datum, *model.Error) {
	switch v.Kind {
	case model.ValNull:
		return model.Datum{Null: true}, nil
	case model.ValNow:
		switch col.Kind {
		case model.ColDate:
			return model.Datum{S: now.UTC().Format(dateFormat)}, nil
		case model.ColDateTime, model.ColTimestamp, model.ColString:
			return checkLen(col, now.UTC().Format(dateTimeFormat), row)
		default:
			return intDatum(col, new(big).setString(now.UTC().Format("20060102150405")), row)
		}
	}
	text := v.Str
	switch v.Kind {
	case model.ValInt:
		text = strconv.FormatInt(v.Int, 10)
	case model.ValUint:
		text = strconv.FormatUint(v.Uint, 10)
	}
	switch col.Kind {
	case model.ColInt:
		var n big
		switch v.Kind {
		case model.ValInt:
			n.setInt(v.Int)
		case model.ValUint:
			n.setUint(v.Uint)
		default:
			if !n.parse(text) {
				return model.Datum{}, mysqlerr.New(mysqlerr.CodeIncorrectValue, "Incorrect integer value: '%s' for column %s at row %d", text, colName(db, table, col.Name), row)
			}
		}
		return intDatum(col, &n, row)
	case model.ColString:
		return checkLen(col, text, row)
	case model.ColDate, model.ColDateTime, model.ColTimestamp:
		return timeDatum(col, text, row, db, table)
	}
	return model.Datum{}, mysqlerr.NotSupported(fmt.Sprintf("a value for column %s of kind %d", col.Name, col.Kind))
}

func checkLen(col *model.RowCol, s string, row int) (model.Datum, *model.Error) {
	if col.Kind == model.ColString && utf8.RuneCountInString(s) > col.Len {
		return model.Datum{}, mysqlerr.New(mysqlerr.CodeDataTooLong, "Data too long for column '%s' at row %d", col.Name, row)
	}
	return model.Datum{S: s}, nil
}

// big is an integer in the range of either int64 or uint64, which is
// all a MySQL integer column holds.
type big struct {
	neg bool
	abs uint64
	bad bool // beyond both ranges
}

func (n *big) setInt(v int64) *big {
	n.neg = v < 0
	if n.neg {
		n.abs = uint64(-(v + 1)) + 1
	} else {
		n.abs = uint64(v)
	}
	return n
}

func (n *big) setUint(v uint64) *big { n.neg, n.abs = false, v; return n }

func (n *big) setString(s string) *big { n.parse(s); return n }

// parse reads an integer, or a decimal rounded half away from zero as
// MySQL stores it in an integer column; false if s is not a number.
func (n *big) parse(s string) bool {
	s = strings.TrimSpace(s)
	if s == "" {
		return false
	}
	if u, err := strconv.ParseUint(s, 10, 64); err == nil {
		n.setUint(u)
		return true
	}
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		n.setInt(i)
		return true
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			n.bad = true
			return true
		}
		return false
	}
	f = math.Round(f)
	switch {
	case f >= 0 && f < 1<<64:
		n.setUint(uint64(f))
	case f < 0 && f >= -(1<<63):
		n.setInt(int64(f))
	default:
		n.bad = true
	}
	return true
}

func (n *big) text() string {
	if n.neg {
		return "-" + strconv.FormatUint(n.abs, 10)
	}
	return strconv.FormatUint(n.abs, 10)
}

// add returns a + b or a - b, bad when it leaves the int64/uint64 range.
func (n *big) add(b *big, minus bool) big {
	bn := b.neg != minus
	if n.bad || b.bad {
		return big{bad: true}
	}
	if n.neg == bn {
		s := n.abs + b.abs
		if s < n.abs || (n.neg && s > 1<<63) {
			return big{bad: true}
		}
		return big{neg: n.neg, abs: s}
	}
	if n.abs >= b.abs {
		return big{neg: n.neg && n.abs != b.abs, abs: n.abs - b.abs}
	}
	r := big{neg: bn, abs: b.abs - n.abs}
	if r.neg && r.abs > 1<<63 {
		return big{bad: true}
	}
	return r
}

func intDatum(col *model.RowCol, n *big, row int) (model.Datum, *model.Error) {
	max := col.Int.Max()
	ok := !n.bad
	if ok && n.neg {
		ok = !col.Int.Unsigned && n.abs <= max+1
	} else if ok {
		ok = n.abs <= max
	}
	if !ok {
		return model.Datum{}, mysqlerr.OutOfRange(col.Name, row)
	}
	return model.Datum{S: n.text()}, nil
}

// timeDatum parses a DATE/DATETIME/TIMESTAMP literal in the forms clients
// send: 2006-01-02, 2006-01-02 15:04:05[.frac], 2006-01-02T15:04:05.
func timeDatum(col *model.RowCol, s string, row int, db, table string) (model.Datum, *model.Error) {
	t := strings.TrimSpace(s)
	var parsed time.Time
	var err error
	for _, f := range []string{dateTimeFormat + ".999999999", "2006-01-02T15:04:05.999999999", dateTimeFormat, dateFormat, "20060102150405", "20060102"} {
		if parsed, err = time.Parse(f, t); err == nil {
			break
		}
	}
	if err != nil {
		what := "datetime"
		if col.Kind == model.ColDate {
			what = "date"
		}
		return model.Datum{}, mysqlerr.New(mysqlerr.CodeTruncatedWrongValue, "Incorrect %s value: '%s' for column %s at row %d", what, s, colName(db, table, col.Name), row)
	}
	if col.Kind == model.ColDate {
		return model.Datum{S: parsed.Format(dateFormat)}, nil
	}
	return model.Datum{S: parsed.Format(dateTimeFormat)}, nil
}

// KeyText is a key's value as MariaDB quotes it in "Duplicate entry".
func KeyText(k *model.RowKey, r []model.Datum) string {
	parts := make([]string, len(k.Cols))
	for i, c := range k.Cols {
		parts[i] = r[c].S
	}
	return strings.Join(parts, "-")
}

func touches(k *model.RowKey, changed []bool) bool {
	if changed == nil {
		return true
	}
	for _, c := range k.Cols {
		if changed[c] {
			return true
		}
	}
	return false
}

// compareDatum orders two values of col: numbers numerically, strings in
// collation coll, dates by their text; NULL first.
func compareDatum(coll model.Collation, col *model.RowCol, a, b model.Datum) int {
	switch {
	case a.Null && b.Null:
		return 0
	case a.Null:
		return -1
	case b.Null:
		return 1
	}
	if col.Kind == model.ColInt {
		var x, y big
		x.parse(a.S)
		y.parse(b.S)
		switch {
		case x.neg != y.neg:
			if x.neg {
				return -1
			}
			return 1
		case x.abs == y.abs:
			return 0
		case (x.abs < y.abs) != x.neg:
			return -1
		}
		return 1
	}
	if col.Kind == model.ColString {
		return compareColl(coll, a.S, b.S)
	}
	return strings.Compare(a.S, b.S)
}
