/*
 * The recovery services table (lib/recovery/recovery_services.c) holds
 * together: every row's name is a recovery.conf service, every row is one
 * kind of service with a whole client, every protocol it names is a feed
 * protocol, every feed protocol with a gap-fill service maps to that row,
 * and an unknown name is refused with the table's names in the error.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "recovery/recovery_services.h"
#include "recovery_conf_harness.h"

START_TEST(test_every_row_s_name_is_a_recovery_conf_service)
{
	for (size_t i = 0; i < recovery_service_count; i++) {
		const struct recovery_service *sv = &recovery_services[i];
		struct recovery_conf_entry e[RECOVERY_MAX_SERVICES], blank = { .unit = -1 };
		const char *missing = sv->conf_check ? sv->conf_check(&blank) : NULL;
		char text[128], err[256] = "";
		int n;

		snprintf(text, sizeof(text), "nasdaq %s 127.0.0.1:9000\n", sv->name);
		n = conf_of(text, e, err, sizeof(err));
		/* Parsed, or refused only for what its row says a line must give. */
		if (missing) {
			ck_assert_int_lt(n, 0);
			ck_assert_msg(strstr(err, missing), "%s: '%s'", sv->name, err);
		} else {
			ck_assert_int_eq(n, 1);
			ck_assert_ptr_eq(e[0].service, sv);
		}
		ck_assert_msg(!strstr(err, "unknown service"), "%s: '%s'", sv->name, err);
		ck_assert_ptr_eq(recovery_service_named(sv->name), sv);
	}
}
END_TEST

START_TEST(test_every_row_is_one_kind_with_a_whole_client)
{
	for (size_t i = 0; i < recovery_service_count; i++) {
		const struct recovery_service *sv = &recovery_services[i];

		ck_assert_msg(!sv->gap_fill != !sv->snapshot, "%s: gap fill or snapshot", sv->name);
		if (sv->gap_fill) {
			ck_assert(sv->gap_fill->open && sv->gap_fill->close && sv->gap_fill->pump &&
				  sv->gap_fill->request);
		} else {
			const struct recovery_snapshot_ops *o = sv->snapshot;

			ck_assert(o->add && o->destroy && o->drive && o->poll && o->given_up &&
				  o->busy && o->print);
		}
		ck_assert_msg(sv->protocols[0], "%s serves no protocol", sv->name);
		for (int k = 0; k < RECOVERY_SERVICE_PROTOCOLS && sv->protocols[k]; k++) {
			int p = feed_protocol_parse(sv->protocols[k], strlen(sv->protocols[k]));

			ck_assert_msg(p > 0, "%s: '%s' is no feed protocol", sv->name,
				      sv->protocols[k]);
			ck_assert(recovery_service_serves(sv, p));
		}
		for (size_t j = 0; j < i; j++)
			ck_assert_str_ne(recovery_services[j].name, sv->name);
	}
}
END_TEST

START_TEST(test_every_protocol_maps_to_its_gap_fill_service)
{
	/* The services table is the one place that says which service fills a protocol's gaps. */
	static const struct {
		const char *protocol, *service;
	} want[] = {
		{ "itch", "mold" }, { "uqdf", "mold" }, { "pitch", "grp" }, { "xdp", "xdp" },
	};
	int served = 0;

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		int p = feed_protocol_parse(want[i].protocol, strlen(want[i].protocol));
		const struct recovery_service *sv = recovery_gap_fill_of(p);

		ck_assert_int_gt(p, FEED_PROTO_NONE);
		ck_assert_msg(sv, "%s: no row serves it", want[i].protocol);
		ck_assert_str_eq(sv->name, want[i].service);
	}
	for (int p = FEED_PROTO_NONE + 1; p < FEED_PROTO_COUNT; p++)
		served += recovery_gap_fill_of(p) != NULL;
	ck_assert_int_eq(served, (int)(sizeof(want) / sizeof(want[0])));	/* CQS has none */
	/* Every snapshot row serves a protocol that also has gap fill. */
	for (size_t i = 0; i < recovery_service_count; i++)
		for (int k = 0; recovery_services[i].snapshot && k < RECOVERY_SERVICE_PROTOCOLS &&
		     recovery_services[i].protocols[k]; k++)
			ck_assert(recovery_gap_fill_of(feed_protocol_parse(
				recovery_services[i].protocols[k],
				strlen(recovery_services[i].protocols[k]))));
}
END_TEST

START_TEST(test_an_unknown_service_is_refused_naming_the_table_s)
{
	struct recovery_conf_entry e[RECOVERY_MAX_SERVICES];
	char err[256] = "", names[128];

	ck_assert_int_lt(conf_of("nasdaq moldy 127.0.0.1:9000\n", e, err, sizeof(err)), 0);
	ck_assert_msg(strstr(err, ":1: unknown service (mold, grp, xdp, glimpse, utpsnap, spin) "
			      "'moldy'"), "'%s'", err);
	recovery_service_names(names, sizeof(names), NULL, false);
	for (size_t i = 0; i < recovery_service_count; i++)
		ck_assert_msg(strstr(names, recovery_services[i].name), "'%s'", names);
	ck_assert_ptr_null(recovery_service_named("moldy"));
	ck_assert_ptr_null(recovery_service_named(""));
	/* Names are whole words: a prefix is no service. */
	assert_conf_refused("nasdaq mol 127.0.0.1:9000\n", "unknown service");
	assert_conf_refused("nasdaq MOLD 127.0.0.1:9000\n", "unknown service");
}
END_TEST

START_TEST(test_key_errors_list_the_rows_that_take_the_key)
{
	assert_conf_refused("nasdaq mold 127.0.0.1:9000 gap=127.0.0.1:1\n",
			    "only a grp service takes gap=; grp, glimpse, utpsnap and spin take "
			    "user=, password=");
	assert_conf_refused("nasdaq mold 127.0.0.1:9000 max-age=1\n",
			    "only a snapshot service (glimpse, utpsnap, spin) takes max-gap=, "
			    "max-age=");
	assert_conf_refused("nasdaq mold 127.0.0.1:9000 unit=1\n", "only a spin service takes unit=");
	assert_conf_refused("nasdaq glimpse 127.0.0.1:9000 user=1234567\n",
			    "user= has at most 6 characters (SoupBinTCP)");
	assert_conf_refused("bzx grp 127.0.0.1:9000 gap=127.0.0.1:1 user=12345\n",
			    "user= has at most 4 characters 'user=12345'");
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("recovery_services");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_every_row_s_name_is_a_recovery_conf_service);
	tcase_add_test(tc, test_every_row_is_one_kind_with_a_whole_client);
	tcase_add_test(tc, test_every_protocol_maps_to_its_gap_fill_service);
	tcase_add_test(tc, test_an_unknown_service_is_refused_naming_the_table_s);
	tcase_add_test(tc, test_key_errors_list_the_rows_that_take_the_key);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
