package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ticketd/ticketd/wire/resp"
)

// Redis implements resp.Observer: the Redis front door's commands by
// name and outcome, their latency, and its connections.
type Redis struct {
	cmds       map[[2]string]prometheus.Counter // by name, outcome; read-only
	seconds    prometheus.Histogram
	connsOpen  prometheus.Gauge
	connsTotal prometheus.Counter
}

func newRedis(reg prometheus.Registerer) *Redis {
	cmds := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ticketd_redis_commands_total",
		Help: "Redis protocol commands, by command (\"other\": any name not served) and outcome (ok; error: an error reply such as not an integer; refused: unknown, unsupported, wrong arguments, not logged in; failed: no quorum, outcome unknown, timeout).",
	}, []string{"command", "outcome"})
	secs := prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "ticketd_redis_command_seconds",
		Help:    "Time from a Redis command's arrival to its reply being ready (writes: committed and applied).",
		Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16),
	})
	open := prometheus.NewGauge(prometheus.GaugeOpts{Name: "ticketd_redis_connections_open", Help: "Redis protocol connections open."})
	total := prometheus.NewCounter(prometheus.CounterOpts{Name: "ticketd_redis_connections_total", Help: "Redis protocol connections accepted."})
	reg.MustRegister(cmds, secs, open, total)
	r := &Redis{cmds: map[[2]string]prometheus.Counter{}, seconds: secs, connsOpen: open, connsTotal: total}
	for _, n := range resp.CommandNames() {
		for _, o := range resp.Outcomes() {
			r.cmds[[2]string{n, o}] = cmds.WithLabelValues(n, o)
		}
	}
	return r
}

// Command implements resp.Observer.
func (r *Redis) Command(name, outcome string, d time.Duration) {
	if c := r.cmds[[2]string{name, outcome}]; c != nil {
		c.Inc()
	}
	r.seconds.Observe(d.Seconds())
}

// ConnOpened implements resp.Observer.
func (r *Redis) ConnOpened() { r.connsOpen.Inc(); r.connsTotal.Inc() }

// ConnClosed implements resp.Observer.
func (r *Redis) ConnClosed() { r.connsOpen.Dec() }
