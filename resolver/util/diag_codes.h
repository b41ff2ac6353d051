/* diag_codes: the one table of diagnostic codes.
 *
 * Every diagnostic carries a code from this table: its text (PE + three
 * digits), its severity and what it means. A code is never given a
 * second meaning; a code that is no longer emitted stays out of use. The
 * man page (docs/primus-envfs.1, DIAGNOSTIC CODES) lists each line of the
 * table and a unit test holds the two together, so a new diagnostic is
 * one line here and one in the man page:
 *
 *     X(DC_NAME, 123, DIAG_WARNING, "what the diagnostic says is wrong")
 *
 * The numbers are only stringized ("PE" #num), never read as integers,
 * so their leading zeros are text. Ranges: 0xx loading inputs, 1xx the
 * config's env: block, 2xx image and command-line inputs, 3xx values
 * against their declared types, 4xx resolving a directory, 5xx the
 * specs' rules (590-592 for a rule that names no code of its own). */
#ifndef ENVFS_DIAG_CODES_H
#define ENVFS_DIAG_CODES_H

#include <stddef.h>

/* Each code's severity, fixed by its table line. */
enum diag_sev { DIAG_INFO = 0, DIAG_WARNING = 1, DIAG_ERROR = 2 };

#define DIAG_CODES(X) \
	X(DC_INPUT_UNREADABLE,      001, DIAG_ERROR,   "an input file or directory cannot be read") \
	X(DC_YAML_SYNTAX,           002, DIAG_ERROR,   "a YAML syntax error") \
	X(DC_YAML_LIMIT,            003, DIAG_ERROR,   "a YAML file passes a loader limit (size, nesting, nodes, aliases) or holds a NUL byte") \
	X(DC_SPEC_SCHEMA,           004, DIAG_ERROR,   "a spec file breaks the spec schema") \
	X(DC_SPEC_SET,              005, DIAG_ERROR,   "the spec directory is inconsistent (a backend twice, no base.yaml, no arches, no catalog)") \
	X(DC_STATE_CORRUPT,         006, DIAG_ERROR,   "the state file is corrupt") \
	X(DC_INPUT_UNTRUSTED,       007, DIAG_WARNING, "another user can change an input file") \
	X(DC_LOAD_FAILED,           008, DIAG_ERROR,   "the mount could not load its inputs again") \
	X(DC_NAME_LIST_BAD,         009, DIAG_ERROR,   "a name list under specs/names cannot be read or breaks its format") \
	X(DC_CONFIG_EXTENDS,      101, DIAG_INFO,    "env: blocks of extends: presets are not applied") \
	X(DC_CONFIG_NESTED_ENV,   102, DIAG_WARNING, "an env: block under a module is not applied") \
	X(DC_CONFIG_KEY_TYPED,    103, DIAG_WARNING, "an unquoted env: key that YAML types names another variable") \
	X(DC_CONFIG_VALUE_TYPED,  104, DIAG_WARNING, "an unquoted env: value that YAML types is exported as Python prints it") \
	X(DC_CONFIG_VALUE_NESTED, 105, DIAG_ERROR,   "an env: value that is a list or a mapping") \
	X(DC_CONFIG_KEY_STOPS,    106, DIAG_ERROR,   "an env: key Python refuses stops the block") \
	X(DC_CONFIG_KEY_REPEATED, 107, DIAG_WARNING, "an env: key given twice") \
	X(DC_CONFIG_TOO_LONG,     108, DIAG_ERROR,   "an env: entry longer than one environment string may be") \
	X(DC_CONFIG_DOCUMENTS,    109, DIAG_ERROR,   "the config holds more than one YAML document") \
	X(DC_CONFIG_SAFE_LOAD,    110, DIAG_ERROR,   "Primus's yaml.safe_load fails on the config") \
	X(DC_CONFIG_NOT_MAPPING,  111, DIAG_ERROR,   "the config is not a mapping at the top level") \
	X(DC_CONFIG_ENV_REPEATED, 112, DIAG_WARNING, "the config has more than one env: block") \
	X(DC_CONFIG_ENV_BAD,      113, DIAG_ERROR,   "the env: block is not a mapping") \
	X(DC_CONFIG_UNSET_REF,    114, DIAG_WARNING, "an env: value reads a variable that is not set") \
	X(DC_CONFIG_DEFAULT_SYNTAX, 115, DIAG_WARNING, "an env: value uses a default syntax env: does not have") \
	X(DC_CONFIG_OWNS_FLAGS,   116, DIAG_WARNING, "the env: block owns a flag list, so the managed flags are skipped") \
	X(DC_CONFIG_RUNNER_READS, 117, DIAG_WARNING, "the env: block sets a variable the runner reads before it is applied") \
	X(DC_CONFIG_IGNORE_BAD,   118, DIAG_WARNING, "a primus-envfs: ignore= comment names something that is not a code") \
	X(DC_CONFIG_FRAMEWORK,    119, DIAG_WARNING, "a module's framework names no backend the specs know") \
	X(DC_IMAGE_NAME,          201, DIAG_WARNING, "an inherited name is not a shell variable name") \
	X(DC_ENV_FILE_UTF8,       202, DIAG_WARNING, "an env-file line that is not valid UTF-8") \
	X(DC_ENV_FILE_LONG,       203, DIAG_WARNING, "an env-file line longer than docker reads") \
	X(DC_ENV_FILE_NAME,       204, DIAG_ERROR,   "an env-file line that names no variable") \
	X(DC_ENVIRON_ENTRY,       205, DIAG_ERROR,   "an environ entry that is not NAME=value") \
	X(DC_IMAGE_TOO_LARGE,     206, DIAG_ERROR,   "an inherited file too large to be an environment") \
	X(DC_CLI_ENV_FORMAT,      207, DIAG_ERROR,   "a --env that is not NAME=VALUE, or an --env-file name no shell can export") \
	X(DC_CLI_SECRET_INLINE,   208, DIAG_WARNING, "a secret given inline on the command line") \
	X(DC_SLURM_NO_NODELIST,   209, DIAG_WARNING, "under Slurm, SLURM_NODELIST is not set, so MASTER_ADDR is not derived") \
	X(DC_SLURM_BAD_NODELIST,  210, DIAG_WARNING, "SLURM_NODELIST is not a Slurm host list, so MASTER_ADDR is not derived") \
	X(DC_SLURM_MASTER_ADDR,   211, DIAG_ERROR,   "under Slurm, a MASTER_ADDR that is not the first host of SLURM_NODELIST (the launcher exits)") \
	X(DC_TYPE_INFO,           301, DIAG_INFO,    "a value outside its declared type, which the spec reports as info") \
	X(DC_TYPE_WARNING,        302, DIAG_WARNING, "a value outside its declared type, which the spec reports as a warning") \
	X(DC_TYPE_ERROR,          303, DIAG_ERROR,   "a value outside its declared type, which the spec reports as an error") \
	X(DC_OWNED_UNKNOWN,       304, DIAG_WARNING, "an unknown name in a prefix a spec owns") \
	X(DC_PIN_CONTRADICTED,    305, DIAG_ERROR,   "a value contradicts the one the backend forces on this arch") \
	X(DC_PARAM_EMPTY,         306, DIAG_WARNING, "a parameter set but empty is read as empty, not as its default") \
	X(DC_DIR_TOO_LARGE,       401, DIAG_ERROR,   "the values of a directory pass the memory bound") \
	X(DC_WHEN_UNREADABLE,     402, DIAG_WARNING, "a when: condition compares a value it cannot read") \
	X(DC_VALUE_TOO_LONG,      403, DIAG_ERROR,   "a spec value expands past the size of one environment string") \
	X(DC_TEMPLATE_PROBLEM,    404, DIAG_WARNING, "a spec template cannot be expanded as written") \
	X(DC_FLAG_REPEATED,       405, DIAG_INFO,    "a flag given more than once in a flag list (the last wins)") \
	X(DC_REF_CYCLE,           406, DIAG_ERROR,   "a reference cycle between spec entries") \
	X(DC_REF_FORWARD,         407, DIAG_WARNING, "a spec entry reads a name its file sets only later") \
	X(DC_ENV_LINE_NO_EQUALS,  408, DIAG_ERROR,   "a line of an env file value holds no '='") \
	X(DC_ENV_LINE_NO_NAME,    409, DIAG_ERROR,   "a line of an env file value names no variable") \
	X(DC_LAUNCH_REPLACES,     410, DIAG_WARNING, "the launch replaces a shown value (the launch fixed point)") \
	X(DC_LAUNCH_ADDS,         411, DIAG_WARNING, "a variable appears at launch though this run does not set it") \
	X(DC_NAME_IS_VIEW,        412, DIAG_WARNING, "a variable named like a view file") \
	X(DC_CLI_FLAG_REPLACED,   413, DIAG_WARNING, "a flag given with --env that a later step's flags replace") \
	X(DC_RULE_HIPBLASLT_DETERMINISTIC, 501, DIAG_ERROR, "PRIMUS_HIPBLASLT_TUNING=1 together with PRIMUS_DETERMINISTIC=1") \
	X(DC_RULE_HIPBLASLT_STAGE,  502, DIAG_WARNING, "PRIMUS_HIPBLASLT_TUNING_STAGE without PRIMUS_HIPBLASLT_TUNING=1") \
	X(DC_RULE_NNODES,           503, DIAG_ERROR,   "NNODES is not a positive integer (the launcher exits)") \
	X(DC_RULE_NODE_RANK,        504, DIAG_ERROR,   "NODE_RANK is not a non-negative integer (the launcher exits)") \
	X(DC_RULE_MASTER_PORT_INT,  505, DIAG_ERROR,   "MASTER_PORT is not a non-negative integer (the launcher exits)") \
	X(DC_RULE_NODE_RANK_RANGE,  506, DIAG_ERROR,   "NODE_RANK is not below NNODES (the launcher exits)") \
	X(DC_RULE_LOCALHOST_NODES,  507, DIAG_WARNING, "MASTER_ADDR=localhost on more than one node") \
	X(DC_RULE_LOCALHOST_SLURM,  508, DIAG_WARNING, "MASTER_ADDR=localhost under Slurm, which the launcher replaces") \
	X(DC_RULE_GPUS_INT,         509, DIAG_ERROR,   "GPUS_PER_NODE is not a positive integer (runner validation exits)") \
	X(DC_RULE_GPUS_RANGE,       510, DIAG_ERROR,   "GPUS_PER_NODE outside 1 to 72 (runner validation exits)") \
	X(DC_RULE_MASTER_ADDR,      511, DIAG_ERROR,   "MASTER_ADDR holds characters runner validation refuses") \
	X(DC_RULE_MASTER_PORT_RANGE, 512, DIAG_ERROR,  "MASTER_PORT outside 1024 to 65535 (runner validation exits)") \
	X(DC_RULE_INFO,             590, DIAG_INFO,    "a spec rule with no code of its own matched (info)") \
	X(DC_RULE_WARNING,          591, DIAG_WARNING, "a spec rule with no code of its own matched (warning)") \
	X(DC_RULE_ERROR,            592, DIAG_ERROR,   "a spec rule with no code of its own matched (error)") \
	X(DC_NAME_MISSPELLED,       601, DIAG_WARNING, "a name nothing reads, close to a name a reader reads (did you mean)") \
	X(DC_NAME_PREFIX_ONLY,      602, DIAG_INFO,    "a name with a reader's prefix that nothing is known to read") \
	X(DC_NAME_OTHER_FRAMEWORK,  603, DIAG_WARNING, "a name set for this run that only another framework reads") \
	X(DC_NAME_OTHER_IMAGE,      604, DIAG_INFO,    "a name the image sets that only another framework reads") \
	X(DC_XLA_TOKEN_SHAPE,       611, DIAG_WARNING, "an XLA_FLAGS token not of the form --xla_NAME[=VALUE]") \
	X(DC_XLA_FLAG_UNKNOWN,      612, DIAG_WARNING, "an XLA_FLAGS flag XLA does not define") \
	X(DC_XLA_FLAG_NOT_BOOL,     613, DIAG_WARNING, "a boolean XLA flag given a value that is not a boolean") \
	X(DC_CLI_REPLACED_BY_CONFIG, 621, DIAG_WARNING, "a --env value the config env: block replaces") \
	X(DC_VIEW_OMITS,            701, DIAG_WARNING, "a view leaves out a variable it cannot carry") \
	X(DC_VIEW_OMITS_IMAGE,      702, DIAG_INFO,    "a view leaves out a variable the image gives (the image still does)")

enum diag_code {
#define DIAG_CODE_ENUM(name, num, sev, meaning) name,
	DIAG_CODES(DIAG_CODE_ENUM)
#undef DIAG_CODE_ENUM
	DIAG_NCODES
};

struct diag_code_info {
	const char *code;        /* "PE104" */
	enum diag_sev sev;
	const char *meaning;
};

/* The table line of c; NULL for a value outside the enum. Borrowed. */
const struct diag_code_info *diag_code_info(enum diag_code c);
/* The code whose text is s[0..n) ("PE104", any case). Returns 0, or
 * -EINVAL when no code of the table has that text. */
int diag_code_parse(const char *s, size_t n, enum diag_code *out);

#endif
