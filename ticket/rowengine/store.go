package rowengine

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/google/btree"
	"github.com/ticketd/ticketd/ticket/model"
)

// Row tables are stored per row (DESIGN §4a): the engine reads and writes
// them only through TableRows, by key and by ordered scan, so that a
// statement costs O(log rows) plus the rows it touches, and a replica's
// checkpoint writes the rows that changed, not the table.
//
// Keys are byte strings whose byte order is the SQL order of the key
// columns (a memcomparable encoding, as TiDB's and MyRocks' are), made by
// one function per column kind (keyBytes). Two rows collide on a unique
// key exactly when their encoded keys are equal, so keyBytes is the single
// source of "duplicate key" and of index order.
//
// Every row table has a clustering key, the one its rows are stored and
// shown in, chosen as InnoDB chooses its clustered index: the primary key,
// else the first UNIQUE key whose columns are all NOT NULL, else a hidden
// row id in insertion order.

// ErrRowsDuplicate is returned by TableRows.Put for a row whose unique key
// another row holds. The engine checks unique keys first and answers 1062,
// so it means a bug; the storage refuses rather than lose a row.
var ErrRowsDuplicate = errors.New("ticket: row store: unique key held by another row")

// ErrRowsCorrupt is returned when a stored row does not decode.
var ErrRowsCorrupt = errors.New("ticket: row store: corrupt row")

// ClusterIndex names the clustering key in TableRows.Scan.
const ClusterIndex = -1

// TableRows is a row table's rows, as the engine uses them.
// Implementations are not safe for concurrent use: the Store's owner
// serialises writers, and readers read under its View.
type TableRows interface {
	// Len is the number of rows.
	Len() int
	// Get returns the row stored under clustering key pk.
	Get(pk string) ([]model.Datum, bool)
	// Scan calls fn with the clustering key and row of every row whose
	// key in index (ClusterIndex, or a position in RowsDef.Keys) is >= lo
	// and < hi, in ascending key order; hi "" means no upper bound. It
	// stops when fn returns false. fn must not change the rows.
	Scan(index int, lo, hi string, fn func(pk string, row []model.Datum) bool) error
	// ScanDesc is Scan in descending key order.
	ScanDesc(index int, lo, hi string, fn func(pk string, row []model.Datum) bool) error
	// Put stores row and returns its clustering key. pk is the row's key
	// in a table clustered by hidden row id ("" for a new row); otherwise
	// the key comes from the row and pk is ignored. A row with the same
	// clustering key is replaced.
	Put(pk string, row []model.Datum) (string, error)
	// Delete removes the row stored under pk, if any.
	Delete(pk string) error
}

// ClusterKey is the position in Keys of the key rows are stored by, or
// -1 when rows are clustered by a hidden row id (InnoDB's rule: the
// primary key, else the first UNIQUE key of NOT NULL columns).
func ClusterKey(rd *model.RowsDef) int {
	for i, k := range rd.Keys {
		if k.Primary {
			return i
		}
	}
	for i, k := range rd.Keys {
		if !k.Unique {
			continue
		}
		all := true
		for _, c := range k.Cols {
			all = all && rd.Cols[c].NotNull
		}
		if all {
			return i
		}
	}
	return -1
}

// rowItem is one entry of a RowTree's trees: b[:klen] is the key the
// tree orders by. In the clustering tree b[klen:] is the stored row; in
// an index tree b[pko:] is the row's clustering key (for a unique key
// without NULLs klen == pko; otherwise the clustering key is part of the
// ordering key, so that equal index values stay distinct entries).
type rowItem struct {
	b         string
	klen, pko uint32
}

func (it rowItem) key() string { return it.b[:it.klen] }

func lessItem(a, b rowItem) bool { return a.b[:a.klen] < b.b[:b.klen] }

func probe(k string) rowItem { return rowItem{b: k, klen: uint32(len(k))} }

// treeDegree is the B-tree's degree: nodes of up to 63 entries of 24
// bytes, about a cache-friendly 1.5 KB, as the package suggests.
const treeDegree = 32

