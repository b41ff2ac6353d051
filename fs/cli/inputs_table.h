/* inputs_table: every INPUTS option, once. The getopt_long entries, the
 * mount's -o names, the key enum and the INPUTS part of --help are
 * generated from these rows, and tests/unit/test_inputs_table.c checks
 * the man page and the bash completion against them, so an option added
 * here is added everywhere or a test fails.
 *
 * No INPUTS option has a short letter: the letters belong to the
 * commands (-b, -a, -o, -q, -f, ...).
 *
 * Rows, in --help order:
 *   ARG(key, long, mount, argname, help, man)   takes an argument
 *   FLAG(key, long, mount, help, man)           takes none
 *   ALT(long, argname, help, man)               another spelling of the
 *                                               row above: --help only
 * help: the text after the option in --help, "\n" between its lines;
 * man: the man page's .B/.BI line that introduces the option. */
#ifndef ENVFS_INPUTS_TABLE_H
#define ENVFS_INPUTS_TABLE_H

#define INPUTS_TABLE(ARG, FLAG, ALT) \
	ARG(INPUTS_SPECS, "specs", "specs", "DIR", \
	    "spec directory (default: the shipped specs)", \
	    ".BI \\-\\-specs \" DIR\" \"\\fR  [\\fPspecs=\\fIDIR\\fR]\"") \
	ARG(INPUTS_CONFIG, "config", "config", "FILE", \
	    "experiment YAML; its top-level env: block applies", \
	    ".BI \\-\\-config \" FILE\" \"\\fR  [\\fPconfig=\\fIFILE\\fR]\"") \
	ARG(INPUTS_INHERIT, "inherit", "inherit", "FILE", \
	    "image environment: docker env-file or NUL-separated\n" \
	    "environ (repeatable, a later file wins)", \
	    ".BI \\-\\-inherit \" FILE\" \"\\fR  [\\fPinherit=\\fIFILE\\fR]\"") \
	FLAG(INPUTS_INHERIT_ENV, "inherit-env", "inherit_env", \
	     "this process's own environment as image, below every\n" \
	     "--inherit file (what exec does unless --inherit or\n" \
	     "--clean is given)", \
	     ".BR \\-\\-inherit\\-env \"\\fR  [\\fPinherit_env\\fR]\"") \
	ARG(INPUTS_PASS, "pass", "pass", "NAME", \
	    "copy NAME from this process's environment (repeatable)", \
	    ".BI \\-\\-pass \" NAME\" \"\\fR  [\\fPpass=\\fINAME\\fR]\"") \
	ARG(INPUTS_ENV, "env", "env", "NAME=VALUE", \
	    "one-run setting, like the Primus CLI's --env (repeatable;\n" \
	    "visible to every user in ps: not for secrets)", \
	    ".BI \\-\\-env \" NAME\" = VALUE \"\\fR  [\\fPenv=\\fINAME\\fP=\\fIVALUE\\fR]\"") \
	ALT("env", "NAME", \
	    "the same, with the value of NAME in this process's\n" \
	    "environment (skipped when unset), as docker -e NAME", \
	    ".BI \\-\\-env \" NAME\" \"\\fR  [\\fPenv=\\fINAME\\fR]\"") \
	ARG(INPUTS_ENV_FILE, "env-file", "env_file", "FILE", \
	    "--env for every line of a docker env-file, values\n" \
	    "literal (repeatable): the way to pass secrets", \
	    ".BI \\-\\-env\\-file \" FILE\" \"\\fR  [\\fPenv_file=\\fIFILE\\fR]\"") \
	ARG(INPUTS_EXTRA_ARCH, "extra-arch", "extra_arch", "NAME", \
	    "show an extra arch directory (repeatable)", \
	    ".BI \\-\\-extra\\-arch \" NAME\" \"\\fR  [\\fPextra_arch=\\fINAME\\fR]\"") \
	ARG(INPUTS_SECRET, "secret", "secret", "NAME|GLOB", \
	    "treat the variables it names as secrets, beside the\n" \
	    "spec's and the secret patterns' (repeatable)", \
	    ".BI \\-\\-secret \" NAME|GLOB\" \"\\fR  [\\fPsecret=\\fINAME|GLOB\\fR]\"") \
	ARG(INPUTS_STATE, "state", "state", "FILE", \
	    "mount: persist overrides written through the mount", \
	    ".BI \\-\\-state \" FILE\" \"\\fR  [\\fPstate=\\fIFILE\\fR]\"") \
	ARG(INPUTS_HOST_ROOT, "host-root", "host_root", "DIR", \
	    "read the node's sys/ and proc/ under DIR (default /)", \
	    ".BI \\-\\-host\\-root \" DIR\" \"\\fR  [\\fPhost_root=\\fIDIR\\fR]\"") \
	ARG(INPUTS_PRIMUS_PATH, "primus-path", "primus_path", "DIR", \
	    "where Primus is in the container (a checkout, or a pip\n" \
	    "install's primus/): the runner's PRIMUS_PATH, and\n" \
	    "DATA_PATH, HF_HOME, PYTHONPATH derived from it", \
	    ".BI \\-\\-primus\\-path \" DIR\" \"\\fR  [\\fPprimus_path=\\fIDIR\\fR]\"") \
	ARG(INPUTS_IGNORE, "ignore", "ignore", "CODE[,CODE]", \
	    "silence the diagnostics of these codes (repeatable;\n" \
	    "the man page lists the codes)", \
	    ".BI \\-\\-ignore \" CODE\\fR[\\fB,\\fICODE\\fR]\" \"\\fR  [\\fPignore=\\fICODE\\fR[\\fB:\\fICODE\\fR]]\"")

/* One row, as data, for --help and the tests. */
struct inputs_row {
	const char *long_name;   /* without the dashes */
	const char *mount_name;  /* the -o name, without '='; NULL: ALT row */
	const char *arg;         /* the argument's name; NULL: a flag */
	const char *help;
	const char *man;
};

extern const struct inputs_row inputs_rows[];
extern const unsigned inputs_nrows;

#endif
