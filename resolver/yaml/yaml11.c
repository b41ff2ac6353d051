/* yaml11: PyYAML's implicit resolver (lib/yaml/resolver.py) and
 * SafeConstructor (lib/yaml/constructor.py) for plain scalars, followed by
 * Python's str(). The regexes are matched by hand, alternative by
 * alternative, so each function below names the regex it implements.
 *
 *   $ python3 -c 'import yaml; print(str(yaml.safe_load("v: 010")["v"]))'
 *   8
 */
#include "grow.h"
#include "yaml11.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Python >= 3.11 (and the security releases of 3.7-3.10) refuse to convert
 * ints of more digits than this to or from decimal text. */
#define PY_INT_MAX_STR_DIGITS 4300

static bool is_digit(char c) { return c >= '0' && c <= '9'; }
static bool is_digit_(char c) { return is_digit(c) || c == '_'; }
static bool is_sign(char c) { return c == '-' || c == '+'; }

static bool eq(const char *s, size_t n, const char *lit)
{
	return strlen(lit) == n && memcmp(s, lit, n) == 0;
}

static bool eq_any(const char *s, size_t n, const char *const *lits)
{
	for (; *lits; lits++)
		if (eq(s, n, *lits))
			return true;
	return false;
}

static size_t skip_digits_(const char *s, size_t i, size_t n)
{
	while (i < n && is_digit_(s[i]))
		i++;
	return i;
}

static bool all_in(const char *s, size_t i, size_t n, const char *set)
{
	for (; i < n; i++)
		if (!strchr(set, s[i]) || !s[i])
			return false;
	return true;
}

/* (?::[0-5]?[0-9])+ from i: returns the end, or i when no group matched. */
static size_t sexagesimal_groups(const char *s, size_t i, size_t n)
{
	while (i + 1 < n && s[i] == ':' && is_digit(s[i + 1])) {
		if (i + 2 < n && is_digit(s[i + 2]) && s[i + 1] <= '5')
			i += 3;
		else
			i += 2;
	}
	return i;
}

/* (?:[eE][-+][0-9]+)?$ from i. */
static bool exponent_to_end(const char *s, size_t i, size_t n)
{
	if (i == n)
		return true;
	if (s[i] != 'e' && s[i] != 'E')
		return false;
	if (++i >= n || !is_sign(s[i]))
		return false;
	if (++i >= n)
		return false;
	for (; i < n; i++)
		if (!is_digit(s[i]))
			return false;
	return true;
}

/* ^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?
 *   |\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?
 *   |[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*
 *   |[-+]?\.(?:inf|Inf|INF)
 *   |\.(?:nan|NaN|NAN))$ */
static bool is_float(const char *s, size_t n)
{
	static const char *const nan[] = { ".nan", ".NaN", ".NAN", NULL };
	static const char *const inf[] = { ".inf", ".Inf", ".INF", NULL };
	size_t i = 0, j, k;

	if (eq_any(s, n, nan))
		return true;
	if (n && is_sign(s[0]))
		i = 1;
	if (eq_any(s + i, n - i, inf))
		return true;
	if (i < n && is_digit(s[i])) {
		j = skip_digits_(s, i + 1, n);
		if (j < n && s[j] == '.')
			return exponent_to_end(s, skip_digits_(s, j + 1, n), n);
		k = sexagesimal_groups(s, j, n);
		if (k == j || k >= n || s[k] != '.')
			return false;
		return skip_digits_(s, k + 1, n) == n;
	}
	/* The second alternative takes no sign: "-.5" is a string. */
	if (i == 0 && n >= 2 && s[0] == '.' && is_digit(s[1]))
		return exponent_to_end(s, skip_digits_(s, 2, n), n);
	return false;
}

/* ^(?:[-+]?0b[0-1_]+
 *   |[-+]?0[0-7_]+
 *   |[-+]?(?:0|[1-9][0-9_]*)
 *   |[-+]?0x[0-9a-fA-F_]+
 *   |[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$ */
