# py_errno PYTHON_EXPR [PREFIX...]: evaluates the expression in Python
# (under PREFIX, e.g. as_nobody, when given), with put(PATH, TEXT[, MODE])
# at hand, which writes and closes, so errors of close() count. Prints the
# expression's value when it is a string, else ok, or the errno name it
# failed with. Sourced by tests/mount/lib.sh and tests/sync/mountlib.sh.
# The system python starts in milliseconds; a version manager's shim can
# take a tenth of a second per call.
if [ -x /usr/bin/python3 ]; then PYTHON=/usr/bin/python3; else PYTHON=python3; fi
py_errno() {
	local expr=$1
	shift
	"$@" "$PYTHON" - "$expr" <<'PY'
import errno, os, sys
def put(path, text, mode="w"):
    with open(path, mode) as f:
        f.write(text)
try:
    r = eval(sys.argv[1])
    print(r if isinstance(r, str) else "ok")
except OSError as e:
    print(errno.errorcode.get(e.errno, str(e.errno)))
PY
}
