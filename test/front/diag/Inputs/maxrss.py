"""Runs a command and fails unless it exits with status RC and its peak
resident memory stays under LIMIT_MB. Usage: maxrss.py LIMIT_MB RC CMD..."""
import resource
import subprocess
import sys

limit_mb, rc, cmd = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
r = subprocess.run(cmd, stdout=subprocess.DEVNULL)
peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
if r.returncode != rc:
    sys.exit("%s: exit status %d, expected %d" % (cmd[0], r.returncode, rc))
if peak_mb > limit_mb:
    sys.exit("%s: peak RSS %.0f MB, over the %d MB allowed" % (cmd[0], peak_mb, limit_mb))
