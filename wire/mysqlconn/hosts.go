package mysqlconn

import (
	"fmt"
	"net"
	"sync"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/ticketd/ticketd/sql/mysqlerr"
)

// hostGuard is MySQL's host cache reduced to max_connect_errors, with
// MariaDB's and MySQL's rules for what it counts: a host's consecutive
// connection phases that broke the protocol (errMalformed: garbage for a
// handshake response, a packet cut short or out of sequence, a failed TLS
// handshake), the host_cache's SUM_CONNECT_ERRORS. It blocks the host
// once they reach the limit, until FLUSH HOSTS; a successful login resets
// the count. Refused logins (1045) are not counted, as in MariaDB and
// MySQL: counting them let anyone who knew a user name lock that host's
// applications and its admin out. Loopback clients are never counted or
// blocked (MySQL and MariaDB keep no host cache entry for them), so
// FLUSH HOSTS can always be run from the server's machine; everything
// behind a local proxy shares that address. Unlike MySQL, connections
// that end before sending anything or time out (load balancers' TCP
// health checks, port scans) are not counted: counting them is MySQL's
// best-known way of blocking its own load balancer. --max-connections'
// pre-login bound (wire) deals with sockets that are held open.
type hostGuard struct {
	max int // 0: no blocking

	mu sync.Mutex
	// errors counts consecutive failures per host; bounded by maxHosts
	// so that a scan from many addresses cannot grow it without end.
	errors map[string]int
}

// maxHosts bounds the host cache, as MySQL's host_cache_size (default
// 128 + ...; ticketd's clients are few application servers). When full,
// hosts without failures are never added, and a new failing host
// replaces nothing: it is simply not counted until FLUSH HOSTS.
const maxHosts = 4096

func newHostGuard(max int) *hostGuard {
	return &hostGuard{max: max, errors: map[string]int{}}
}

// exempt reports whether host is never counted: a loopback address.
func exempt(host string) bool {
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// blocked reports whether host may not connect.
func (g *hostGuard) blocked(host string) bool {
	if g.max <= 0 || exempt(host) {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.errors[host] >= g.max
}

// failed counts a failed connection phase from host and reports whether
// the host is now blocked (the first time only).
func (g *hostGuard) failed(host string) (nowBlocked bool) {
	if g.max <= 0 || exempt(host) {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	n, known := g.errors[host]
	if !known && len(g.errors) >= maxHosts {
		return false
	}
	g.errors[host] = n + 1
	return n+1 == g.max
}

// succeeded resets host's count.
func (g *hostGuard) succeeded(host string) {
	if g.max <= 0 {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.errors, host)
}

// flush forgets every count and unblocks every host (FLUSH HOSTS).
func (g *hostGuard) flush() {
	g.mu.Lock()
	defer g.mu.Unlock()
	clear(g.errors)
}

// errHostBlocked is MySQL's 1129 for host.
func errHostBlocked(host string) *mysql.MyError {
	return &mysql.MyError{Code: mysqlerr.CodeHostIsBlocked, State: "HY000",
		Message: fmt.Sprintf("Host '%s' is blocked because of many connection errors; unblock with 'mysqladmin flush-hosts'", host)}
}

// Refuse answers a connection with an error in place of the initial
// handshake and returns: what MySQL does for "Too many connections" and a
// blocked host. The client has not said which protocol it speaks yet, so
// the packet carries no SQLSTATE, as MySQL's.
func Refuse(nc net.Conn, code uint16, message string) error {
	b := make([]byte, 4, 4+3+len(message))
	b = append(b, mysql.ERR_HEADER, byte(code), byte(code>>8))
	b = append(b, message...)
	pc := &phaseConn{conn: nc}
	return pc.WritePacket(b)
}
