package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/ticketd/ticketd/raftstore"
	"github.com/ticketd/ticketd/raftstore/logformat"
	"github.com/ticketd/ticketd/ticket"
	"github.com/ticketd/ticketd/ticket/model"
)

// Online backup and restore (OPERATIONS.md "Backup and restore"):
//
//	GET  /backup[?stale=1]                          a backup file (raftstore's format)
//	POST /restore?advance=N&floor=N[&force=1]        body: a backup file
//
// A restore is one Raft command (model.OpRestore) carrying the whole
// state less row tables' rows, so every replica switches at the same log
// index, and snapshots and restarts keep it; then each row table's rows
// follow in commands of about restoreChunk bytes (model.OpRestoreRows),
// read from the staged backup as they are sent, so that neither memory
// nor a Raft entry holds a whole large table. A restore interrupted
// between the two (the node stopped, the leader lost) leaves the tables
// partly filled: run it again with --force.

// maxRestoreEntry bounds the restore command, which is one Raft entry and,
// through a follower, one forwarding frame (64 MiB).
const maxRestoreEntry = 32 << 20

// restoreChunk is the size of a restore's row commands, and
// restoreTries how often one whose outcome is unknown is sent.
const (
	restoreChunk = 512 << 10
	restoreTries = 5
)

// errNoAdvance refuses a restore that would put the counters back where
// they were when the backup was taken.
var errNoAdvance = errors.New("refusing to restore without --advance N or --floor N: " +
	"the cluster the backup came from may have handed out ids after the backup was taken, " +
	"and restored counters would hand them out again. Pass --advance with more ids than any table " +
	"can have allocated since the backup (allocation rate x time since the backup, with a wide margin), " +
	"and/or --floor above the largest id any client has seen")

// backupSource is the node a backup is read from.
type backupSource interface {
	BeginBackup(ctx context.Context, allowStale bool) (*raftstore.BackupTx, error)
}

// restoreTarget commits the restore command and reads the current state.
type restoreTarget interface {
	Exec(ctx context.Context, c *model.Command) (model.Result, error)
	View(fn func(ticket.Store) error) error
}

// backupRoutes serves GET /backup and POST /restore, and everything else
// with admin. stageDir holds an uploaded backup while it is verified.
func backupRoutes(admin http.Handler, src backupSource, dst restoreTarget, stageDir string, log *slog.Logger) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/", admin)
	mux.HandleFunc("GET /backup", func(w http.ResponseWriter, r *http.Request) {
		serveBackup(w, r, src, log)
	})
	mux.HandleFunc("POST /restore", func(w http.ResponseWriter, r *http.Request) {
		serveRestore(w, r, dst, stageDir, log)
	})
	return mux
}

func serveBackup(w http.ResponseWriter, r *http.Request, src backupSource, log *slog.Logger) {
	start := time.Now()
	stale := r.URL.Query().Get("stale") == "1"
	ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
	b, err := src.BeginBackup(ctx, stale)
	cancel()
	if err != nil {
		log.Warn("backup refused", append(caller(r), "err", err)...)
		msg := err.Error()
		if !stale && lostLeader(err) {
			// The way out the manual documents for a cluster that lost
			// its quorum; curl users ask with ?stale=1.
			msg += "; to back up this node's own applied state (it may lack the latest acknowledged writes) use ticketd backup --stale, or GET /backup?stale=1"
		}
		http.Error(w, msg, http.StatusServiceUnavailable)
		return
	}
	defer b.Close()
	hdr := b.Header()
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.FormatInt(hdr.Size(), 10))
	w.Header().Set("X-Ticketd-Applied-Index", strconv.FormatUint(hdr.AppliedIndex, 10))
	n, err := b.WriteTo(w)
	if err != nil {
		// The client sees a short body, which its checksum check refuses.
		log.Warn("backup interrupted", "remote", r.RemoteAddr, "bytes", n, "err", err)
		panic(http.ErrAbortHandler)
	}
	log.Info("backup served", append(caller(r), "bytes", n, "applied_index", hdr.AppliedIndex,
		"stale_allowed", stale, "duration", time.Since(start).Round(time.Millisecond))...)
}

// lostLeader reports whether a backup was refused because this node could
// not learn the cluster's commit index from a leader with a quorum.
func lostLeader(err error) bool {
	return errors.Is(err, ticket.ErrNoQuorum) || errors.Is(err, raftstore.ErrNoLeader) ||
		errors.Is(err, raftstore.ErrNotCaughtUp)
}

