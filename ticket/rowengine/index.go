package rowengine

import (
	"strconv"
	"strings"

	"github.com/ticketd/ticketd/sql/mysqlerr"
	"github.com/ticketd/ticketd/ticket/model"
)

// Key changes of a row table: ALTER TABLE ... ADD/DROP INDEX, KEY,
// UNIQUE, PRIMARY KEY and CREATE/DROP INDEX. The command carries the
// change, not the new definition, so that two changes committed one
// after the other both apply. The new definition replaces the table's,
// and the Store's PutTable re-indexes its rows (PutRowTree): one Raft
// command, applied entirely or refused, on every replica alike.

// AlterKeys applies c's key changes to t's definition; e is the
// statement's error when MariaDB refuses them (nothing changes).
func AlterKeys(s Store, t *model.Table, c *model.Command) (res model.Result, e *model.Error, err error) {
	old := t.Def.Rows
	rd := &model.RowsDef{Cols: append([]model.RowCol(nil), old.Cols...), Keys: append([]model.RowKey(nil), old.Keys...), Collation: old.Collation}
	for _, name := range c.DropKeys {
		i := keyIndex(rd, name)
		if i < 0 {
			e := mysqlerr.New(mysqlerr.CodeCantDropKey, "Can't DROP INDEX `%s`; check that it exists", name)
			if c.IfExists {
				res.Warnings = append(res.Warnings, model.Noted(e).Warnings...)
				continue
			}
			return res, e, nil
		}
		rd.Keys = append(rd.Keys[:i:i], rd.Keys[i+1:]...)
	}
	var added []int // positions in rd.Keys, fixed up as keys are inserted
	for _, ks := range c.AddKeys {
		k := model.RowKey{Name: ks.Name, Primary: ks.Primary, Unique: ks.Unique || ks.Primary}
		for _, col := range ks.Columns {
			j := rd.ColIndex(col)
			if j < 0 {
				return res, mysqlerr.New(mysqlerr.CodeKeyColumnMissing, "Key column '%s' doesn't exist in table", col), nil
			}
			k.Cols = append(k.Cols, j)
		}
		switch {
		case k.Primary:
			if rd.Primary() != nil {
				return res, mysqlerr.New(mysqlerr.CodeMultiplePK, "Multiple primary key defined"), nil
			}
			k.Name = model.PrimaryKey
		case strings.EqualFold(k.Name, model.PrimaryKey):
			return res, mysqlerr.New(mysqlerr.CodeWrongNameForIndex, "Incorrect index name '%s'", k.Name), nil
		case k.Name == "":
			k.Name = freeKeyName(rd, rd.Cols[k.Cols[0]].Name)
		case keyIndex(rd, k.Name) >= 0:
			e := mysqlerr.New(mysqlerr.CodeDupKeyName, "Duplicate key name '%s'", k.Name)
			if c.IfExists {
				res.Warnings = append(res.Warnings, model.Noted(e).Warnings...)
				continue
			}
			return res, e, nil
		}
		if k.Primary {
			for _, j := range k.Cols {
				rd.Cols[j].NotNull = true
			}
		}
		at := keyPlace(rd, &k)
		rd.Keys = append(rd.Keys[:at:at], append([]model.RowKey{k}, rd.Keys[at:]...)...)
		for i := range added {
			if added[i] >= at {
				added[i]++
			}
		}
		added = append(added, at)
	}
	if t.Def.AutoInc {
		keyed := false
		for _, k := range rd.Keys {
			keyed = keyed || strings.EqualFold(rd.Cols[k.Cols[0]].Name, t.Def.IDCol)
		}
		if !keyed {
			return res, mysqlerr.New(mysqlerr.CodeWrongAutoKey, "Incorrect table definition; there can be only one auto column and it must be defined as a key"), nil
		}
	}
	if len(added) > 0 {
		rows, err := s.Rows(t.Def.DB, t.Def.Name)
		if err != nil || rows == nil {
			return res, nil, MissingRows(t, err)
		}
		if e, err := checkNewKeys(rows, rd, added); e != nil || err != nil {
			return res, e, err
		}
	}
	t.Def.Rows = rd
	return res, nil, nil
}

// keyIndex finds a key by name, case-insensitively, or -1.
func keyIndex(rd *model.RowsDef, name string) int {
	for i, k := range rd.Keys {
		if strings.EqualFold(k.Name, name) {
			return i
		}
	}
	return -1
}

// freeKeyName is MariaDB's name for an unnamed key: its first column's
// name, then name_2, name_3 ... while taken.
func freeKeyName(rd *model.RowsDef, col string) string {
	name := col
	for n := 2; keyIndex(rd, name) >= 0 || strings.EqualFold(name, model.PrimaryKey); n++ {
		name = col + "_" + strconv.Itoa(n)
	}
	return name
}

// keyPlace is where MariaDB lists a new key: the primary key first,
// unique keys before plain ones, otherwise in the order they came.
func keyPlace(rd *model.RowsDef, k *model.RowKey) int {
	if k.Primary {
		return 0
	}
	if !k.Unique {
		return len(rd.Keys)
	}
	for i, o := range rd.Keys {
		if !o.Unique {
			return i
		}
	}
	return len(rd.Keys)
}

// checkNewKeys checks the rows against the added keys: no NULL in a
// primary key's columns, no value twice in a unique key.
func checkNewKeys(rows TableRows, rd *model.RowsDef, added []int) (*model.Error, error) {
	seen := make([]map[string]struct{}, len(added))
	for i := range seen {
		seen[i] = map[string]struct{}{}
	}
	var e *model.Error
	err := rows.Scan(ClusterIndex, "", "", func(_ string, r []model.Datum) bool {
		for i, at := range added {
			k := &rd.Keys[at]
			key, null := IndexKey(rd, at, r)
			if null {
				if k.Primary {
					e = mysqlerr.New(mysqlerr.CodeInvalidUseOfNull, "Invalid use of NULL value")
					return false
				}
				continue
			}
			if !k.Unique {
				continue
			}
			if _, dup := seen[i][key]; dup {
				e = model.DupEntry(KeyText(k, r), k.Name)
				return false
			}
			seen[i][key] = struct{}{}
		}
		return true
	})
	return e, err
}
