package wire

import (
	"hash/fnv"
	"net"
	"os"
	"path/filepath"
)

// NodeInfo is what the system variables describing the server say about
// this node. Tools read them to tell servers apart and to find them
// again (a monitoring agent's @@hostname:@@port, a schema tool's
// @@datadir, a topology tool's @@server_id); answering MySQL's defaults
// made every node of a cluster, on any port, claim to be localhost:3306
// with server id 1.
type NodeInfo struct {
	// Listen is the MySQL listen address as configured (--mysql-addr):
	// its host is @@bind_address ("*" when empty, as MySQL writes "all
	// addresses").
	Listen string
	// Port is the port the listener is bound to (@@port): it differs from
	// Listen's when that asked for port 0.
	Port int
	// DataDir is @@datadir, made absolute and ending in a slash as
	// MariaDB's.
	DataDir string
	// NodeID names the node (--node-id); @@server_id is ServerID(NodeID).
	NodeID string
	// Hostname is @@hostname; empty means os.Hostname(), as mysqld's
	// gethostname().
	Hostname string
}

// ServerID is the @@server_id of a node: the 32-bit FNV-1a hash of its
// name, so that the nodes of a cluster answer different ids that stay the
// same across restarts (MySQL's range is 1 to 2^32-1: 0 becomes 1).
func ServerID(nodeID string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(nodeID))
	if id := h.Sum32(); id != 0 {
		return id
	}
	return 1
}

// setVars replaces the defaults of the variables n describes; a zero
// field leaves its variable as MySQL's default (a Server built by a test
// without a listener).
func (n NodeInfo) setVars(vars map[string]sysVar) {
	ro := func(v any) sysVar { return sysVar{value: v, readOnly: true, session: true} }
	host := n.Hostname
	if host == "" {
		host, _ = os.Hostname()
	}
	if host != "" {
		vars["hostname"] = ro(host)
	}
	if n.Port > 0 {
		vars["port"] = ro(int64(n.Port))
	}
	if n.Listen != "" {
		if h, _, err := net.SplitHostPort(n.Listen); err == nil {
			if h == "" {
				h = "*"
			}
			vars["bind_address"] = ro(h)
		}
	}
	if n.DataDir != "" {
		dir, err := filepath.Abs(n.DataDir)
		if err != nil {
			dir = n.DataDir
		}
		vars["datadir"] = ro(withSlash(dir))
	}
	if n.NodeID != "" {
		vars["server_id"] = sysVar{value: int64(ServerID(n.NodeID)), session: true}
	}
}

// withSlash ends a directory with the separator, as MariaDB's @@datadir.
func withSlash(dir string) string {
	if dir == "" || dir[len(dir)-1] == filepath.Separator {
		return dir
	}
	return dir + string(filepath.Separator)
}
