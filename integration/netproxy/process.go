package netproxy

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
)

// ByProcess returns an Identify that names a connection after the process
// owning its client end: pids returns the candidate processes (pid → node
// name), asked afresh for every connection because restarted nodes get new
// pids. It works for connections between processes of this machine and
// network namespace, on Linux: the client socket is found in
// /proc/net/tcp{,6} by its two addresses, which gives its inode, and the
// inode is looked up among each candidate's open files.
func ByProcess(pids func() map[int]string) Identify {
	return func(c net.Conn) string {
		client, ok1 := addrPort(c.RemoteAddr())
		server, ok2 := addrPort(c.LocalAddr())
		if !ok1 || !ok2 {
			return ""
		}
		inode, err := socketInode(client, server)
		if err != nil || inode == 0 {
			return ""
		}
		link := fmt.Sprintf("socket:[%d]", inode)
		for pid, name := range pids() {
			if ownsFile(pid, link) {
				return name
			}
		}
		return ""
	}
}

func addrPort(a net.Addr) (netip.AddrPort, bool) {
	ta, ok := a.(*net.TCPAddr)
	if !ok {
		return netip.AddrPort{}, false
	}
	ap := ta.AddrPort()
	return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()), true
}

// socketInode returns the inode of the TCP socket whose local end is local
// and remote end is remote.
func socketInode(local, remote netip.AddrPort) (uint64, error) {
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		fh, err := os.Open(f)
		if err != nil {
			continue
		}
		inode, found, err := findSocket(fh, local, remote)
		fh.Close()
		if err != nil {
			return 0, fmt.Errorf("%s: %w", f, err)
		}
		if found {
			return inode, nil
		}
	}
	return 0, fmt.Errorf("no socket %s -> %s", local, remote)
}

// findSocket scans a /proc/net/tcp-format table for the row with the given
// local and remote addresses and returns its inode.
func findSocket(r io.Reader, local, remote netip.AddrPort) (inode uint64, found bool, err error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	first := true
	for sc.Scan() {
		if first { // header
			first = false
			continue
		}
		// sl local rem st tx:rx tr:when retrnsmt uid timeout inode ...
		f := strings.Fields(sc.Text())
		if len(f) < 10 {
			continue
		}
		l, err1 := parseProcAddr(f[1])
		rm, err2 := parseProcAddr(f[2])
		if err1 != nil || err2 != nil || l != local || rm != remote {
			continue
		}
		inode, err := strconv.ParseUint(f[9], 10, 64)
		if err != nil {
			return 0, false, fmt.Errorf("inode %q: %w", f[9], err)
		}
		return inode, true, nil
	}
	return 0, false, sc.Err()
}

// parseProcAddr parses /proc/net/tcp's "0100007F:1F90": the address as
// 32-bit words printed in host byte order, the port in hex. IPv4-mapped
// IPv6 addresses are unmapped so they compare equal to IPv4 ones.
func parseProcAddr(s string) (netip.AddrPort, error) {
	h, p, ok := strings.Cut(s, ":")
	if !ok {
		return netip.AddrPort{}, fmt.Errorf("bad address %q", s)
	}
	port, err := strconv.ParseUint(p, 16, 16)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("bad port in %q", s)
	}
	raw, err := hex.DecodeString(h)
	if err != nil || (len(raw) != 4 && len(raw) != 16) {
		return netip.AddrPort{}, fmt.Errorf("bad address %q", s)
	}
	// Each 32-bit word was printed as a host-order integer: turn the
	// printed (big-endian) digits back into the word, then lay the word
	// out in memory order, which is network order.
	b := make([]byte, len(raw))
	for i := 0; i < len(raw); i += 4 {
		binary.NativeEndian.PutUint32(b[i:], binary.BigEndian.Uint32(raw[i:]))
	}
	var a netip.Addr
	if len(b) == 4 {
		a = netip.AddrFrom4([4]byte(b))
	} else {
		a = netip.AddrFrom16([16]byte(b)).Unmap()
	}
	return netip.AddrPortFrom(a, uint16(port)), nil
}

// ownsFile reports whether process pid has an open file whose link text is
// target (e.g. "socket:[1234]").
func ownsFile(pid int, target string) bool {
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range ents {
		l, err := os.Readlink(dir + "/" + e.Name())
		if err == nil && l == target {
			return true
		}
	}
	return false
}
