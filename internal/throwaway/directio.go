package throwaway

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// DirectFiles counts the data files under dataDir that the server's
// processes hold open, and how many of them are open with O_DIRECT (the
// flags of /proc/PID/fdinfo/FD): PostgreSQL's relation files (base/,
// global/) and InnoDB's tablespaces (ibdata*, *.ibd, undo*). WAL and redo
// logs are left out: direct I/O for data leaves them buffered. It needs to
// read the server processes' /proc entries (the same user, or root); files
// it cannot read are not counted.
func DirectFiles(dataDir string) (files, direct int) {
	dataDir = filepath.Clean(dataDir) + "/"
	procs, _ := filepath.Glob("/proc/[0-9]*/fd")
	for _, fdDir := range procs {
		fds, err := os.ReadDir(fdDir)
		if err != nil {
			continue
		}
		for _, fd := range fds {
			target, err := os.Readlink(filepath.Join(fdDir, fd.Name()))
			if err != nil || !strings.HasPrefix(target, dataDir) || !isDataFile(strings.TrimPrefix(target, dataDir)) {
				continue
			}
			info, err := os.ReadFile(filepath.Join(filepath.Dir(fdDir), "fdinfo", fd.Name()))
			if err != nil {
				continue
			}
			flags, ok := fdFlags(string(info))
			if !ok {
				continue
			}
			files++
			if flags&syscall.O_DIRECT != 0 {
				direct++
			}
		}
	}
	return files, direct
}

// isDataFile reports whether rel, a path inside a data directory, is a
// table or index file.
func isDataFile(rel string) bool {
	base := filepath.Base(rel)
	switch {
	case strings.HasPrefix(rel, "base/"), strings.HasPrefix(rel, "global/"):
		return true
	case strings.HasPrefix(base, "ibdata"), strings.HasSuffix(base, ".ibd"), strings.HasPrefix(base, "undo"):
		return true
	}
	return false
}

// fdFlags reads the octal "flags:" line of an fdinfo file.
func fdFlags(info string) (int, bool) {
	for line := range strings.Lines(info) {
		if v, ok := strings.CutPrefix(line, "flags:"); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 8, 64)
			return int(n), err == nil
		}
	}
	return 0, false
}