static bool is_int(const char *s, size_t n)
{
	size_t i = 0, j;

	if (n && is_sign(s[0]))
		i = 1;
	if (i >= n)
		return false;
	if (s[i] == '0') {
		if (n - i == 1)
			return true;
		if (s[i + 1] == 'b')
			return n - i > 2 && all_in(s, i + 2, n, "01_");
		if (s[i + 1] == 'x')
			return n - i > 2 &&
			       all_in(s, i + 2, n, "0123456789abcdefABCDEF_");
		return all_in(s, i + 1, n, "01234567_");
	}
	if (s[i] < '1' || s[i] > '9')
		return false;
	j = skip_digits_(s, i + 1, n);
	if (j == n)
		return true;
	return sexagesimal_groups(s, j, n) == n && s[j] == ':';
}

struct ts {
	int year, month, day;
	bool has_time;
	int hour, minute, second;
	long micro;
	bool has_tz;
	int tz_sign, tz_hour, tz_minute;
};

/* Reads 1..max digits at *i into *v. */
static bool read_num(const char *s, size_t *i, size_t n, int min, int max,
		     int *v)
{
	int k = 0;

	*v = 0;
	while (*i < n && k < max && is_digit(s[*i])) {
		*v = *v * 10 + (s[*i] - '0');
		(*i)++;
		k++;
	}
	return k >= min;
}

/* The resolver's regex:
 * ^(?:[0-9]{4}-[0-9]{2}-[0-9]{2}
 *   |[0-9]{4}-[0-9][0-9]?-[0-9][0-9]?(?:[Tt]|[ \t]+)[0-9][0-9]?
 *    :[0-9][0-9]:[0-9][0-9](?:\.[0-9]*)?
 *    (?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?)$
 * with the constructor's groups filled in on a match. */
static bool parse_ts(const char *s, size_t n, struct ts *t)
{
	size_t i = 0, m, d;
	int frac_digits = 0;

	memset(t, 0, sizeof(*t));
	if (!read_num(s, &i, n, 4, 4, &t->year) || i >= n || s[i++] != '-')
		return false;
	m = i;
	if (!read_num(s, &i, n, 1, 2, &t->month) || i >= n || s[i++] != '-')
		return false;
	d = i;
	if (!read_num(s, &i, n, 1, 2, &t->day))
		return false;
	/* A date alone needs two-digit month and day. */
	if (i == n)
		return d - m == 3 && i - d == 2;
	if (s[i] == 'T' || s[i] == 't') {
		i++;
	} else if (s[i] == ' ' || s[i] == '\t') {
		while (i < n && (s[i] == ' ' || s[i] == '\t'))
			i++;
	} else {
		return false;
	}
	t->has_time = true;
	if (!read_num(s, &i, n, 1, 2, &t->hour) || i >= n || s[i++] != ':')
		return false;
	if (!read_num(s, &i, n, 2, 2, &t->minute) || i >= n || s[i++] != ':')
		return false;
	if (!read_num(s, &i, n, 2, 2, &t->second))
		return false;
	if (i < n && s[i] == '.') {
		/* fraction[:6], padded with zeros to microseconds */
		for (i++; i < n && is_digit(s[i]); i++)
			if (frac_digits < 6) {
				t->micro = t->micro * 10 + (s[i] - '0');
				frac_digits++;
			}
		for (; frac_digits < 6; frac_digits++)
			t->micro *= 10;
	}
	if (i == n)
		return true;
	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	if (i >= n)
		return false;
	t->has_tz = true;
	if (s[i] == 'Z')
		return i + 1 == n;
	if (!is_sign(s[i]))
		return false;
	t->tz_sign = s[i++] == '-' ? -1 : 1;
	if (!read_num(s, &i, n, 1, 2, &t->tz_hour))
		return false;
	if (i < n && s[i] == ':') {
		i++;
		if (!read_num(s, &i, n, 2, 2, &t->tz_minute))
			return false;
	}
	return i == n;
}

