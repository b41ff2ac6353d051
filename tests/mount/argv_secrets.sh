#!/bin/bash
# Secrets on the daemon's command line (issue 14, item 13): every --env
# value (both spellings, and env= items of -o lists) is scrubbed from the
# daemon's argv once parsed, so neither /proc/PID/cmdline nor ps shows it,
# while the mount serves the values and keeps them across reloads. A
# secret given that way is a warning on stderr and in diagnostics, naming
# it, never its value.
. "$(dirname "$0")/lib.sh"

S1=hf_cmdline_5f2a91
S2=wandb_opt_77c3e0
S3=plain_eq_4411bb
S4=dbx_comma_90e1
ENVFS_STDERR_ALLOW='^primus-envfs: warning: (HF_TOKEN|WANDB_API_KEY|DATABRICKS_TOKEN) is a secret given as --env'
cfg="$TMP/exp.yaml"
printf 'env:\n  FROM_CONFIG: "1"\n' >"$cfg"
envfs_mount --specs "$ENVFS_SPECS" --config "$cfg" --env "HF_TOKEN=$S1" --env="PLAIN_X=$S3" \
	-o "env=WANDB_API_KEY=$S2,entry_timeout=5" -o"env=DATABRICKS_TOKEN=${S4}\\,b"
dir="$MNT/env/maxtext/gfx950"

# /proc/PID/cmdline and ps: no value, the names still there
tr '\0' ' ' <"/proc/$PID/cmdline" >"$TMP/cmdline"
ps -o args= -p "$PID" >"$TMP/ps"
for s in "$S1" "$S2" "$S3" "$S4"; do
	! grep -qF "$s" "$TMP/cmdline" || fail "/proc/$PID/cmdline shows $s: $(cat "$TMP/cmdline")"
	! grep -qF "$s" "$TMP/ps" || fail "ps shows $s: $(cat "$TMP/ps")"
done
grep -q 'HF_TOKEN=' "$TMP/cmdline" && grep -q 'env=WANDB_API_KEY=' "$TMP/cmdline" &&
	grep -q 'entry_timeout=5' "$TMP/cmdline" || fail "the scrub took more than the values: $(cat "$TMP/cmdline")"

# the mount has them, exactly (an escaped comma is a comma)
[ "$(cat "$dir/HF_TOKEN")" = "$S1" ] || fail "HF_TOKEN reads '$(cat "$dir/HF_TOKEN")'"
[ "$(cat "$dir/WANDB_API_KEY")" = "$S2" ] || fail "-o env=WANDB_API_KEY: reads '$(cat "$dir/WANDB_API_KEY")'"
[ "$(cat "$dir/DATABRICKS_TOKEN")" = "$S4,b" ] || fail "-o env= with \\, reads '$(cat "$dir/DATABRICKS_TOKEN")'"
[ "$(cat "$dir/PLAIN_X")" = "$S3" ] || fail "--env=PLAIN_X reads '$(cat "$dir/PLAIN_X")'"

# warnings naming the secrets, not their values; none for PLAIN_X
for n in HF_TOKEN WANDB_API_KEY DATABRICKS_TOKEN; do
	grep -q "warning: $n is a secret given as --env $n=\.\.\. on the command line" "$MNT/diagnostics" ||
		fail "diagnostics: no warning for $n: $(cat "$MNT/diagnostics")"
	grep -q "^primus-envfs: warning: $n is a secret" "$DAEMON_ERR" || fail "stderr: no warning for $n"
done
! grep -q PLAIN_X "$MNT/diagnostics" || fail "diagnostics warn about PLAIN_X, no secret"
for s in "$S1" "$S2" "$S3" "$S4"; do
	! grep -qF "$s" "$MNT/diagnostics" "$MNT/status" "$DAEMON_ERR" || fail "$s printed by the mount"
done

# a reload keeps them (they were copied before the scrub)
gen=$(sed -n 's/^generation: //p' "$MNT/status")
printf 'env:\n  FROM_CONFIG: "1"\n  NEW_AFTER_RELOAD: "1"\n' >"$cfg.new"
mv "$cfg.new" "$cfg"
wait_for_value "$dir/NEW_AFTER_RELOAD" 1 5000 >/dev/null
[ "$(sed -n 's/^generation: //p' "$MNT/status")" -gt "$gen" ] || fail "no reload"
[ "$(cat "$dir/HF_TOKEN")" = "$S1" ] || fail "HF_TOKEN after a reload reads '$(cat "$dir/HF_TOKEN")'"
[ "$(cat "$dir/WANDB_API_KEY")" = "$S2" ] || fail "WANDB_API_KEY after a reload"
envfs_umount

# the daemonized mount (no -f) is scrubbed as well
NMOUNT=$((NMOUNT + 1))
DAEMON_ERR="$TMP/daemon.$NMOUNT.err"
ERR_FILES+=("$DAEMON_ERR")
"$ENVFS_BIN" --specs "$ENVFS_SPECS" --env "HF_TOKEN=$S1" "$MNT" 2>"$DAEMON_ERR" || fail "daemonized mount failed"
mountpoint -q "$MNT" || fail "daemonized mount: not mounted"
PID=$(pgrep -f -n "^$ENVFS_BIN --specs") || fail "no daemon found"
tr '\0' ' ' <"/proc/$PID/cmdline" >"$TMP/cmdline2"
! grep -qF "$S1" "$TMP/cmdline2" || fail "daemonized: /proc/$PID/cmdline shows the secret"
[ "$(cat "$MNT/env/maxtext/gfx950/HF_TOKEN")" = "$S1" ] || fail "daemonized: HF_TOKEN"
fusermount3 -u "$MNT"
for _ in $(seq 1 100); do kill -0 "$PID" 2>/dev/null || break; sleep 0.05; done
PID=""
echo "ok: argv_secrets"
