/*
 * The NATS client options wirebookd and wb-export share (issue 26): one
 * getopt table and one parser, so both take the same names into the same
 * fields, and refuse the same mismatches.
 */
#include <check.h>
#include <getopt.h>
#include <string.h>

#include "net/nats_options.h"

enum { FIRST = 1000 };

static const struct option opts[] = {
	NATS_CLIENT_LONG_OPTIONS(FIRST),
	{ NULL, 0, NULL, 0 },
};

static void parse(struct nats_client_config *c, char **argv, int argc)
{
	int o;

	optind = 1;
	opterr = 0;
	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1)
		ck_assert_int_eq(nats_client_option(c, o - FIRST, optarg), 0);
}

START_TEST(test_every_option_lands_in_its_field)
{
	char *argv[] = { "t", "--nats-instance", "desk1", "--nats-user", "u", "--nats-password", "p",
			 "--nats-creds", "c.creds", "--nats-nkey", "UKEY:seed", "--nats-ca", "ca.pem",
			 "--nats-cert", "cert.pem", "--nats-key", "key.pem" };
	struct nats_client_config c;
	char err[128];

	memset(&c, 0, sizeof(c));
	ck_assert(!nats_client_options_given(&c));
	parse(&c, argv, (int)(sizeof(argv) / sizeof(argv[0])));
	ck_assert_str_eq(c.instance, "desk1");
	ck_assert_str_eq(c.user, "u");
	ck_assert_str_eq(c.password, "p");
	ck_assert_str_eq(c.creds, "c.creds");
	ck_assert_str_eq(c.nkey, "UKEY:seed");
	ck_assert_str_eq(c.ca, "ca.pem");
	ck_assert_str_eq(c.cert, "cert.pem");
	ck_assert_str_eq(c.key, "key.pem");
	ck_assert_ptr_null(c.url);
	ck_assert(nats_client_options_given(&c));
	ck_assert_int_eq(nats_client_options_check(&c, err, sizeof(err)), 0);
}
END_TEST

START_TEST(test_each_option_alone_counts_as_given_and_others_are_refused)
{
	for (int i = 0; i < NATS_CLIENT_OPTION_COUNT; i++) {
		struct nats_client_config c;

		memset(&c, 0, sizeof(c));
		ck_assert_int_eq(nats_client_option(&c, i, "x"), 0);
		ck_assert_msg(nats_client_options_given(&c), "option %d not seen as given", i);
	}
	{
		struct nats_client_config c;

		memset(&c, 0, sizeof(c));
		ck_assert_int_eq(nats_client_option(&c, -1, "x"), -1);
		ck_assert_int_eq(nats_client_option(&c, NATS_CLIENT_OPTION_COUNT, "x"), -1);
		ck_assert(!nats_client_options_given(&c));
	}
}
END_TEST

START_TEST(test_cert_without_key_is_refused)
{
	struct nats_client_config c;
	char err[128] = "";

	memset(&c, 0, sizeof(c));
	c.cert = "cert.pem";
	ck_assert_int_eq(nats_client_options_check(&c, err, sizeof(err)), -1);
	ck_assert(strstr(err, "--nats-key") != NULL);
	c.cert = NULL;
	c.key = "key.pem";
	ck_assert_int_eq(nats_client_options_check(&c, err, sizeof(err)), -1);
}
END_TEST

START_TEST(test_help_names_every_option)
{
	for (const struct option *o = opts; o->name; o++)
		ck_assert_msg(strstr(nats_client_options_help, o->name) != NULL, "%s not in the help",
			      o->name);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("nats_options");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_every_option_lands_in_its_field);
	tcase_add_test(tc, test_each_option_alone_counts_as_given_and_others_are_refused);
	tcase_add_test(tc, test_cert_without_key_is_refused);
	tcase_add_test(tc, test_help_names_every_option);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