enum y11_type y11_resolve(const char *s, size_t len)
{
	static const char *const bools[] = {
		"yes", "Yes", "YES", "no", "No", "NO",
		"true", "True", "TRUE", "false", "False", "FALSE",
		"on", "On", "ON", "off", "Off", "OFF", NULL };
	static const char *const nulls[] = {
		"", "~", "null", "Null", "NULL", NULL };
	struct ts t;

	/* Every regex below starts with one of these bytes, or matches the
	 * empty string: variable names and most values (NCCL_..., /data)
	 * are strings after one test instead of some forty comparisons. */
	if (len && (!s[0] || !strchr("0123456789+-.yYnNtTfFoO~<=", s[0])))
		return Y11_STR;
	/* The regexes cannot overlap, so the resolver's order (bool, float,
	 * int, merge, null, timestamp, value) does not matter here. Every
	 * bool and null spelling is at most 5 bytes. */
	if (len <= 5 && eq_any(s, len, bools))
		return Y11_BOOL;
	if (len <= 5 && eq_any(s, len, nulls))
		return Y11_NULL;
	if (is_float(s, len))
		return Y11_FLOAT;
	if (is_int(s, len))
		return Y11_INT;
	if (parse_ts(s, len, &t))
		return Y11_TIMESTAMP;
	if (eq(s, len, "<<"))
		return Y11_MERGE;
	if (eq(s, len, "="))
		return Y11_VALUE;
	return Y11_STR;
}

const char *y11_type_name(enum y11_type t)
{
	switch (t) {
	case Y11_STR: return "string";
	case Y11_BOOL: return "bool";
	case Y11_INT: return "int";
	case Y11_FLOAT: return "float";
	case Y11_NULL: return "null";
	case Y11_TIMESTAMP: return "timestamp";
	case Y11_MERGE: return "merge key";
	case Y11_VALUE: return "value key";
	}
	return "?";
}

/* A non-negative big integer in base 1e9 limbs, least significant first:
 * an int may have any number of digits in Python. */
struct bigint {
	uint32_t *v;
	size_t n, cap;
};

#define LIMB 1000000000u
/* 4300 decimal digits fit in this many limbs, plus one for slack. */
#define MAX_LIMBS (PY_INT_MAX_STR_DIGITS / 9 + 2)

/* v = v * mul + add. -EINVAL once the value is beyond what Python would
 * print, which also bounds the work on a long scalar. */
static int big_mul_add(struct bigint *b, uint32_t mul, uint32_t add)
{
	uint64_t carry = add;
	size_t i;

	for (i = 0; i < b->n; i++) {
		uint64_t x = (uint64_t)b->v[i] * mul + carry;

		b->v[i] = (uint32_t)(x % LIMB);
		carry = x / LIMB;
	}
	while (carry) {
		if (b->n == MAX_LIMBS)
			return -EINVAL;
		if (GROW(b->v, b->cap, b->n, 4) < 0)
			return -ENOMEM;
		b->v[b->n++] = (uint32_t)(carry % LIMB);
		carry /= LIMB;
	}
	return 0;
}

static int big_print(const struct bigint *b, bool neg, struct strbuf *out)
{
	struct strbuf sb = STRBUF_INIT;
	size_t i;
	int err = 0;

	if (!b->n)
		return sb_addc(out, '0');   /* no "-0" for ints */
	if (neg)
		err = sb_addc(&sb, '-');
	if (!err)
		err = sb_addf(&sb, "%u", b->v[b->n - 1]);
	for (i = b->n - 1; !err && i-- > 0;)
		err = sb_addf(&sb, "%09u", b->v[i]);
	if (!err && sb.len - neg > PY_INT_MAX_STR_DIGITS)
		err = -EINVAL;
	if (!err)
		err = sb_add(out, sb.buf, sb.len);
	sb_release(&sb);
	return err;
}

