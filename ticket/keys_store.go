package ticket

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/ticketd/ticketd/ticket/model"
)

// keyID names a key of a numbered database.
type keyID struct {
	db   uint8
	name string
}

// Key returns a key's stored value.
func (m *MemStore) Key(db uint8, name string) (model.KeyVal, bool, error) {
	v, ok := m.keys[keyID{db, name}]
	return v, ok, nil
}

// PutKey stores a key.
func (m *MemStore) PutKey(db uint8, name string, v model.KeyVal) error {
	if m.keys == nil {
		m.keys = map[keyID]model.KeyVal{}
	}
	m.keys[keyID{db, name}] = v
	return nil
}

// DeleteKey removes a key.
func (m *MemStore) DeleteKey(db uint8, name string) error {
	delete(m.keys, keyID{db, name})
	return nil
}

// EachKey calls fn for each key of db.
func (m *MemStore) EachKey(db uint8, fn func(string, model.KeyVal) bool) error {
	for k, v := range m.keys {
		if k.db == db && !fn(k.name, v) {
			break
		}
	}
	return nil
}

// EachExpiring calls fn for each key of db with an expiry.
func (m *MemStore) EachExpiring(db uint8, fn func(string, int64) bool) error {
	for k, v := range m.keys {
		if k.db == db && v.ExpireAt != 0 && !fn(k.name, v.ExpireAt) {
			break
		}
	}
	return nil
}

// AllKeys lists every key of a store, sorted by database and name: what
// a backup carries.
func AllKeys(s KeyStore) ([]model.KeyEntry, error) {
	var out []model.KeyEntry
	for db := range uint8(model.KeyDBs) {
		err := s.EachKey(db, func(name string, v model.KeyVal) bool {
			out = append(out, model.KeyEntry{DB: db, Name: name, KeyVal: v})
			return true
		})
		if err != nil {
			return nil, err
		}
	}
	slices.SortFunc(out, func(a, b model.KeyEntry) int {
		if a.DB != b.DB {
			return int(a.DB) - int(b.DB)
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out, nil
}

// keyHolders names the key databases that hold keys, for a restore's
// refusal to replace them unforced.
func keyHolders(s Store) ([]string, error) {
	var out []string
	for db := range uint8(model.KeyDBs) {
		n := 0
		err := s.EachKey(db, func(string, model.KeyVal) bool { n++; return false })
		if err != nil {
			return nil, err
		}
		if n > 0 {
			out = append(out, fmt.Sprintf("Redis key database %d", db))
		}
	}
	return out, nil
}

// restoreKeys replaces every key with keys.
func restoreKeys(s Store, keys []model.KeyEntry) error {
	old, err := AllKeys(s)
	if err != nil {
		return err
	}
	for _, k := range old {
		if err := s.DeleteKey(k.DB, k.Name); err != nil {
			return err
		}
	}
	for _, k := range keys {
		if err := s.PutKey(k.DB, k.Name, k.KeyVal); err != nil {
			return err
		}
	}
	return nil
}

func validateDumpKeys(d *model.Dump) error {
	for i, k := range d.Keys {
		if k.DB >= model.KeyDBs {
			return fmt.Errorf("%w: key %q in database %d (0-%d)", ErrBadDump, k.Name, k.DB, model.KeyDBs-1)
		}
		if i > 0 {
			p := d.Keys[i-1]
			if p.DB > k.DB || p.DB == k.DB && p.Name >= k.Name {
				return fmt.Errorf("%w: key %q of database %d out of order or twice", ErrBadDump, k.Name, k.DB)
			}
		}
	}
	return nil
}

// keyAdvance is where a key's integer moves to, as a table's next id
// does: the next INCR answers at least next+advance and at least floor.
// ok is false for a key that does not hold a non-negative integer (it
// is left alone); fits is false when the move would pass int64.
func keyAdvance(v string, advance, floor uint64) (to int64, ok, fits bool) {
	n, ok := ParseInt(v)
	if !ok || n < 0 {
		return 0, false, true
	}
	target := uint64(n) + advance
	if target < uint64(n) || target > math.MaxInt64 {
		return 0, true, false
	}
	if floor > 0 {
		target = max(target, floor-1)
	}
	if target > math.MaxInt64 {
		return 0, true, false
	}
	return int64(target), true, true
}

func checkDumpKeysAdvance(d *model.Dump, advance, floor uint64) error {
	var bad []string
	for _, k := range d.Keys {
		if _, ok, fits := keyAdvance(k.Val, advance, floor); ok && !fits {
			bad = append(bad, fmt.Sprintf("key %q of database %d: %s + %d passes 2^63-1", k.Name, k.DB, k.Val, advance))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("%w: %s", ErrAdvanceOverflow, strings.Join(bad, "; "))
	}
	return nil
}

func advanceDumpKeys(d *model.Dump, advance, floor uint64) {
	for i := range d.Keys {
		if to, ok, fits := keyAdvance(d.Keys[i].Val, advance, floor); ok && fits {
			d.Keys[i].Val = formatInt(to)
		}
	}
}
