/* history: a generation holds the variables a change changed, with their
 * values before and after, and never a secret's value; the ring keeps
 * the last N; the JSON names every part. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "history.h"
#include "layer.h"

static struct snapshot *snap(const char *const *kv)
{
	struct snapshot *s = calloc(1, sizeof(*s));
	size_t n = 0, k;

	assert_non_null(s);
	atomic_init(&s->refs, 1);
	assert_non_null(s->arena = arena_new());
	s->backend = "maxtext";
	s->arch = "gfx950";
	while (kv[2 * n])
		n++;
	s->vars = calloc(n ? n : 1, sizeof(*s->vars));
	for (k = 0; k < n; k++) {
		struct snap_var *v = &s->vars[k];
		const char *name = kv[2 * k], *val = kv[2 * k + 1];

		v->name = name + (name[0] == '!');
		v->name_len = strlen(v->name);
		v->secret = name[0] == '!';
		if (val) {
			v->value = val;
			v->value_len = strlen(val);
			v->set = v->exported = true;
			v->layer = LAYER_CONFIG;
			v->source = "exp.yaml:2";
		}
	}
	s->nvars = n;
	return s;
}

static void test_history__a_generation_holds_only_what_changed(void **state)
{
	const char *const a[] = { "A", "1", "B", "same", "C", "gone", "!TOK", "hunter2", NULL };
	const char *const b[] = { "A", "2", "B", "same", "D", "new", "!TOK", "hunter3", NULL };
	struct snapshot *old = snap(a), *new = snap(b);
	struct hist_gen g = { .cause = HIST_WRITE };
	size_t k;

	(void)state;
	assert_int_equal(hist_gen_compare(&g, old, new), 0);
	assert_int_equal(g.nchanges, 4);
	assert_string_equal(g.changes[0].name, "A");
	assert_string_equal(g.changes[0].before.value, "1");
	assert_string_equal(g.changes[0].after.value, "2");
	assert_string_equal(g.changes[0].after.layer, "config");
	assert_string_equal(g.changes[1].name, "C");
	assert_true(g.changes[1].before.set);
	assert_false(g.changes[1].after.set);
	assert_null(g.changes[1].after.value);
	assert_string_equal(g.changes[2].name, "D");
	assert_false(g.changes[2].before.set);
	assert_string_equal(g.changes[3].name, "TOK");
	assert_true(g.changes[3].secret);
	assert_true(g.changes[3].before.set && g.changes[3].after.set);
	assert_null(g.changes[3].before.value);
	assert_null(g.changes[3].after.value);
	for (k = 0; k < g.nchanges; k++)
		assert_string_equal(g.changes[k].backend, "maxtext");
	hist_gen_release(&g);
	free(old->vars);
	free(new->vars);
	arena_free(old->arena);
	arena_free(new->arena);
	free(old);
	free(new);
}

static void push_one(struct history *h, uint64_t gen, enum hist_cause c)
{
	struct hist_gen g = { .generation = gen, .cause = c, .has_writer = true, .uid = 1000,
			      .pid = 42 };
	struct hist_value before = { .set = true, .value = "x", .len = 1, .layer = "runner" },
			  after = { .set = true, .value = "y", .len = 1, .layer = "override",
				    .source = "override" };

	assert_int_equal(hist_gen_add(&g, "maxtext", "gfx950", "N", false, &before, &after), 0);
	history_push(h, &g);
	assert_int_equal(g.nchanges, 0);
}

static void test_history__the_ring_keeps_the_last_n(void **state)
{
	struct history h;
	struct hist_gen empty = { .generation = 99, .cause = HIST_RELOAD };
	uint64_t k;

	(void)state;
	assert_int_equal(history_init(&h, 0), -EINVAL);
	assert_int_equal(history_init(&h, 3), 0);
	for (k = 1; k <= 5; k++)
		push_one(&h, k, HIST_WRITE);
	/* A change that changed nothing is no generation. */
	history_push(&h, &empty);
	assert_int_equal(h.n, 3);
	assert_int_equal(history_at(&h, 0)->generation, 3);
	assert_int_equal(history_at(&h, 2)->generation, 5);
	assert_null(history_at(&h, 3));
	history_release(&h);
}

static void test_history__json_names_cause_writer_and_values(void **state)
{
	struct history h;
	struct strbuf out = STRBUF_INIT;

	(void)state;
	assert_int_equal(history_init(&h, 4), 0);
	push_one(&h, 7, HIST_MV);
	assert_int_equal(history_render_json(&h, &out), 0);
	assert_non_null(strstr(sb_str(&out), "\"format\":\"primus-envfs-history\",\"version\":1,"
					     "\"keep\":4,\"generations\":[{\"generation\":7,"));
	assert_non_null(strstr(sb_str(&out), "\"cause\":\"mv\",\"uid\":1000,\"pid\":42,\"node\":null"));
	assert_non_null(strstr(sb_str(&out), "\"before\":{\"set\":true,\"value\":\"x\",\"layer\":\"runner\",\"source\":null}"));
	assert_non_null(strstr(sb_str(&out), "\"after\":{\"set\":true,\"value\":\"y\",\"layer\":\"override\",\"source\":\"override\"}"));
	sb_release(&out);
	history_release(&h);
}

static void test_history__cause_names_round_trip(void **state)
{
	enum hist_cause c;
	int k;

	(void)state;
	for (k = 0; k < HIST_CAUSE_COUNT; k++) {
		assert_int_equal(hist_cause_from_name(hist_cause_name((enum hist_cause)k), &c), 0);
		assert_int_equal(c, k);
	}
	assert_int_equal(hist_cause_from_name("nope", &c), -EINVAL);
	assert_null(hist_cause_name(HIST_CAUSE_COUNT));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_history__a_generation_holds_only_what_changed),
		cmocka_unit_test(test_history__the_ring_keeps_the_last_n),
		cmocka_unit_test(test_history__json_names_cause_writer_and_values),
		cmocka_unit_test(test_history__cause_names_round_trip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