static int digit_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return 99;
}

/* Appends the digits of v (no underscores) in base to b. An empty v is
 * Python's ValueError for int('', base). */
static int big_digits(struct bigint *b, const char *v, size_t n,
		      unsigned base)
{
	size_t i;
	int err;

	if (!n)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		int d = digit_value(v[i]);

		if (d >= (int)base)
			return -EINVAL;
		if ((err = big_mul_add(b, base, (uint32_t)d)) < 0)
			return err;
	}
	return 0;
}

/* SafeConstructor.construct_yaml_int, then str(). */
static int int_str(const char *v, size_t n, struct strbuf *out)
{
	struct bigint b = { 0 };
	bool neg = false;
	size_t i;
	int err;

	if (n && is_sign(v[0])) {
		neg = v[0] == '-';
		v++;
		n--;
	}
	if (n == 1 && v[0] == '0')
		err = 0;
	else if (n >= 2 && v[0] == '0' && v[1] == 'b')
		err = big_digits(&b, v + 2, n - 2, 2);
	else if (n >= 2 && v[0] == '0' && v[1] == 'x')
		err = big_digits(&b, v + 2, n - 2, 16);
	else if (n && v[0] == '0')
		err = big_digits(&b, v, n, 8);
	else if (memchr(v, ':', n)) {
		/* 1:30 is 1*60 + 30: Horner's rule gives the same integer as
		 * PyYAML's sum of digit * 60**k. */
		size_t start = 0;

		err = 0;
		for (i = 0; i <= n && !err; i++) {
			if (i < n && v[i] != ':')
				continue;
			if (start && (err = big_mul_add(&b, 60, 0)) < 0)
				break;
			if (i - start <= 2 && start) {
				int d = 0;
				size_t k;

				for (k = start; k < i; k++)
					d = d * 10 + (v[k] - '0');
				err = big_mul_add(&b, 1, (uint32_t)d);
			} else {
				err = big_digits(&b, v + start, i - start, 10);
			}
			start = i + 1;
		}
	} else {
		err = big_digits(&b, v, n, 10);
	}
	if (!err)
		err = big_print(&b, neg, out);
	free(b.v);
	return err;
}

/* float() of a Python literal the float regex matched: glibc's strtod
 * rounds correctly, as Python's float() does. */
static int parse_double(const char *s, size_t n, double *out)
{
	char buf[512], *end;
	char *heap = NULL, *p = buf;

	if (n >= sizeof(buf)) {
		if (!(heap = malloc(n + 1)))
			return -ENOMEM;
		p = heap;
	}
	memcpy(p, s, n);
	p[n] = '\0';
	*out = strtod(p, &end);
	free(heap);
	return end == p + n && n ? 0 : -EINVAL;
}

/* SafeConstructor.construct_yaml_float, then str(). */
static int float_str(const char *v, size_t n, struct strbuf *out)
{
	double sign = 1.0, value = 0.0, base = 1.0, d;
	size_t i, end;
	int err;

	if (n && is_sign(v[0])) {
		if (v[0] == '-')
			sign = -1.0;
		v++;
		n--;
	}
	if (n == 4 && v[0] == '.' && (v[1] == 'i' || v[1] == 'I'))
		return y11_float_repr(sign * INFINITY, out);
	if (n == 4 && v[0] == '.' && (v[1] == 'n' || v[1] == 'N'))
		return y11_float_repr(NAN, out);
	if (!memchr(v, ':', n)) {
		if ((err = parse_double(v, n, &d)) < 0)
			return err;
		return y11_float_repr(sign * d, out);
	}
	/* Sexagesimal: the parts from the last, times 60**k, summed in that
	 * order with the same double arithmetic as PyYAML's loop. (Python
	 * multiplies by an exact int 60**k; a double is exact up to 60**14,
	 * far beyond any real base-60 value.) */
	end = n;
	for (i = n; i-- > 0;) {
		if (v[i] != ':' && i)
			continue;
		{
			size_t start = v[i] == ':' ? i + 1 : i;

			if ((err = parse_double(v + start, end - start, &d)) < 0)
				return err;
		}
		value += d * base;
		base *= 60;
		end = i;
	}
	return y11_float_repr(sign * value, out);
}

