//go:build !unix

package sim

const orphanEnv = "CI_REPORT_SIM_ORPHAN_OF"

// orphanHoldsPort cannot start a session of its own here: the server fails
// as it would on a unix system, naming no address.
func (s *simServer) orphanHoldsPort(serveEnv) int {
	s.fatal(nil, "RuntimeError: fault orphan-holds-port: "+errNoUnix.Error())
	return 1
}

func holdAsOrphan(string, string) int { return 2 }