// restoreAnswer is POST /restore's JSON answer.
type restoreAnswer struct {
	BackupNode    string       `json:"backup_node"`
	BackupApplied uint64       `json:"backup_applied_index"`
	BackupCreated time.Time    `json:"backup_created"`
	FileSize      int64        `json:"file_size"`
	Databases     int          `json:"databases"`
	Rows          int64        `json:"rows"`
	Tables        []model.Move `json:"tables"`
}

func serveRestore(w http.ResponseWriter, r *http.Request, dst restoreTarget, stageDir string, log *slog.Logger) {
	// Parameters come from the URL only: FormValue would parse (and
	// consume) a body sent as a form, as curl --data-binary does.
	q := r.URL.Query()
	advance, err1 := parseUint(q.Get("advance"))
	floor, err2 := parseUint(q.Get("floor"))
	force := q.Get("force") == "1"
	if err := errors.Join(err1, err2); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if advance == 0 && floor == 0 {
		http.Error(w, errNoAdvance.Error(), http.StatusBadRequest)
		return
	}
	who := append(caller(r), "advance", advance, "floor", floor, "force", force)
	body := http.MaxBytesReader(w, r.Body, 5<<30)
	b, err := raftstore.OpenBackup(body, stageDir)
	if err == nil {
		defer b.Close()
	}
	if err != nil {
		log.Warn("restore refused: bad backup file", append(who, "err", err)...)
		http.Error(w, "restore refused, nothing changed: "+err.Error(), http.StatusBadRequest)
		return
	}
	who = append(who, "bytes", b.FileSize, "backup_node", b.Header.NodeID, "backup_applied_index", b.Header.AppliedIndex)
	moves, err := ticket.AdvanceDump(&b.Dump, advance, floor)
	if err != nil {
		log.Warn("restore refused", append(who, "err", err)...)
		http.Error(w, "restore refused, nothing changed: "+err.Error(), http.StatusBadRequest)
		return
	}
	cmd := model.Command{Op: model.OpRestore, Dump: &b.Dump, Force: force}
	if size := len(logformat.EncodeBatch(nil, []model.Command{cmd})); size > maxRestoreEntry {
		http.Error(w, fmt.Sprintf("restore refused: the state is %d bytes as a Raft entry, more than %d", size, maxRestoreEntry),
			http.StatusRequestEntityTooLarge)
		return
	}
	// The state machine checks emptiness again when it applies the
	// command; this check only answers early.
	var existing []string
	if err := dst.View(func(s ticket.Store) (err error) { existing, err = s.Databases(); return err }); err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	if len(existing) > 0 && !force {
		log.Warn("restore refused: cluster not empty", append(who, "databases", existing)...)
		http.Error(w, fmt.Sprintf("restore refused, nothing changed: the cluster already holds database(s) %v; "+
			"restore into a fresh cluster, or pass --force to replace them", existing), http.StatusConflict)
		return
	}
	log.Info("restore starting", append(who, "tables", len(b.Dump.Tables))...)
	exec := func(c *model.Command) (model.Result, error) {
		ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
		defer cancel()
		return dst.Exec(ctx, c)
	}
	res, err := exec(&cmd)
	if err != nil {
		log.Error("restore failed", append(who, "err", err)...)
		http.Error(w, "restore failed: "+err.Error(), http.StatusServiceUnavailable)
		return
	}
	if res.Err != nil {
		log.Warn("restore refused", append(who, "err", res.Err)...)
		http.Error(w, "restore refused, nothing changed: "+res.Err.Message, http.StatusConflict)
		return
	}
	var restored int64
	for _, t := range b.Dump.Tables {
		total := b.RowCount(t.Def.DB, t.Def.Name)
		if t.Def.Rows == nil || total == 0 {
			continue
		}
		done, logged := 0, time.Now()
		err := b.ScanRows(t.Def.DB, t.Def.Name, restoreChunk, func(rows [][]model.Datum) error {
			c := model.Command{Op: model.OpRestoreRows, DB: t.Def.DB, Table: t.Def.Name, RestoreRows: rows, Count: uint64(done)}
			res, err := exec(&c)
			// A chunk whose outcome is unknown (a slow commit, a
			// leader change) is sent again: it applies once (Count).
			for try := 1; err != nil && try < restoreTries && r.Context().Err() == nil; try++ {
				log.Warn("restore: chunk outcome unknown, sending it again", "table", t.Def.Key(), "rows_done", done, "try", try, "err", err)
				time.Sleep(time.Second)
				res, err = exec(&c)
			}
			if err == nil && res.Err != nil {
				err = res.Err
			}
			if err != nil {
				return err
			}
			done += len(rows)
			if time.Since(logged) > 5*time.Second {
				log.Info("restore progress", "table", t.Def.Key(), "rows", done, "of", total)
				logged = time.Now()
			}
			return nil
		})
		restored += int64(done)
		if err != nil {
			log.Error("restore failed part way: run it again with --force", append(who, "table", t.Def.Key(), "rows_done", done, "err", err)...)
			http.Error(w, fmt.Sprintf("restore failed after %d of %d rows of %s, the cluster holds a partial state: "+
				"run the restore again with --force: %v", done, total, t.Def.Key(), err), http.StatusServiceUnavailable)
			return
		}
	}
	log.Info("restore done", append(who, "tables", len(moves), "rows", restored)...)
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(restoreAnswer{
		BackupNode: b.Header.NodeID, BackupApplied: b.Header.AppliedIndex, BackupCreated: b.Header.Created,
		FileSize: b.FileSize, Databases: len(b.Dump.Databases), Tables: moves, Rows: restored,
	})
}

