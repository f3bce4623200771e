package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ticketd/ticketd/raftstore"
)

// memberStatusTimeout bounds how long GET /status?members waits for the
// members' answers: a member that is down or cut off is reported as such
// rather than holding the table back.
const memberStatusTimeout = 3 * time.Second

// nodeStatus is a node's GET /status document: Raft's view of the cluster
// and what only the command knows. Members give it to each other through
// raftstore's ClusterStatus, so any member's admin address shows them all.
type nodeStatus struct {
	raftstore.Status
	// Ready is /readyz's answer; NotReady its reason when false.
	Ready    bool   `json:"ready"`
	NotReady string `json:"not_ready,omitempty"`
	// Version is the build: module version and VCS revision.
	Version   string `json:"version"`
	MySQLAddr string `json:"mysql_addr"`
	HTTPAddr  string `json:"http_addr"`
	// RedisAddr is --redis-addr, empty when the Redis listener is off.
	RedisAddr string `json:"redis_addr,omitempty"`
}

// clusterStatus is GET /status?members's document.
type clusterStatus struct {
	Members []raftstore.MemberReport `json:"cluster"`
}

// describer returns raftstore's Config.Describe for a node listening on
// these addresses.
func describer(mysqlAddr, httpAddr, redisAddr string) func(*raftstore.Node) []byte {
	bi, _ := debug.ReadBuildInfo()
	version := buildVersion(bi)
	return func(n *raftstore.Node) []byte {
		st := nodeStatus{Status: n.Status(), Ready: true, Version: version, MySQLAddr: mysqlAddr, HTTPAddr: httpAddr, RedisAddr: redisAddr}
		if err := n.Ready(); err != nil {
			st.Ready, st.NotReady = false, err.Error()
		}
		b, err := json.Marshal(st)
		if err != nil {
			b, _ = json.Marshal(map[string]string{"node_id": st.NodeID, "error": err.Error()})
		}
		return b
	}
}

// buildVersion is the short form of versionText for a table: the module
// version and the first 12 characters of the revision, "+dirty" for a
// modified tree.
func buildVersion(bi *debug.BuildInfo) string {
	if bi == nil {
		return "unknown"
	}
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev != "" {
		v += " " + rev
		if modified == "true" {
			v += "+dirty"
		}
	}
	return v
}

// memberRow is one line of `ticketd status`, and one object of its --json.
type memberRow struct {
	ID        string `json:"id"`
	RaftAddr  string `json:"raft_addr"`
	MySQLAddr string `json:"mysql_addr,omitempty"`
	HTTPAddr  string `json:"http_addr,omitempty"`
	RedisAddr string `json:"redis_addr,omitempty"`
	// Role is Raft's state (Leader, Follower, Candidate), or "unreachable".
	Role         string `json:"role"`
	Term         uint64 `json:"term"`
	AppliedIndex uint64 `json:"applied_index"`
	CommitIndex  uint64 `json:"commit_index"`
	// Lag is the highest commit index any member reported (the leader's)
	// minus this member's applied index.
	Lag     uint64 `json:"lag"`
	Version string `json:"version,omitempty"`
	// CommandVersion is the newest command version the member's build
	// applies; ClusterVersion the cluster's, as the member applied it
	// (OPERATIONS.md "Restarting and upgrading a cluster"). 0: a build
	// from before versions.
	CommandVersion uint32 `json:"command_version"`
	ClusterVersion uint32 `json:"cluster_command_version"`
	Ready          bool   `json:"ready"`
	NotReady       string `json:"not_ready,omitempty"`
	Error          string `json:"error,omitempty"`
}

// memberRows turns the members' reports into rows.
func memberRows(reports []raftstore.MemberReport) []memberRow {
	rows := make([]memberRow, len(reports))
	var commit uint64
	for i, r := range reports {
		row := memberRow{ID: r.ID, RaftAddr: r.Addr, Role: "unreachable", Error: r.Error}
		if r.Error == "" {
			var st nodeStatus
			if err := json.Unmarshal(r.Status, &st); err != nil {
				row.Error = fmt.Sprintf("status document: %v", err)
			} else {
				row.MySQLAddr, row.HTTPAddr, row.Role, row.Term = st.MySQLAddr, st.HTTPAddr, st.State, st.Term
				row.RedisAddr = st.RedisAddr
				row.AppliedIndex, row.CommitIndex, row.Version = st.AppliedIndex, st.CommitIndex, st.Version
				row.CommandVersion, row.ClusterVersion = st.CommandVersion, st.ClusterVersion
				row.Ready, row.NotReady = st.Ready, st.NotReady
				if st.Error != "" {
					row.Ready, row.NotReady = false, st.Error
				}
				commit = max(commit, st.CommitIndex)
			}
		}
		rows[i] = row
	}
	for i := range rows {
		if rows[i].Error == "" && commit > rows[i].AppliedIndex {
			rows[i].Lag = commit - rows[i].AppliedIndex
		}
	}
	return rows
}

