# bash completion for primus-envfs: commands, options, and the backends
# and arches that `primus-envfs list` prints for the specs on the line.
# Installed as BASH_COMPLETION_DIR/completions/primus-envfs; needs nothing
# but bash itself.

# `primus-envfs list`, with the --specs and --extra-arch of the line.
_primus_envfs_list()
{
	local -a args=()
	local i w
	for ((i = 1; i < COMP_CWORD; i++)); do
		w=${COMP_WORDS[i]}
		case $w in
		--specs | --extra-arch | --host-root)
			if [[ ${COMP_WORDS[i + 1]} == = ]]; then
				args+=("$w=${COMP_WORDS[i + 2]}")
			else
				args+=("$w=${COMP_WORDS[i + 1]}")
			fi
			;;
		--specs=* | --extra-arch=* | --host-root=*) args+=("$w") ;;
		esac
	done
	"${COMP_WORDS[0]}" list "${args[@]}" 2>/dev/null
}

# Adds to COMPREPLY each line of stdin that starts with $1 and is a name
# a backend or an arch can have. What list prints is data: compgen -W
# would run each word through the shell's expansions (a spec's
# "$(cmd)" would run on TAB), and an unquoted $(...) would glob it.
_primus_envfs_add()
{
	local w re='^[A-Za-z0-9_][A-Za-z0-9_.:+-]*$'
	while IFS= read -r w; do
		[[ $w =~ $re && $w == "$1"* ]] && COMPREPLY+=("$w")
	done
	return 0
}

# The value given to -b/--backend on the line, if any.
_primus_envfs_backend()
{
	local i w
	for ((i = 1; i < COMP_CWORD; i++)); do
		w=${COMP_WORDS[i]}
		case $w in
		-b | --backend)
			w=${COMP_WORDS[i + 1]}
			[[ $w == = ]] && w=${COMP_WORDS[i + 2]}
			echo "$w"
			return
			;;
		--backend=*) echo "${w#*=}"; return ;;
		-b?*) echo "${w#-b}"; return ;;
		esac
	done
}

_primus_envfs()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
	local cmd="" opt i w
	local inputs="--specs --config --inherit --inherit-env --pass --env --env-file --extra-arch --secret --ignore --primus-path --state --host-root --help"

	# --opt=value arrives as three words (bash breaks at '=').
	opt=$prev
	if [[ $cur == = ]]; then
		cur=""
	elif [[ $prev == = ]] && ((COMP_CWORD >= 2)); then
		opt=${COMP_WORDS[COMP_CWORD - 2]}
	elif [[ $cur == --*=* ]]; then
		opt=${cur%%=*}
		cur=${cur#*=}
	fi
	for ((i = 1; i < COMP_CWORD; i++)); do
		w=${COMP_WORDS[i]}
		if [[ -z $cmd ]]; then
			case $w in
			resolve | check | exec | list | verify | set | unset | get) cmd=$w ;;
			esac
		fi
		# exec: after -- (or the command), complete the command's words
		if [[ $cmd == exec && $w == -- ]]; then
			if ((i == COMP_CWORD - 1)); then
				COMPREPLY=($(compgen -c -- "$cur"))
			else
				COMPREPLY=($(compgen -f -- "$cur"))
			fi
			return
		fi
	done

	case $opt in
	-b | --backend)
		COMPREPLY=()
		_primus_envfs_add "$cur" < <(_primus_envfs_list | awk '{ print $1 }')
		return
		;;
	-a | --arch)
		local b
		b=$(_primus_envfs_backend)
		COMPREPLY=()
		_primus_envfs_add "$cur" < <(_primus_envfs_list | awk -v b="$b" '
			b == "" || $1 == b {
				for (i = 2; i <= NF; i++)
					if ($i ~ /^host=/) h = 1; else if (!seen[$i]++) print $i
			}
			END { if (h) print "host" }')
		return
		;;
	--format)
		case $cmd in
		resolve) COMPREPLY=($(compgen -W "env_file environ sh json compose explain digest" -- "$cur")) ;;
		*) COMPREPLY=($(compgen -W "text json" -- "$cur")) ;;
		esac
		return
		;;
	--config | --inherit | --env-file | --state | --sync-ca | --sync-cert | --sync-key | \
		--sync-password-file)
		compopt -o filenames 2>/dev/null
		COMPREPLY=($(compgen -f -- "$cur"))
		return
		;;
	--specs | --host-root | --mount)
		compopt -o filenames 2>/dev/null
		COMPREPLY=($(compgen -d -- "$cur"))
		return
		;;
	--pass | --env | --extra-arch | --secret | --sync | --run | --sync-prefix | --sync-user | \
		--sync-node | --sync-timeout | --nodes | --wait)
		return
		;;
	-o)
		[[ -z $cmd ]] || return
		COMPREPLY=($(compgen -W "config= state= inherit= env= env_file= pass= extra_arch= secret=
			ignore= primus_path= history= specs= host_root= inherit_env ro allow_other
			entry_timeout= attr_timeout= spin= noinval" -- "$cur"))
		compopt -o nospace 2>/dev/null
		return
		;;
	esac

	if [[ $cur == -* ]]; then
		case $cmd in
		resolve) COMPREPLY=($(compgen -W "$inputs -b --backend -a --arch --format --force" -- "$cur")) ;;
		check) COMPREPLY=($(compgen -W "$inputs -b --backend -a --arch --format --quiet" -- "$cur")) ;;
		exec) COMPREPLY=($(compgen -W "$inputs -b --backend -a --arch --clean --force --" -- "$cur")) ;;
		list) COMPREPLY=($(compgen -W "$inputs --format" -- "$cur")) ;;
		set | unset | get) COMPREPLY=($(compgen -W "$inputs --mount" -- "$cur")) ;;
		verify) COMPREPLY=($(compgen -W "--sync --run --nodes --wait -b --backend -a --arch
			-q --quiet --sync-prefix --sync-ca --sync-cert --sync-key --sync-user
			--sync-password-file --sync-timeout" -- "$cur")) ;;
		*) COMPREPLY=($(compgen -W "$inputs -f -s -d --debug -o --version" -- "$cur")) ;;
		esac
		return
	fi
	if [[ -z $cmd ]]; then
		# a command, or the mount point of a mount
		compopt -o filenames 2>/dev/null
		COMPREPLY=($(compgen -W "resolve check exec list verify set unset get" -- "$cur") $(compgen -d -- "$cur"))
		return
	fi
	if [[ $cmd == exec ]]; then
		COMPREPLY=($(compgen -c -- "$cur"))
	fi
}
complete -F _primus_envfs primus-envfs
