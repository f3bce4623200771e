package raftstore

import (
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/ticketd/ticketd/raftstore/logformat"
	"github.com/ticketd/ticketd/ticket/model"
)

// The Redis key space in the state file: one bucket, "keys", with a key
// per Redis key (its database's number as one byte, then its name) and
// its value encoded by logformat.AppendKeyVal. A state file from before keys has no
// such bucket: it reads as an empty key space, and the first checkpoint
// that writes a key creates it.
var bucketKeys = []byte("keys")

// keyRef names a key of a numbered database in the memState.
type keyRef struct {
	db   uint8
	name string
}

func (k keyRef) stored() []byte { return append([]byte{k.db}, k.name...) }

// eachStoredKey reads the keys bucket of a state file.
func eachStoredKey(tx *bolt.Tx, fn func(keyRef, model.KeyVal) error) error {
	b := tx.Bucket(bucketKeys)
	if b == nil {
		return nil
	}
	return b.ForEach(func(k, v []byte) error {
		if len(k) == 0 || k[0] >= model.KeyDBs {
			return fmt.Errorf("%w: stored key %q names no key database", ErrCorrupt, k)
		}
		kv, err := logformat.DecodeKeyVal(v)
		if err != nil {
			return fmt.Errorf("stored key %q: %w", k, err)
		}
		return fn(keyRef{k[0], string(k[1:])}, kv)
	})
}

// keySpace is the memState's keys: a map per numbered database, and the
// names of those with an expiry, so that the leader's sweep (every 100
// ms) reads those and not every key.
type keySpace struct {
	dbs      [model.KeyDBs]map[string]model.KeyVal
	expiring [model.KeyDBs]map[string]int64
}

func (ks *keySpace) get(k keyRef) (model.KeyVal, bool) {
	v, ok := ks.dbs[k.db][k.name]
	return v, ok
}

func (ks *keySpace) put(k keyRef, v model.KeyVal) {
	if ks.dbs[k.db] == nil {
		ks.dbs[k.db] = map[string]model.KeyVal{}
	}
	ks.dbs[k.db][k.name] = v
	if v.ExpireAt != 0 {
		if ks.expiring[k.db] == nil {
			ks.expiring[k.db] = map[string]int64{}
		}
		ks.expiring[k.db][k.name] = v.ExpireAt
	} else {
		delete(ks.expiring[k.db], k.name)
	}
}

func (ks *keySpace) delete(k keyRef) bool {
	if _, ok := ks.dbs[k.db][k.name]; !ok {
		return false
	}
	delete(ks.dbs[k.db], k.name)
	delete(ks.expiring[k.db], k.name)
	return true
}

// takeKeys moves the keys changed since the last checkpoint into an
// image's form (nil for a deleted key).
func (m *memState) takeKeys() map[keyRef]*model.KeyVal {
	out := make(map[keyRef]*model.KeyVal, len(m.dirtyKeys))
	for k := range m.dirtyKeys {
		if v, ok := m.keys.get(k); ok {
			out[k] = &v
		} else {
			out[k] = nil
		}
	}
	clear(m.dirtyKeys)
	return out
}

// writeKeys writes an image's changed keys.
func (img *ckptImage) writeKeys(tx *bolt.Tx) error {
	if len(img.keys) == 0 {
		return nil
	}
	b, err := tx.CreateBucketIfNotExists(bucketKeys)
	if err != nil {
		return fmt.Errorf("raftstore: checkpoint: keys bucket: %w", err)
	}
	for k, v := range img.keys {
		if v == nil {
			err = b.Delete(k.stored())
		} else {
			err = b.Put(k.stored(), logformat.AppendKeyVal(nil, v))
		}
		if err != nil {
			return fmt.Errorf("raftstore: checkpoint: key %q of database %d: %w", k.name, k.db, err)
		}
	}
	return nil
}

func (s memStore) Key(db uint8, name string) (model.KeyVal, bool, error) {
	if db >= model.KeyDBs {
		return model.KeyVal{}, false, nil
	}
	v, ok := s.m.keys.get(keyRef{db, name})
	return v, ok, nil
}

func (s memStore) PutKey(db uint8, name string, v model.KeyVal) error {
	if s.readOnly {
		return ErrReadOnly
	}
	if db >= model.KeyDBs {
		return fmt.Errorf("raftstore: put key: database %d out of range", db)
	}
	k := keyRef{db, name}
	s.m.keys.put(k, v)
	s.m.dirtyKeys[k] = struct{}{}
	return nil
}

func (s memStore) DeleteKey(db uint8, name string) error {
	if s.readOnly {
		return ErrReadOnly
	}
	if db >= model.KeyDBs {
		return nil
	}
	k := keyRef{db, name}
	if s.m.keys.delete(k) {
		s.m.dirtyKeys[k] = struct{}{}
	}
	return nil
}

func (s memStore) EachKey(db uint8, fn func(string, model.KeyVal) bool) error {
	if db >= model.KeyDBs {
		return nil
	}
	for name, v := range s.m.keys.dbs[db] {
		if !fn(name, v) {
			break
		}
	}
	return nil
}

func (s memStore) EachExpiring(db uint8, fn func(string, int64) bool) error {
	if db >= model.KeyDBs {
		return nil
	}
	for name, at := range s.m.keys.expiring[db] {
		if !fn(name, at) {
			break
		}
	}
	return nil
}
