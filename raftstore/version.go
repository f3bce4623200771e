package raftstore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/raft"

	"github.com/ticketd/ticketd/raftstore/logformat"
	"github.com/ticketd/ticketd/ticket"
	"github.com/ticketd/ticketd/ticket/model"
)

// Command versions: what keeps a cluster of mixed builds (a rolling
// upgrade) from writing into the log an entry one of its members cannot
// apply, or would apply differently.
//
// Every command has a version: the lowest command version of a build that
// decodes it and applies it exactly as this build does (logformat.Version).
// Every build applies the commands up to its own CommandVersion; a build
// from before versions counts as version 1.
//
// The cluster's version is a replicated global (its name holds NUL
// bytes, which no SET GLOBAL can write), carried by an OpSetGlobal
// command: every build since the first applies that, and an older one
// stores it and ignores it. Only the leader raises it: to the lowest
// version the members of the current configuration answer when asked
// over the forwarding protocol (fwdVersion, which any node answers, and
// which a build from before versions answers as "not the leader" or
// "unknown request": version 1). A member that does not answer holds it
// where it is. It never goes down. Each member also writes its own
// version into the replicated state, the same way, so that every node's
// /status and /metrics show every member's.
//
// Propose refuses a command whose version is above the cluster's with a
// statement error (1235) naming the members that answered a lower
// version; nothing of it is written. When every member can take it (a
// new cluster in its first second), it waits a little for the raise
// instead. A Join of a node whose version is below the cluster's is
// refused (ErrMemberVersion); a node whose data directory holds a
// cluster version above its own refuses to start (ErrDowngrade); a state
// machine that meets an entry raising it above its own stops there
// (ErrVersionTooOld), as it does at an entry it cannot decode
// (ErrUndecodable). A build from before versions checks none of this,
// and rebuilds its state from the latest snapshot and the log at start,
// skipping what it cannot decode: each node takes a snapshot when it
// applies the first raise above version 1, which such a build cannot
// restore, so that it fails to start there instead.
//
// The rule for changes: a new op, a new field (presence bit) of a command
// or table definition, a new value kind, or a change to how Apply treats
// an existing command raises CommandVersion, and the new op, bit or kind
// is entered in package logformat's tables (versions.go) at the new
// version (a test fails for an op, bit or kind without an entry). A
// changed Apply of an existing op raises that op's entry.

// CommandVersion is the highest command version this build decodes and
// applies (logformat.CommandVersion, whose doc lists what each version
// added): what a node announces, and the most its state machine takes.
const CommandVersion = logformat.CommandVersion

// ErrCorrupt (logformat.ErrCorrupt) is wrapped by every decoding failure:
// of a log entry, a snapshot, or the state file.
var ErrCorrupt = logformat.ErrCorrupt

// Version errors.
var (
	// ErrDowngrade: the data directory's cluster runs a command version
	// above this build's. Open refuses to start.
	ErrDowngrade = errors.New("raftstore: downgrade below the cluster's command version")
	// ErrVersionTooOld is wrapped (with ErrFSMFailed) by the failure of a
	// state machine that met an entry raising the cluster's version above
	// its own: it stops there.
	ErrVersionTooOld = errors.New("raftstore: the cluster's command version is above this build's")
	// ErrMemberVersion: a Join of a node whose build applies a lower
	// command version than the cluster runs.
	ErrMemberVersion = errors.New("raftstore: member's command version below the cluster's")
)

// The replicated globals of versions. Their names hold NUL bytes, which
// no SET GLOBAL can write (like ticket's drop marks).
const (
	versionGlobalPrefix  = "\x00version\x00"
	memberVersionPrefix  = versionGlobalPrefix + "member\x00"
	clusterVersionGlobal = versionGlobalPrefix + "cluster"
)

func memberVersionGlobal(id string) string { return memberVersionPrefix + id }

// isVersionGlobal reports the globals that describe this cluster's
// members, not its data: a backup leaves them out.
func isVersionGlobal(name string) bool { return strings.HasPrefix(name, versionGlobalPrefix) }

// clusterVersionIn reads the cluster's version from a state, logformat.BaseVersion
// when it was never raised.
func clusterVersionIn(s ticket.Store) uint32 {
	v, ok, _ := s.Global(clusterVersionGlobal)
	if !ok || v < logformat.BaseVersion {
		return logformat.BaseVersion
	}
	return uint32(min(v, 1<<32-1))
}

// ClusterVersion is the cluster's command version as this replica has
// applied it.
func (n *Node) ClusterVersion() uint32 { return n.fsm.ClusterVersion() }

// CommandVersion is the command version of this node's build.
func (n *Node) CommandVersion() uint32 { return n.cfg.commandVersion }