func parseUint(s string) (uint64, error) {
	if s == "" {
		return 0, nil
	}
	return strconv.ParseUint(s, 10, 64)
}

// backupCmd is `ticketd backup --from ADMIN_ADDR --out FILE`.
func backupCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("ticketd backup", flag.ContinueOnError)
	fs.SetOutput(stderr)
	from := fs.String("from", "127.0.0.1:8306", "admin address (host:port) of the node to back up")
	out := fs.String("out", "", "backup file to write (required)")
	stale := fs.Bool("stale", false, "back up the node's own applied state even if it cannot reach a leader (after losing the quorum)")
	timeout := fs.Duration("timeout", 10*time.Minute, "give up after this long")
	var af adminFlags
	af.register(fs, false)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *out == "" || fs.NArg() > 0 {
		return errors.New("usage: ticketd backup --from ADMIN_ADDR --out FILE [--stale]")
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	conn, err := af.dial(getenv, *from)
	if err != nil {
		return err
	}
	start := time.Now()
	u := "/backup"
	if *stale {
		u += "?stale=1"
	}
	req, err := conn.request(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := conn.client.Do(req)
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return fmt.Errorf("backup: %s: %s", resp.Status, bytes.TrimSpace(msg))
	}
	tmp := *out + ".tmp"
	prog := newProgress(stderr, "backup", resp.ContentLength)
	if err := writeSynced(tmp, progressReader{resp.Body, prog}); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("backup: %w", err)
	}
	prog.end("Verifying.")
	b, err := verifyFile(tmp)
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("backup: downloaded file refused: %w", err)
	}
	if err := os.Rename(tmp, *out); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	if d, err := os.Open(filepath.Dir(*out)); err == nil {
		d.Sync()
		d.Close()
	}
	fmt.Fprintf(stdout, "backup %s: %d bytes in %v from node %s, applied index %d, %d databases, %d tables (verified)\n",
		*out, b.FileSize, time.Since(start).Round(time.Millisecond), b.Header.NodeID, b.Header.AppliedIndex,
		len(b.Dump.Databases), len(b.Dump.Tables))
	return nil
}

func writeSynced(path string, r io.Reader) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// verifyFile reads and checks a whole backup file; row tables' rows are
// checked one by one, not kept.
func verifyFile(path string) (*raftstore.Backup, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := raftstore.OpenBackup(f, filepath.Dir(path))
	if err != nil {
		return nil, err
	}
	defer b.Close()
	return &b.Backup, nil
}

// progress reports a long transfer on a terminal: bytes so far of the
// total, at most once a second, on one line rewritten in place. It is
// silent when w is not a terminal (scripts and logs get the summary).
type progress struct {
	w     io.Writer
	what  string
	total int64
	done  int64
	last  time.Time
	on    bool
	// next is printed when done reaches total.
	next  string
	ended bool
}

func newProgress(w io.Writer, what string, total int64) *progress {
	f, ok := w.(*os.File)
	on := false
	if ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			on = true
		}
	}
	return &progress{w: w, what: what, total: total, last: time.Now(), on: on}
}