// writeStatusTable prints the rows as `etcdctl endpoint status -w table`
// does: one member a line, aligned columns.
func writeStatusTable(w io.Writer, rows []memberRow) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tRAFT ADDRESS\tMYSQL ADDRESS\tADMIN ADDRESS\tROLE\tTERM\tAPPLIED\tCOMMIT\tLAG\tVERSION\tCMD VERSION\tREADY")
	var cluster uint32
	for _, r := range rows {
		if r.Error != "" {
			fmt.Fprintf(tw, "%s\t%s\t-\t-\t%s\t-\t-\t-\t-\t-\t-\tno: %s\n", r.ID, r.RaftAddr, r.Role, oneLine(r.Error))
			continue
		}
		ready := "yes"
		if !r.Ready {
			ready = "no: " + oneLine(r.NotReady)
		}
		cmd := "-"
		if r.CommandVersion > 0 {
			cmd = strconv.FormatUint(uint64(r.CommandVersion), 10)
		}
		if r.Role == "Leader" {
			cluster = r.ClusterVersion
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%s\t%s\t%s\n", r.ID, r.RaftAddr, dash(r.MySQLAddr), dash(r.HTTPAddr),
			r.Role, r.Term, r.AppliedIndex, r.CommitIndex, r.Lag, dash(r.Version), cmd, ready)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	// The Redis listeners, when any member has one (--redis-addr): a
	// line of their own keeps the table as it was without them.
	var redis []string
	for _, r := range rows {
		if r.RedisAddr != "" {
			redis = append(redis, r.ID+" "+r.RedisAddr)
		}
	}
	if len(redis) > 0 {
		if _, err := fmt.Fprintf(w, "redis: %s\n", strings.Join(redis, ", ")); err != nil {
			return err
		}
	}
	if cluster > 0 {
		// The version every member must apply before a newer command is
		// accepted, as the leader has it.
		_, err := fmt.Fprintf(w, "cluster command version: %d\n", cluster)
		return err
	}
	return nil
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// statusCmd is `ticketd status`: every member's role, indexes, lag,
// version and readiness, asked through one member's admin address.
func statusCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("ticketd status", flag.ContinueOnError)
	fs.SetOutput(stderr)
	from := fs.String("from", "127.0.0.1:8306", "admin address (host:port) of any member")
	asJSON := fs.Bool("json", false, "print a JSON array, one object per member, instead of the table")
	timeout := fs.Duration("timeout", 10*time.Second, "give up after this long")
	var af adminFlags
	af.register(fs, false)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: ticketd status [--from ADMIN_ADDR] [--json]\n\n"+
			"Prints every member of the cluster (id, addresses, role, term, applied and commit index, lag\n"+
			"behind the leader's commit index, version, ready), asked through one member. Exits 1 when a\n"+
			"member does not answer or is not ready.\n\n")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("status: unexpected arguments: %v", fs.Args())
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	conn, err := af.dial(getenv, *from)
	if err != nil {
		return err
	}
	req, err := conn.request(ctx, http.MethodGet, "/status?members=1", nil)
	if err != nil {
		return err
	}
	resp, err := conn.client.Do(req)
	if err != nil {
		return fmt.Errorf("status: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return fmt.Errorf("status: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status: %s: %s", resp.Status, strings.TrimSpace(string(body)))
	}
	var cs struct {
		Members *[]raftstore.MemberReport `json:"cluster"`
	}
	if err := json.Unmarshal(body, &cs); err != nil {
		return fmt.Errorf("status: %s answered: %w", *from, err)
	}
	if cs.Members == nil {
		return fmt.Errorf("status: %s does not report its members' status (a build from before ticketd status?)", *from)
	}
	rows := memberRows(*cs.Members)
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(rows)
	} else {
		err = writeStatusTable(stdout, rows)
	}
	if err != nil {
		return err
	}
	var bad []string
	for _, r := range rows {
		switch {
		case r.Error != "":
			bad = append(bad, r.ID+" did not answer")
		case !r.Ready:
			bad = append(bad, r.ID+" is not ready")
		}
	}
	if len(bad) > 0 {
		return errors.New("status: " + strings.Join(bad, ", ") + " (" + strconv.Itoa(len(rows)) + " members)")
	}
	return nil
}