// RowTree is the in-memory TableRows: a B-tree of rows by clustering key
// and one of clustering keys per other key of the table. MemStore and
// raftstore's memory state both keep row tables in one; readers read it
// under the owner's lock (see TableRows).
type RowTree struct {
	def     *model.RowsDef
	cluster int
	rows    *btree.BTreeG[rowItem]
	// index[k] is the tree of rd.Keys[k], nil for the clustering key.
	index []*btree.BTreeG[rowItem]
	// hidden is the last hidden row id given (tables without a
	// clustering key).
	hidden uint64
	// changed collects the clustering keys written since ClearChanged,
	// when tracking (raftstore's checkpoints write only those), each
	// with what the tree holds under it now: the row's item (key and
	// stored form, never "") or "" when the row is gone. Every write of
	// rows sets it, so a checkpoint needs no lookup in the tree: a lookup
	// per changed row was a quarter of a checkpoint's CPU under random
	// UPDATEs by key (3 nodes, 100,000 rows).
	changed map[string]string
}

var _ TableRows = (*RowTree)(nil)

// NewRowTree returns an empty tree for a table of definition rd.
func NewRowTree(rd *model.RowsDef) *RowTree {
	t := &RowTree{rows: btree.NewG(treeDegree, lessItem)}
	t.setDef(rd)
	return t
}

func (t *RowTree) setDef(rd *model.RowsDef) {
	t.def = rd
	t.cluster = ClusterKey(rd)
	t.index = make([]*btree.BTreeG[rowItem], len(rd.Keys))
	for k := range rd.Keys {
		if k != t.cluster {
			t.index[k] = btree.NewG(treeDegree, lessItem)
		}
	}
}

// TrackChanges starts collecting the clustering keys written.
func (t *RowTree) TrackChanges() {
	if t.changed == nil {
		t.changed = map[string]string{}
	}
}

// EachChanged calls fn with every key of a set that TakeChanged returned,
// in key order (a B+tree file takes sorted writes fastest), and the row's
// stored form ("" with ok false if the row is gone).
func EachChanged(changed map[string]string, fn func(pk, stored string, ok bool) error) error {
	keys := make([]string, 0, len(changed))
	for pk := range changed {
		keys = append(keys, pk)
	}
	slices.Sort(keys)
	for _, pk := range keys {
		b := changed[pk]
		if err := fn(pk, b[min(len(pk), len(b)):], b != ""); err != nil {
			return err
		}
	}
	return nil
}

// TakeChanged returns the keys written since the last ClearChanged or
// TakeChanged, each with what the tree held under it when written
// (EachChanged reads them), and starts a new set: a checkpoint takes
// them and writes them while the tree takes further writes.
func (t *RowTree) TakeChanged() map[string]string {
	if t.changed == nil {
		return nil
	}
	taken := t.changed
	t.changed = make(map[string]string, len(taken))
	return taken
}

// GiveBackChanged returns keys that TakeChanged gave out and could not be
// written: each is marked changed again, as it was taken, unless it was
// written since (the newer write is what the tree holds).
func (t *RowTree) GiveBackChanged(taken map[string]string) {
	if t.changed == nil {
		return
	}
	for pk, b := range taken {
		if _, again := t.changed[pk]; !again {
			t.changed[pk] = b
		}
	}
}

// ChangedLen is how many keys TakeChanged would return.
func (t *RowTree) ChangedLen() int { return len(t.changed) }

// ClearChanged forgets the keys written.
func (t *RowTree) ClearChanged() { clear(t.changed) }

// Def is the definition the tree indexes.
func (t *RowTree) Def() *model.RowsDef { return t.def }

// Len is the number of rows.
func (t *RowTree) Len() int { return t.rows.Len() }

// Get returns the row stored under pk.
func (t *RowTree) Get(pk string) ([]model.Datum, bool) {
	it, ok := t.rows.Get(probe(pk))
	if !ok {
		return nil, false
	}
	r, err := DecodeRow(it.b[it.klen:], len(t.def.Cols))
	if err != nil {
		// Rows are only stored by Put and LoadStored, which check them.
		panic(err)
	}
	return r, true
}

// Scan visits the rows whose index key lies in [lo, hi), in order.
func (t *RowTree) Scan(index int, lo, hi string, fn func(pk string, row []model.Datum) bool) error {
	return t.scan(index, lo, hi, false, fn)
}

// ScanDesc visits the rows whose index key lies in [lo, hi), last first.
func (t *RowTree) ScanDesc(index int, lo, hi string, fn func(pk string, row []model.Datum) bool) error {
	return t.scan(index, lo, hi, true, fn)
}

