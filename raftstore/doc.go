// Package raftstore owns ticketd's replication and storage: hashicorp/raft
// with its log and stable store in raft-boltdb/v2 or raft-wal (see
// openLogStore), file snapshots, and the state machine that keeps every
// database, ticket table and global variable in memory, checkpointed to a
// bbolt file of its own.
//
// One Raft log entry is one batch of ticket.Commands in a compact binary
// encoding (EncodeBatch). The FSM applies a batch with ticket.Apply to its
// memory state and records the entry's index; a checkpoint writes the
// changed tables and that index to the state file in one bbolt
// transaction (at most every second, and before every snapshot and
// backup); the one-second checkpoint takes what changed under the
// state's lock and writes it without, so that entries go on being
// applied meanwhile (FSM.checkpointAside). Raft replays its log after a restart from the latest
// snapshot, and the FSM skips the entries at or below the index it
// starts from: an allocation is never applied twice, and the entries
// after the last checkpoint are applied again from the log. Without
// fsync of the state file (StateNoSync), the file is trusted only in the
// boot of the machine that wrote it, and rebuilt from the latest snapshot
// and the log after a reboot (unsynced.go). A committed
// entry the FSM cannot decode is never skipped: the state machine stops
// there (ErrUndecodable) and says so, and Propose writes only what every
// replica decodes. A checkpoint that fails (disk full) is retried, never
// fatal (ErrCheckpoint); a failed write of the Raft log fails its
// statement with ticket.ErrStorage and heals with the next write that
// succeeds (storage.go); a lone voter whose disk is full stands for no
// election until there is space (diskfull.go).
//
// Time: a command's NOW() is its entry's AppendedAt, which the leader
// stamps from its clock, raised to the highest time already applied: the
// replicated clock, kept in the state (checkpoints, snapshots), never
// goes back when leadership moves to a node whose clock is behind
// (clock.go; from command version 4, the version that starts it).
//
// Planned operations: a leader hands leadership over before it stops
// (HandOver, TransferLeadership; handover.go), and the leader's
// replication to an unreachable member waits for it instead of letting
// Raft's retry backoff grow, so that a member back from an outage serves
// at once (raftport's Transport).
//
// Command versions keep a cluster of mixed builds (a rolling upgrade)
// from writing what one of its members cannot apply: every command has a
// version (the op, its presence bits and value kinds; version 1 is what
// builds from before versions apply), the cluster's version is the lowest
// its members' builds answer, agreed through Raft, and Propose refuses a
// command above it with a statement error naming the members behind. A
// new op, field or value kind, or a changed Apply of an existing op,
// raises CommandVersion and declares the new version in the tables of
// package logformat (versions.go), where the full rule is; version.go
// here holds the agreement.
//
// The log format (what a batch, a result list, a table of the state file
// and a snapshot's tables are as bytes, and which command version each
// command needs) is package logformat's: raftstore proposes and applies
// batches and asks logformat for their bytes, in the format the cluster's
// version allows (logformat.FormatAt).
//
// Node runs a replica. It implements ticket.Replicator: on the leader a
// batch becomes one Raft entry; on a follower it is forwarded to the leader
// over the Raft address itself, which a first byte on each connection
// splits between Raft's RPCs and ticketd's forwarding protocol (package
// raftport, which owns the port and its TLS; the protocol is forward.go's
// here). A batch
// that may have been committed is never retried: the caller gets an error
// wrapping ticket.ErrUncertain, and its ids are never handed out. A
// follower stops waiting for a batch's answer from an old leader gone
// silent (paused, cut off) as soon as it follows another (silence.go),
// and a node that has known no leader for longer than an election
// timeout refuses at once (NoLeaderError).
//
// Subpackages, each with one job, which raftstore imports and which know
// nothing of it: logformat (the bytes of batches, results and state
// tables, and the command-version tables), raftport (the Raft port:
// listener, mutual TLS, first-byte routing, Raft's transport over it),
// backupfile (a backup file's envelope: header, trailer, checksum; the
// image inside is this package's state file, backup.go) and hclogslog
// (hashicorp's hclog interface onto log/slog, for Raft and its log
// stores). raftstore keeps what needs the node or the state machine:
// proposing, applying, forwarding's protocol, membership, the state file
// and what a backup's image holds.
//
// On-disk layout under the data directory:
//
//	state.db              bbolt checkpoint: counters, catalog, globals, applied index
//	state.unsynced        the boot of the machine in which state.db was written
//	                      without fsync (StateNoSync; unsynced.go)
//	LOCK                  held by the running process (lock.go)
//	raft/raft.db          bbolt: Raft log and stable store (LogStoreBolt)
//	raft/wal/             raft-wal segments and meta (LogStoreWAL)
//	raft/snapshots/       Raft snapshots (each a copy of state.db)
package raftstore