int y11_float_repr(double d, struct strbuf *out)
{
	char buf[64], digits[32];
	int prec, exp, decpt, nd = 0, i;
	const char *p;

	if (isnan(d))
		return sb_adds(out, "nan");
	if (isinf(d))
		return sb_adds(out, d < 0 ? "-inf" : "inf");
	if (d == 0)
		return sb_adds(out, signbit(d) ? "-0.0" : "0.0");
	/* The shortest correctly rounded digits that read back as d: what
	 * Python's repr (David Gay's shortest mode) prints. */
	for (prec = 1; prec <= 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*e", prec - 1, d);
		if (strtod(buf, NULL) == d)
			break;
	}
	p = buf;
	if (*p == '-')
		p++;
	for (; *p && *p != 'e'; p++)
		if (is_digit(*p))
			digits[nd++] = *p;
	exp = atoi(p + 1);
	while (nd > 1 && digits[nd - 1] == '0')
		nd--;
	digits[nd] = '\0';
	decpt = exp + 1;
	if (d < 0 && sb_addc(out, '-') < 0)
		return -ENOMEM;
	/* float_repr_style 'short': exponent form when decpt <= -4 or > 16. */
	if (decpt <= -4 || decpt > 16) {
		if (sb_addc(out, digits[0]) < 0)
			return -ENOMEM;
		if (nd > 1 && sb_addf(out, ".%s", digits + 1) < 0)
			return -ENOMEM;
		return sb_addf(out, "e%c%02d", exp < 0 ? '-' : '+',
			       exp < 0 ? -exp : exp);
	}
	if (decpt <= 0) {
		if (sb_adds(out, "0.") < 0)
			return -ENOMEM;
		for (i = decpt; i < 0; i++)
			if (sb_addc(out, '0') < 0)
				return -ENOMEM;
		return sb_adds(out, digits);
	}
	if (decpt >= nd) {
		if (sb_adds(out, digits) < 0)
			return -ENOMEM;
		for (i = nd; i < decpt; i++)
			if (sb_addc(out, '0') < 0)
				return -ENOMEM;
		return sb_adds(out, ".0");
	}
	if (sb_add(out, digits, (size_t)decpt) < 0)
		return -ENOMEM;
	return sb_addf(out, ".%s", digits + decpt);
}