func (t *RowTree) scan(index int, lo, hi string, desc bool, fn func(pk string, row []model.Datum) bool) error {
	if index < ClusterIndex || index >= len(t.index) {
		return fmt.Errorf("ticket: scan of index %d of %d", index, len(t.index))
	}
	ncols := len(t.def.Cols)
	var err error
	visit := func(it rowItem) bool {
		var r []model.Datum
		if r, err = DecodeRow(it.b[it.klen:], ncols); err != nil {
			return false
		}
		return fn(it.b[:it.klen], r)
	}
	tree := t.rows
	if index != ClusterIndex && index != t.cluster {
		tree = t.index[index]
		inner := visit
		visit = func(it rowItem) bool {
			row, ok := t.rows.Get(probe(it.b[it.pko:]))
			if !ok {
				err = fmt.Errorf("%w: index %s names a missing row", ErrRowsCorrupt, t.def.Keys[index].Name)
				return false
			}
			return inner(row)
		}
	}
	if desc {
		inRange := visit
		visit = func(it rowItem) bool {
			switch k := it.key(); {
			case k < lo:
				return false
			case hi != "" && k >= hi:
				return true // the pivot itself: hi is excluded
			}
			return inRange(it)
		}
		if hi != "" {
			tree.DescendLessOrEqual(probe(hi), visit)
		} else {
			tree.Descend(visit)
		}
		return err
	}
	switch {
	case hi != "":
		tree.AscendRange(probe(lo), probe(hi), visit)
	case lo != "":
		tree.AscendGreaterOrEqual(probe(lo), visit)
	default:
		tree.Ascend(visit)
	}
	return err
}

// clusterKeyOf is the clustering key row is stored under; pk is used
// (or a new hidden id taken when "") for a table without a key.
func (t *RowTree) clusterKeyOf(pk string, row []model.Datum) string {
	if t.cluster >= 0 {
		k, _ := IndexKey(t.def, t.cluster, row)
		return k
	}
	if pk == "" {
		t.hidden++
		return string(binary.BigEndian.AppendUint64(nil, t.hidden))
	}
	return pk
}

// indexItem is row's entry in index k, for a row stored under pk.
func (t *RowTree) indexItem(k int, pk string, row []model.Datum) rowItem {
	key, null := IndexKey(t.def, k, row)
	it := rowItem{b: key + pk, klen: uint32(len(key)), pko: uint32(len(key))}
	if null || !t.def.Keys[k].Unique {
		it.klen = uint32(len(it.b))
	}
	return it
}

// Put stores row.
func (t *RowTree) Put(pk string, row []model.Datum) (string, error) {
	if len(row) != len(t.def.Cols) {
		return "", fmt.Errorf("%w: %d values in a table of %d columns", ErrRowsCorrupt, len(row), len(t.def.Cols))
	}
	pk = t.clusterKeyOf(pk, row)
	old, had := t.rows.Get(probe(pk))
	items := make([]rowItem, len(t.index))
	for k, tree := range t.index {
		if tree == nil {
			continue
		}
		items[k] = t.indexItem(k, pk, row)
		if it := items[k]; it.klen == it.pko {
			if o, ok := tree.Get(it); ok && o.b[o.pko:] != pk {
				return "", fmt.Errorf("%w: key %s", ErrRowsDuplicate, t.def.Keys[k].Name)
			}
		}
	}
	if had {
		t.unindex(old)
	}
	it := rowItem{b: string(AppendRow([]byte(pk), row)), klen: uint32(len(pk))}
	t.rows.ReplaceOrInsert(it)
	for k, tree := range t.index {
		if tree != nil {
			tree.ReplaceOrInsert(items[k])
		}
	}
	if t.changed != nil {
		t.changed[pk] = it.b
	}
	return pk, nil
}

// unindex removes a stored row's index entries.
func (t *RowTree) unindex(it rowItem) {
	if !slices.ContainsFunc(t.index, func(tree *btree.BTreeG[rowItem]) bool { return tree != nil }) {
		return // no key but the clustering one: nothing to decode the row for
	}
	row, err := DecodeRow(it.b[it.klen:], len(t.def.Cols))
	if err != nil {
		panic(err)
	}
	for k, tree := range t.index {
		if tree != nil {
			tree.Delete(t.indexItem(k, it.key(), row))
		}
	}
}

// Delete removes the row stored under pk.
func (t *RowTree) Delete(pk string) error {
	old, ok := t.rows.Delete(probe(pk))
	if !ok {
		return nil
	}
	t.unindex(old)
	if t.changed != nil {
		t.changed[pk] = ""
	}
	return nil
}