// versionGate decides a command that needs version need while the
// cluster runs a lower one: refused at once, naming them, when members
// answered a lower version; otherwise (every member can take it, or some
// could not be asked yet) it waits, within ctx and versionWait, for the
// leader to raise the cluster's version, which it does within a
// versionInterval or two. A new cluster starts at version 1 and is
// raised so within its first second.
func (n *Node) versionGate(ctx context.Context, c *model.Command, need uint32) *model.Error {
	wait := time.NewTimer(versionWait)
	defer wait.Stop()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		cluster := n.fsm.ClusterVersion()
		if cluster >= need {
			return nil
		}
		behind, unknown := n.behind(need)
		if len(behind) > 0 {
			return versionRefusal(c, need, cluster, "members behind: "+strings.Join(behind, ", ")+"; upgrade them first")
		}
		select {
		case <-tick.C:
			continue
		case <-ctx.Done():
		case <-wait.C:
		case <-n.closed:
		}
		why := "every member can take it, and the leader has not raised the cluster's version yet"
		if len(unknown) > 0 {
			why = "could not ask " + strings.Join(unknown, ", ") + " for its version"
		}
		return versionRefusal(c, need, cluster, why)
	}
}

// versionWait bounds versionGate's wait for a pending raise.
const versionWait = 3 * time.Second

// behind lists the members whose build answered a version below need,
// and those whose version is not known (not asked yet, or unreachable).
func (n *Node) behind(need uint32) (behind, unknown []string) {
	cf := n.raft.GetConfiguration()
	if cf.Error() != nil {
		return nil, []string{"the members"}
	}
	var probed map[string]uint32
	if p := n.probed.Load(); p != nil {
		probed = *p
	}
	for _, srv := range cf.Configuration().Servers {
		id := string(srv.ID)
		v, ok := probed[id]
		if srv.ID == n.id {
			v, ok = n.cfg.commandVersion, true
		}
		switch {
		case !ok || v == 0:
			unknown = append(unknown, id)
		case v < need && v == logformat.BaseVersion:
			behind = append(behind, id+" (version 1: a ticketd from before versions)")
		case v < need:
			behind = append(behind, fmt.Sprintf("%s (version %d)", id, v))
		}
	}
	return behind, unknown
}

// versionRefusal is the statement error of a command that needs version
// need while the cluster runs a lower one.
func versionRefusal(c *model.Command, need, cluster uint32, why string) *model.Error {
	return model.NewError(model.CodeNotSupported,
		"This version of ticketd doesn't yet support '%s while the cluster runs command version %d: it needs %d (%s)'",
		opName(c), cluster, need, why)
}

// opName names what a statement asked for, for refusals.
func opName(c *model.Command) string {
	switch c.Op {
	case model.OpDropDB:
		return "DROP DATABASE"
	case model.OpDropTable:
		return "DROP TABLE"
	case model.OpRestore:
		return "a restore"
	case model.OpDelete:
		return "DELETE"
	case model.OpCreateSeq:
		return "CREATE SEQUENCE"
	case model.OpSeqNext:
		return "NEXTVAL"
	case model.OpSetVal:
		return "SETVAL"
	case model.OpAlterSeq:
		return "ALTER SEQUENCE"
	case model.OpDropSeq:
		return "DROP SEQUENCE"
	case model.OpKeys:
		return "a Redis key command"
	case model.OpCreateTable:
		if c.Def != nil && logformat.DefVersion(c.Def) == logformat.CollationVersion {
			return "CREATE TABLE of a row table (its strings compare as utf8mb4_general_ci)"
		}
		if c.Def != nil && logformat.DefVersion(c.Def) == logformat.ColumnCollationVersion {
			return "CREATE TABLE of a row table with a CHARACTER SET or COLLATE other than utf8mb4_general_ci"
		}
		return "CREATE TABLE of this kind"
	case model.OpInsert:
		if c.Rows.NeedsV6() {
			return "INSERT ... ON DUPLICATE KEY UPDATE or an expression in VALUES on a row table"
		}
		return "INSERT of these values"
	case model.OpUpdate:
		return "UPDATE of this kind"
	default:
		return fmt.Sprintf("command %d", c.Op)
	}
}

// versionInterval is how often a node checks that its version is
// announced and, while the cluster runs below its own version, asks the
// members for theirs (a leader then raises the cluster's version when
// they all can take it).
const versionInterval = 250 * time.Millisecond

// keepVersions runs until Close.
func (n *Node) keepVersions() {
	t := time.NewTicker(versionInterval)
	defer t.Stop()
	for {
		if n.memberSeen.Load() && !n.removed.Load() && n.fsm.Err() == nil {
			n.versionRound()
		}
		select {
		case <-t.C:
		case <-n.closed:
			return
		}
	}
}

