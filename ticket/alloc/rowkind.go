package alloc

import (
	"sync"

	"github.com/ticketd/ticketd/ticket"
)

// rowKinds answers "is this a row table?" for the wire layer, which must
// build a row table's INSERT in the row engine's form and a ticket
// table's in the ticket form, without reading (and copying) the table on
// the ticket hot path. Answers are cached until the replica's schema
// epoch moves (SchemaClock: any CREATE, DROP, ALTER, restore or
// snapshot); without a SchemaClock nothing is cached.
type rowKinds struct {
	read  ticket.Reader
	clock ticket.SchemaClock
	mu    sync.Mutex
	epoch uint64
	m     map[tableKey]bool
}

func newRowKinds(read ticket.Reader) *rowKinds {
	k := &rowKinds{read: read, m: map[tableKey]bool{}}
	if c, ok := read.(ticket.SchemaClock); ok {
		k.clock = c
	}
	return k
}

// IsRowTable reports whether db.name is a row table on the local replica
// now; false for a ticket table, a sequence or no table (a table that
// changes kind meanwhile is the command's to answer).
func (s *Service) IsRowTable(db, name string) bool {
	k := s.kind
	key := tableKey{db, name}
	var epoch uint64
	if k.clock != nil {
		epoch = k.clock.SchemaEpoch()
		k.mu.Lock()
		if k.epoch != epoch {
			clear(k.m)
			k.epoch = epoch
		}
		row, ok := k.m[key]
		k.mu.Unlock()
		if ok {
			return row
		}
	}
	row := false
	_ = k.read.View(func(st ticket.Store) error {
		t, err := st.Table(db, name)
		row = err == nil && t != nil && t.Def.Rows != nil
		return nil
	})
	if k.clock != nil {
		k.mu.Lock()
		if k.epoch == epoch {
			k.m[key] = row
		}
		k.mu.Unlock()
	}
	return row
}
