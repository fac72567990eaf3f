package forward

import (
	"crypto/tls"
	"net"

	"github.com/frayproxy/fray/proxy/observe"
)

// reset aborts the client's connection with a TCP RST (SO_LINGER 0) where
// the connection can be taken over (HTTP/1.x), and resets the stream
// otherwise (HTTP/2): there the handler is aborted once the stream's last
// event and its end have been observed (see pump.abortIfAsked), so that
// fray's own reset is recorded on every protocol path. The upstream request
// is cancelled first.
func (pm *pump) reset() {
	// What was written before the reset was on the wire before it.
	_ = pm.flush()
	pm.cause = observe.FaultReset
	if !pm.holding {
		pm.cancel(errFaultClosed)
	}
	conn, _, err := pm.rc.Hijack()
	if err != nil {
		pm.abort = true
		return
	}
	if tc := tcpConn(conn); tc != nil {
		_ = tc.SetLinger(0)
	}
	_ = conn.Close()
}

func tcpConn(c net.Conn) *net.TCPConn {
	for {
		switch v := c.(type) {
		case *net.TCPConn:
			return v
		case *tls.Conn:
			c = v.NetConn()
		default:
			return nil
		}
	}
}