// versionRound is one turn of keepVersions.
func (n *Node) versionRound() {
	ctx, cancel := context.WithTimeout(context.Background(), n.cfg.ApplyTimeout)
	defer cancel()
	if n.fsm.leftBase.CompareAndSwap(true, false) {
		// A build from before versions rebuilds its state from the latest
		// snapshot and the log at every start, and skips the entries it
		// cannot decode. A snapshot of this build's state is one it
		// cannot restore: started on this data directory, it stops there
		// instead of diverging.
		if err := n.raft.Snapshot().Error(); err != nil {
			n.log.Warn("snapshot after the cluster's version rose", "err", err)
		} else {
			n.log.Info("snapshot taken: a ticketd from before command versions can no longer start on this data directory")
		}
	}
	if n.caughtUp.Load() {
		if err := n.announceVersion(ctx); err != nil {
			n.log.Debug("announce command version", "err", err)
		}
	}
	if n.fsm.ClusterVersion() >= n.cfg.commandVersion {
		// Nothing this build writes is too new for the cluster: no
		// more asking, and nothing to raise.
		n.probed.Store(nil)
		return
	}
	probed := n.probeMembers(ctx)
	n.probed.Store(&probed)
	if n.raft.State() == raft.Leader && n.caughtUp.Load() {
		if err := n.raiseClusterVersion(ctx, probed); err != nil {
			n.log.Debug("raise cluster command version", "err", err)
		}
	}
}

// probeMembers asks every member of the configuration for its version
// (fwdVersion); 0 for one that did not answer.
func (n *Node) probeMembers(ctx context.Context) map[string]uint32 {
	out := map[string]uint32{}
	cf := n.raft.GetConfiguration()
	if cf.Error() != nil {
		return out
	}
	for _, srv := range cf.Configuration().Servers {
		if srv.ID == n.id {
			out[string(srv.ID)] = n.cfg.commandVersion
			continue
		}
		v, err := n.fwd.version(ctx, string(srv.Address))
		if err != nil {
			n.log.Debug("ask member for its command version", "member", srv.ID, "err", err)
		}
		out[string(srv.ID)] = v
	}
	return out
}

// announceVersion writes this node's version into the replicated state
// when the state records another: every member's /status then shows it.
func (n *Node) announceVersion(ctx context.Context) error {
	cur, ok := n.fsm.MemberVersions()[string(n.id)]
	own := n.cfg.commandVersion
	if ok && cur == own {
		return nil
	}
	res, err := n.Propose(ctx, []model.Command{{Op: model.OpSetGlobal, Name: memberVersionGlobal(string(n.id)), Value: uint64(own)}})
	if err != nil {
		return err
	}
	if res[0].Err != nil {
		return res[0].Err
	}
	n.log.Info("command version announced", "version", own, "was", cur, "was_announced", ok)
	return nil
}

// raiseClusterVersion raises the cluster's version to the lowest version
// the members of the configuration answered, when that is above it. A
// member that did not answer holds it where it is.
func (n *Node) raiseClusterVersion(ctx context.Context, probed map[string]uint32) error {
	target := n.cfg.commandVersion
	for id, v := range probed {
		if v == 0 {
			return fmt.Errorf("no answer from %s", id)
		}
		target = min(target, v)
	}
	cur := n.fsm.ClusterVersion()
	if target <= cur {
		return nil
	}
	res, err := n.Propose(ctx, []model.Command{{Op: model.OpSetGlobal, Name: clusterVersionGlobal, Value: uint64(target)}})
	if err != nil {
		return err
	}
	if res[0].Err != nil {
		return res[0].Err
	}
	n.log.Info("cluster command version raised", "version", target, "was", cur, "members", probed)
	return nil
}

// checkJoinVersion refuses to add a node at addr whose build applies a
// lower version than the cluster runs (it could not apply the log).
func (n *Node) checkJoinVersion(id, addr string, deadline time.Time) error {
	cluster := n.fsm.ClusterVersion()
	if cluster <= logformat.BaseVersion {
		return nil
	}
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	v, err := n.fwd.version(ctx, addr)
	if err != nil {
		return fmt.Errorf("%w: cannot ask %q at %s for its version: %w", ErrMemberVersion, id, addr, err)
	}
	if v < cluster {
		return fmt.Errorf("%w: %q at %s applies command version %d, the cluster runs %d: start it with a newer ticketd",
			ErrMemberVersion, id, addr, v, cluster)
	}
	return nil
}

// version asks the node at addr for its command version. A build from
// before versions answers that it is not the leader, or does not know
// the request: version 1.
func (f *forwarder) version(ctx context.Context, addr string) (uint32, error) {
	deadline := time.Now().Add(f.timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	status, out, err := f.call(ctx, addr, deadline, fwdVersion, nil, nil)
	if err != nil {
		return 0, err
	}
	switch {
	case status == stOK && len(out) == 4:
		return binary.BigEndian.Uint32(out), nil
	case status == stNotLeader, status == stRejected:
		return logformat.BaseVersion, nil
	default:
		return 0, fmt.Errorf("raftstore: %s answered the version request with status %d: %s", addr, status, out)
	}
}

// versionAnswer is a node's answer to fwdVersion, whatever its role.
func (n *Node) versionAnswer() []byte {
	return binary.BigEndian.AppendUint32(nil, n.cfg.commandVersion)
}