// LoadStored adds a row in its stored form (AppendRow) under pk, as read
// back from a checkpoint; it is not recorded as changed.
func (t *RowTree) LoadStored(pk, stored string) error {
	row, err := DecodeRow(stored, len(t.def.Cols))
	if err != nil {
		return err
	}
	if t.cluster >= 0 {
		if k, _ := IndexKey(t.def, t.cluster, row); k != pk {
			return fmt.Errorf("%w: row stored under another key", ErrRowsCorrupt)
		}
	} else if len(pk) == 8 {
		t.hidden = max(t.hidden, binary.BigEndian.Uint64([]byte(pk)))
	} else {
		return fmt.Errorf("%w: hidden row id of %d bytes", ErrRowsCorrupt, len(pk))
	}
	t.rows.ReplaceOrInsert(rowItem{b: pk + stored, klen: uint32(len(pk))})
	for k, tree := range t.index {
		if tree != nil {
			tree.ReplaceOrInsert(t.indexItem(k, pk, row))
		}
	}
	return nil
}

// ScanStored calls fn with every row's clustering key and stored form,
// in order.
func (t *RowTree) ScanStored(fn func(pk, stored string) error) error {
	var err error
	t.rows.Ascend(func(it rowItem) bool {
		err = fn(it.b[:it.klen], it.b[it.klen:])
		return err == nil
	})
	return err
}

// Rebuild returns a tree of the same rows indexed by definition rd (a
// key added or dropped; the columns are unchanged). The engine checks
// the rows against a new unique key first (checkUnique): a duplicate
// here is ErrRowsDuplicate.
func (t *RowTree) Rebuild(rd *model.RowsDef) (*RowTree, error) {
	n := NewRowTree(rd)
	if t.changed != nil {
		n.TrackChanges()
	}
	n.hidden = t.hidden
	var err error
	scanErr := t.Scan(ClusterIndex, "", "", func(pk string, row []model.Datum) bool {
		if n.cluster >= 0 || t.cluster >= 0 {
			pk = "" // a key from the row, or a new hidden id
		}
		if n.cluster >= 0 {
			k, _ := IndexKey(rd, n.cluster, row)
			if _, dup := n.rows.Get(probe(k)); dup {
				err = fmt.Errorf("%w: key %s", ErrRowsDuplicate, rd.Keys[n.cluster].Name)
				return false
			}
		}
		_, err = n.Put(pk, row)
		return err == nil
	})
	if err = errors.Join(scanErr, err); err != nil {
		return nil, err
	}
	if t.changed != nil {
		// Every key of the old layout must leave the checkpoint too, and
		// the writes not yet checkpointed stay listed: those the new tree
		// does not hold (n.Put listed all it does) as gone.
		gone := func(pk string) {
			if _, ok := n.changed[pk]; !ok {
				n.changed[pk] = ""
			}
		}
		t.rows.Ascend(func(it rowItem) bool { gone(it.key()); return true })
		for pk := range t.changed {
			gone(pk)
		}
	}
	return n, nil
}

// sameKeys reports whether two definitions index the same keys.
func sameKeys(a, b *model.RowsDef) bool {
	if len(a.Keys) != len(b.Keys) || len(a.Cols) != len(b.Cols) {
		return false
	}
	for i := range a.Keys {
		x, y := a.Keys[i], b.Keys[i]
		if !strings.EqualFold(x.Name, y.Name) || x.Primary != y.Primary || x.Unique != y.Unique || len(x.Cols) != len(y.Cols) {
			return false
		}
		for j := range x.Cols {
			if x.Cols[j] != y.Cols[j] {
				return false
			}
		}
	}
	for i := range a.Cols {
		if a.Cols[i].Kind != b.Cols[i].Kind || a.Cols[i].NotNull != b.Cols[i].NotNull || a.Cols[i].Int != b.Cols[i].Int {
			return false
		}
	}
	return true
}

// SameIndexing reports whether a tree of definition a indexes rows as
// one of definition b does (stores call Rebuild when not).
func SameIndexing(a, b *model.RowsDef) bool { return sameKeys(a, b) }

// PutRowTree is what a Store's PutTable does to a table's rows: cur
// (nil if none yet) for a table now of definition rd (nil: not a row
// table) becomes the returned tree, new, unchanged or re-indexed.
func PutRowTree(cur *RowTree, rd *model.RowsDef) (*RowTree, error) {
	switch {
	case rd == nil:
		return nil, nil
	case cur == nil:
		return NewRowTree(rd), nil
	case cur.def == rd || SameIndexing(cur.def, rd):
		cur.def = rd
		return cur, nil
	}
	return cur.Rebuild(rd)
}