func (p *progress) add(n int) {
	p.done += int64(n)
	if p.total > 0 && p.done >= p.total && p.next != "" {
		p.end(p.next)
		return
	}
	if !p.on || time.Since(p.last) < time.Second {
		return
	}
	p.last = time.Now()
	if p.total > 0 {
		fmt.Fprintf(p.w, "\r%s: %.1f of %.1f MiB (%d%%)", p.what, float64(p.done)/(1<<20), float64(p.total)/(1<<20), p.done*100/p.total)
	} else {
		fmt.Fprintf(p.w, "\r%s: %.1f MiB", p.what, float64(p.done)/(1<<20))
	}
}

// end finishes the progress line, with a note of what comes next.
func (p *progress) end(next string) {
	if p.on && p.done > 0 && !p.ended {
		p.ended = true
		fmt.Fprintf(p.w, "\r%s: %.1f MiB done. %s\n", p.what, float64(p.done)/(1<<20), next)
	}
}

// progressReader counts what is read through it.
type progressReader struct {
	r io.Reader
	p *progress
}

func (r progressReader) Read(b []byte) (int, error) {
	n, err := r.r.Read(b)
	r.p.add(n)
	return n, err
}

// restoreCmd is `ticketd restore --in FILE --to ADMIN_ADDR --advance N`.
func restoreCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("ticketd restore", flag.ContinueOnError)
	fs.SetOutput(stderr)
	in := fs.String("in", "", "backup file (required)")
	to := fs.String("to", "127.0.0.1:8306", "admin address (host:port) of any node of the cluster to restore into")
	advance := fs.Uint64("advance", 0, "add N to every table's next id")
	floor := fs.Uint64("floor", 0, "make every table's next id at least N")
	force := fs.Bool("force", false, "replace the cluster's databases if it has any (default: refuse)")
	timeout := fs.Duration("timeout", 10*time.Minute, "give up after this long")
	var af adminFlags
	af.register(fs, false)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *in == "" || fs.NArg() > 0 {
		return errors.New("usage: ticketd restore --in FILE --to ADMIN_ADDR (--advance N | --floor N) [--force]")
	}
	if *advance == 0 && *floor == 0 {
		return errNoAdvance
	}
	// Check everything here first, so that a bad file or an overflowing
	// advance is reported before the upload; the server checks again.
	b, err := verifyFile(*in)
	if err != nil {
		return fmt.Errorf("restore refused, nothing sent: %w", err)
	}
	if _, err := ticket.AdvanceDump(&b.Dump, *advance, *floor); err != nil {
		return fmt.Errorf("restore refused, nothing sent: %w", err)
	}
	conn, err := af.dial(getenv, *to)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	f, err := os.Open(*in)
	if err != nil {
		return err
	}
	defer f.Close()
	q := url.Values{"advance": {strconv.FormatUint(*advance, 10)}, "floor": {strconv.FormatUint(*floor, 10)}}
	if *force {
		q.Set("force", "1")
	}
	prog := newProgress(stderr, "restore: upload", b.FileSize)
	req, err := conn.request(ctx, http.MethodPost, "/restore?"+q.Encode(), progressReader{f, prog})
	if err != nil {
		return err
	}
	req.ContentLength = b.FileSize
	req.Header.Set("Content-Type", "application/octet-stream")
	start := time.Now()
	// The upload ends before the cluster has applied the rows.
	prog.next = "Waiting for the cluster to apply the state."
	resp, err := conn.client.Do(req)
	prog.end("")
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("restore: %s: %s", resp.Status, body)
	}
	var ans restoreAnswer
	if err := json.Unmarshal(body, &ans); err != nil {
		return fmt.Errorf("restore: answer: %w", err)
	}
	fmt.Fprintf(stdout, "restored %s (%d bytes, node %s, applied index %d, taken %s) in %v: %d databases, %d tables\n",
		*in, ans.FileSize, ans.BackupNode, ans.BackupApplied, ans.BackupCreated.Format(time.RFC3339),
		time.Since(start).Round(time.Millisecond), ans.Databases, len(ans.Tables))
	for _, m := range ans.Tables {
		switch {
		case m.Exhausted:
			fmt.Fprintf(stdout, "  %s: exhausted (no id left), unchanged\n", m.Table)
		case m.From == 0:
			fmt.Fprintf(stdout, "  %s: no counter (sequence table without rows)\n", m.Table)
		default:
			fmt.Fprintf(stdout, "  %s: next id %d -> %d\n", m.Table, m.From, m.To)
		}
	}
	return nil
}