static bool leap(int y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

/* SafeConstructor.construct_yaml_timestamp, then str() of the date or
 * datetime; -EINVAL where datetime raises ValueError. */
static int ts_str(const char *s, size_t n, struct strbuf *out)
{
	static const int mdays[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31,
				     30, 31 };
	struct ts t;
	int dim, off, err;

	if (!parse_ts(s, n, &t))
		return -EINVAL;
	if (t.year < 1 || t.month < 1 || t.month > 12)
		return -EINVAL;
	dim = mdays[t.month - 1] + (t.month == 2 && leap(t.year));
	if (t.day < 1 || t.day > dim)
		return -EINVAL;
	if ((err = sb_addf(out, "%04d-%02d-%02d", t.year, t.month, t.day)) < 0)
		return err;
	if (!t.has_time)
		return 0;
	if (t.hour > 23 || t.minute > 59 || t.second > 59)
		return -EINVAL;
	if ((err = sb_addf(out, " %02d:%02d:%02d", t.hour, t.minute,
			   t.second)) < 0)
		return err;
	if (t.micro && (err = sb_addf(out, ".%06ld", t.micro)) < 0)
		return err;
	if (!t.has_tz)
		return 0;
	/* timezone() takes an offset strictly inside one day; "Z" is UTC. */
	off = t.tz_hour * 60 + t.tz_minute;
	if (off >= 24 * 60)
		return -EINVAL;
	return sb_addf(out, "%c%02d:%02d", t.tz_sign < 0 && off ? '-' : '+',
		       off / 60, off % 60);
}

/* repr() of a timedelta of off minutes (|off| < one day). */
static int delta_repr(int off, struct strbuf *out)
{
	long secs = (long)off * 60;

	if (!off)
		return sb_adds(out, "datetime.timedelta(0)");
	if (secs < 0)
		return sb_addf(out, "datetime.timedelta(days=-1, seconds=%ld)", 86400 + secs);
	return sb_addf(out, "datetime.timedelta(seconds=%ld)", secs);
}

int y11_ts_repr(const char *s, size_t n, struct strbuf *out)
{
	struct strbuf chk = STRBUF_INIT;
	struct ts t;
	int err, off;

	/* ts_str does every range check datetime does. */
	err = ts_str(s, n, &chk);
	sb_release(&chk);
	if (err < 0)
		return err;
	parse_ts(s, n, &t);
	if (!t.has_time)
		return sb_addf(out, "datetime.date(%d, %d, %d)", t.year, t.month, t.day);
	if ((err = sb_addf(out, "datetime.datetime(%d, %d, %d, %d, %d", t.year, t.month, t.day,
			   t.hour, t.minute)) < 0)
		return err;
	/* repr leaves out a zero microsecond, then a zero second. */
	if ((t.second || t.micro) && (err = sb_addf(out, ", %d", t.second)) < 0)
		return err;
	if (t.micro && (err = sb_addf(out, ", %ld", t.micro)) < 0)
		return err;
	if (t.has_tz) {
		off = (t.tz_hour * 60 + t.tz_minute) * (t.tz_sign < 0 ? -1 : 1);
		/* "Z" and a zero offset are both the timezone.utc singleton. */
		if (!off)
			err = sb_adds(out, ", tzinfo=datetime.timezone.utc");
		else if (!(err = sb_adds(out, ", tzinfo=datetime.timezone(")) &&
			 !(err = delta_repr(off, out)))
			err = sb_addc(out, ')');
		if (err < 0)
			return err;
	}
	return sb_addc(out, ')');
}

int y11_str(const char *s, size_t len, enum y11_type t, struct strbuf *out)
{
	struct strbuf v = STRBUF_INIT;
	size_t i;
	int err = 0;

	switch (t) {
	case Y11_STR:
		return sb_add(out, s, len);
	case Y11_BOOL:
		return sb_adds(out, (s[0] | 0x20) == 'n' ||
				    ((s[0] | 0x20) == 'o' && len == 3) ||
				    (s[0] | 0x20) == 'f' ? "False" : "True");
	case Y11_NULL:
		return sb_adds(out, "None");
	case Y11_TIMESTAMP:
		return ts_str(s, len, out);
	case Y11_MERGE:
	case Y11_VALUE:
		/* No SafeConstructor for these tags: the load fails. */
		return -EINVAL;
	case Y11_INT:
	case Y11_FLOAT:
		break;
	}
	/* Both constructors first drop '_' (and the float one lowercases). */
	for (i = 0; i < len && !err; i++)
		if (s[i] != '_')
			err = sb_addc(&v, t == Y11_FLOAT && s[i] >= 'A' &&
				      s[i] <= 'Z' ? (char)(s[i] | 0x20) : s[i]);
	if (!err)
		err = t == Y11_INT ? int_str(sb_str(&v), v.len, out)
				   : float_str(sb_str(&v), v.len, out);
	sb_release(&v);
	return err;
}
