# End-to-end: the bash and zsh completions (system/primus-envfs.bash and
# system/_primus-envfs, which `meson install` installs: tests/e2e/install.sh)
# complete commands, options and the backends and arches that
# `primus-envfs list` prints, in real shells: bash through its completion
# function, zsh through a real interactive line editor on a pty (zpty).
set -eu
. "$(dirname "$0")/lib.sh"

: "${ENVFS_SOURCE_ROOT:?ENVFS_SOURCE_ROOT must name the source tree}"
BASH_COMP="$ENVFS_SOURCE_ROOT/system/primus-envfs.bash"
ZSH_DIR="$ENVFS_SOURCE_ROOT/system"
HOST="$ENVFS_FIXTURES/host/gfx950"
mkdir "$TMP/bin"
ln -s "$ENVFS_BIN" "$TMP/bin/primus-envfs"

# bash_complete WANT WORD...: completing the last WORD gives exactly WANT
# (space-separated, sorted).
bash_complete() {
	_want=$1
	shift
	_got=$(PATH="$TMP/bin:$PATH" bash --norc --noprofile -c '
		source "$1"; shift
		COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
		COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
		_primus_envfs
		printf "%s\n" "${COMPREPLY[@]}" | LC_ALL=C sort | tr "\n" " "' bash "$BASH_COMP" "$@")
	[ "$_got" = "$_want " ] || fail "bash: completing '$*': got '$_got', want '$_want'"
}

bash_complete "maxdiffusion maxtext" primus-envfs resolve -b ma
bash_complete "maxtext" primus-envfs exec --backend = maxt
bash_complete "maxtext" primus-envfs check --backend=maxt
bash_complete "cuda" primus-envfs resolve -b torch_fl -a cu
bash_complete "gfx942 gfx950 host" primus-envfs resolve --host-root "$HOST" -b maxtext -a ""
bash_complete "gfx942 gfx950" primus-envfs resolve -b maxtext -a gfx
bash_complete "check" primus-envfs che
bash_complete "compose" primus-envfs resolve --format co
bash_complete "json" primus-envfs check --format j
bash_complete "--env --env-file" primus-envfs resolve --env
bash_complete "--extra-arch" primus-envfs list --ext
bash_complete "verify" primus-envfs veri
bash_complete "--nodes" primus-envfs verify --sync etcd://n0:2379 --no
bash_complete "maxtext" primus-envfs verify -b maxt
# the specs of the line: a copy without torch_fl has no torch_fl
cp -R "$ENVFS_SPECS" "$TMP/specs"
rm "$TMP/specs/torch_fl.yaml"
bash_complete "torchtitan" primus-envfs resolve --specs "$TMP/specs" -b to
bash_complete "torch_fl torchtitan" primus-envfs resolve -b to

# Nothing `list` prints is ever run or expanded. A hostile spec is refused
# at load (list prints nothing for it); a `list` that prints such names
# anyway (an older or another build: the stub below) gives completions
# that are only the names an arch or backend can have, and runs nothing.
mkdir "$TMP/evil" "$TMP/work"
cp -R "$ENVFS_SPECS" "$TMP/hostile-specs"
cp "$ENVFS_SOURCE_ROOT/tests/hostile/spec/arch_cmd_subst.yaml" \
	"$ENVFS_SOURCE_ROOT/tests/hostile/spec/backend_cmd_subst.yaml" "$TMP/hostile-specs/"
cat >"$TMP/evil/primus-envfs" <<'EOF'
#!/bin/sh
cat <<'LIST'
maxtext gfx942 $(touch${IFS}pwn1) `touch${IFS}pwn2` gfx9*0 host=gfx942
tt$(touch${IFS}pwn3) gfx942
$(touch${IFS}pwn4) gfx942
LIST
EOF
chmod +x "$TMP/evil/primus-envfs"
(
	cd "$TMP/work"
	bash_complete "" primus-envfs resolve --specs "$TMP/hostile-specs" -b tt
	bash_complete "" primus-envfs resolve --specs "$TMP/hostile-specs" -b hostile -a ""
	ln -sf "$TMP/evil/primus-envfs" "$TMP/bin/primus-envfs"
	bash_complete "maxtext" primus-envfs resolve -b ""
	bash_complete "gfx942 host" primus-envfs resolve -b maxtext -a ""
	bash_complete "gfx942" primus-envfs resolve -a gfx
	touch gfx950
	bash_complete "gfx942 host" primus-envfs resolve -b maxtext -a ""
	rm gfx950
	ln -sf "$ENVFS_BIN" "$TMP/bin/primus-envfs"
)
[ -z "$(ls "$TMP/work")" ] || fail "bash completion ran code from list's output: $(ls "$TMP/work")"

# zsh, through the line editor: TAB, then a widget that writes $BUFFER.
if ! command -v zsh >/dev/null 2>&1; then
	echo "zsh not installed: the zsh completion was not tried (bash passed)" >&2
	exit 77
fi
cat >"$TMP/drive.zsh" <<'ZSH'
# drive.zsh OUT LINE...: in an interactive zsh on a pty, types each LINE
# and TAB, then Ctrl-X Ctrl-B (which appends $BUFFER to OUT) and Ctrl-U,
# waiting for each line of OUT before the next LINE.
zmodload zsh/zpty
out=$1; shift
zpty z zsh -f -i
zpty -w z "unset zle_bracketed_paste; PS1='> '; PATH=$PATH; fpath=($ZSH_DIR \$fpath)"
# -d names a file of ours: as root, zsh replaced -d /dev/null by a regular
# file, which breaks every later test (and the machine's /dev/null).
zpty -w z "autoload -Uz compinit; compinit -u -D -d $out.zcompdump"
zpty -w z "show() { print -r -- \"\$BUFFER\" >>$out; }; zle -N show; bindkey '^X^B' show"
# Type nothing before the line editor runs: what comes while a command
# still runs reaches the terminal, not zle, and a TAB there completes
# nothing. Wait for the output of the last setup command, then a prompt.
zpty -w z "print SETUP''DONE"
zpty -r -m z buf '*SETUPDONE*> '
n=0
for line in "$@"; do
  zpty -w -n z "$line"$'\t'
  sleep 0.5
  zpty -w -n z $'\C-x\C-b'
  (( n++ ))
  for i in {1..100}; do
    (( $(wc -l <$out) >= n )) && break
    sleep 0.1
  done
  zpty -w -n z $'\C-u'
done
zpty -w z "exit"
zpty -d z
ZSH
: >"$TMP/zsh.out"
ZSH_DIR="$ZSH_DIR" PATH="$TMP/bin:$PATH" timeout 60 zsh -f "$TMP/drive.zsh" "$TMP/zsh.out" \
	'primus-envfs resolve -b maxt' \
	'primus-envfs exec -b torch_fl -a cu' \
	"primus-envfs resolve --host-root $HOST -b maxtext -a ho" \
	'primus-envfs che' \
	'primus-envfs resolve --format=comp' \
	'primus-envfs list --ext' \
	'primus-envfs veri' \
	'primus-envfs verify --nod' >/dev/null 2>&1 || true
cat >"$TMP/zsh.want" <<EOF
primus-envfs resolve -b maxtext 
primus-envfs exec -b torch_fl -a cuda 
primus-envfs resolve --host-root $HOST -b maxtext -a host 
primus-envfs check 
primus-envfs resolve --format=compose 
primus-envfs list --extra-arch=
primus-envfs verify 
primus-envfs verify --nodes=
EOF
diff -u "$TMP/zsh.want" "$TMP/zsh.out" >&2 || fail "zsh completions differ"
# The stub's hostile names, through zsh: only the names a backend or an
# arch can have are offered (so each line has one completion), and
# nothing runs.
: >"$TMP/zsh.evil.out"
ln -sf "$TMP/evil/primus-envfs" "$TMP/bin/primus-envfs"
(cd "$TMP/work" && ZSH_DIR="$ZSH_DIR" PATH="$TMP/bin:$PATH" timeout 60 zsh -f "$TMP/drive.zsh" \
	"$TMP/zsh.evil.out" 'primus-envfs resolve -b ' 'primus-envfs resolve -b maxtext -a gfx' \
	>/dev/null 2>&1) || true
ln -sf "$ENVFS_BIN" "$TMP/bin/primus-envfs"
cat >"$TMP/zsh.evil.want" <<EOF
primus-envfs resolve -b maxtext 
primus-envfs resolve -b maxtext -a gfx942 
EOF
diff -u "$TMP/zsh.evil.want" "$TMP/zsh.evil.out" >&2 || fail "zsh completions of hostile names differ"
[ -z "$(ls "$TMP/work")" ] || fail "zsh completion ran code from list's output: $(ls "$TMP/work")"
echo "ok: completion"
