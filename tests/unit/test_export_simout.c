/*
 * A simulation's run as wb-export tables (tools/export/simout.c): the CSV
 * examples/join_bid writes read back exactly (prices to 1e-8 dollars,
 * ids to the last uint64, signed times), written again by the table
 * writer; and every field that is not its column's type refused with its
 * line and column named.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "export/simout.h"

#define FILLS_HEADER "order,virtual_id,event,symbol,venue,side,price,fill_qty,filled_qty,left_qty," \
		     "fill_exch_ts,fill_recv_ts,fill_seq,state\n"
#define QUEUE_HEADER "order,event,state,shares_ahead,orders_ahead,shares_behind,orders_behind," \
		     "level_qty,level_orders,left_qty,filled_qty\n"

static char tmpdir[64];

static void make_tmpdir(void)
{
	strcpy(tmpdir, "/tmp/wb-test-simout-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static const char *write_file(const char *name, const char *text)
{
	static char path[2][128];
	static int k;
	char *p = path[k++ & 1];
	FILE *f;

	snprintf(p, sizeof(path[0]), "%s/%s", tmpdir, name);
	f = fopen(p, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	return p;
}

/* The data lines of OUT/NAME.csv (the comment line and header skipped). */
static void read_rows(const char *out, const char *name, char *buf, size_t n)
{
	char path[256], line[1024];
	FILE *f;
	int lines = 0;

	snprintf(path, sizeof(path), "%s/%s.csv", out, name);
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	buf[0] = 0;
	while (fgets(line, sizeof(line), f))
		if (line[0] != '#' && lines++)
			strncat(buf, line, n - strlen(buf) - 1);
	fclose(f);
}

static void rm_tree(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	ck_assert_int_eq(system(cmd), 0);
}

START_TEST(test_run_csv_reads_back_exactly_and_writes_as_wb_export_tables)
{
	const char *fills, *queue;
	struct table ts[SIM_TABLES];
	struct sim_out *s;
	char err[512], out[128], rows[4096];
	unsigned n;

	make_tmpdir();
	fills = write_file("fills.csv", FILLS_HEADER
		"0,18446744073709551615,3517,NVDA,EDGA,B,881.3,100,100,0,1771511400043157595,1771511400043177595,878,filled\n"
		"1,9223382993316347993,5611,BRK.A,NASDAQ,B,-0.0001,1,2,3,-5,9223372036854775807,0,partly-filled\n"
		"\n"
		"4294967295,1,2,ABCDEFGHI,BYX,B,12,0,0,0,0,0,0,cancelled\n"
		"2,1,2,X,BYX,S,92233720367.99999999,0,0,0,0,0,0,resting\n");
	queue = write_file("queue.csv", "# a comment line, as wb-export's own CSV has\n" QUEUE_HEADER
		"0,422,resting,100,1,0,0,100,1,100,0\n"
		"7,18446744073709551615,filled,0,4294967295,18446744073709551615,0,0,4294967295,0,100\n");
	s = sim_out_load(fills, queue, err, sizeof(err));
	ck_assert_msg(s != NULL, "%s", err);
	n = sim_out_define(s, ts);
	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(ts[0].name, "fills");
	ck_assert_str_eq(ts[1].name, "queue");
	snprintf(out, sizeof(out), "%s/out", tmpdir);
	ck_assert_int_eq(tables_open(ts, n, "csv", out, NULL, err, sizeof(err)), 0);
	ck_assert_int_eq(tables_begin_date(ts, n, "2026-02-19", err, sizeof(err)), 0);
	sim_out_write(s, ts);
	ck_assert_uint_eq(ts[0].rows, 4);
	ck_assert_uint_eq(ts[1].rows, 2);
	ck_assert_int_eq(tables_close(ts, n, err, sizeof(err)), 0);
	read_rows(out, "fills", rows, sizeof(rows));
	/* wb-export's price text: at least the cents */
	ck_assert_str_eq(rows,
		"0,18446744073709551615,3517,NVDA,EDGA,B,881.30,100,100,0,1771511400043157595,1771511400043177595,878,filled\n"
		"1,9223382993316347993,5611,BRK.A,NASDAQ,B,-0.0001,1,2,3,-5,9223372036854775807,0,partly-filled\n"
		"4294967295,1,2,ABCDEFGHI,BYX,B,12.00,0,0,0,0,0,0,cancelled\n"
		"2,1,2,X,BYX,S,92233720367.99999999,0,0,0,0,0,0,resting\n");
	read_rows(out, "queue", rows, sizeof(rows));
	ck_assert_str_eq(rows, "0,422,resting,100,1,0,0,100,1,100,0\n"
		"7,18446744073709551615,filled,0,4294967295,18446744073709551615,0,0,4294967295,0,100\n");
	sim_out_free(s);
	rm_tree();
}
END_TEST

/* One fills row with field COL set to TEXT: refused, naming line 2 and the column. */
static void refused(unsigned col, const char *text)
{
	const char *base[] = { "0", "1", "2", "AAPL", "NASDAQ", "B", "1.5", "1", "1", "0", "1", "1", "1", "filled" };
	char csv[1024] = FILLS_HEADER, want[64], err[512];
	const char *path;
	static const char *names[] = { "order", "virtual_id", "event", "symbol", "venue", "side", "price", "fill_qty",
				       "filled_qty", "left_qty", "fill_exch_ts", "fill_recv_ts", "fill_seq", "state" };

	for (unsigned i = 0; i < 14; i++) {
		strcat(csv, i == col ? text : base[i]);
		strcat(csv, i == 13 ? "\n" : ",");
	}
	path = write_file("bad.csv", csv);
	ck_assert_msg(sim_out_load(path, NULL, err, sizeof(err)) == NULL, "column %s '%s' accepted", names[col], text);
	snprintf(want, sizeof(want), ":2: column %s: '", names[col]);
	ck_assert_msg(strstr(err, want) != NULL, "%s", err);
}

START_TEST(test_fields_not_of_their_column_type_are_refused_with_line_and_column)
{
	const char *path;
	char err[512];

	make_tmpdir();
	refused(0, "4294967296");		/* order: uint32 */
	refused(0, "-1");
	refused(1, "18446744073709551616");	/* virtual_id: uint64 */
	refused(1, "");
	refused(2, "12x");
	refused(3, "ABCDEFGHIJ");		/* symbol: 9 bytes */
	refused(5, "BS");			/* side: one character */
	refused(6, "1.123456789");		/* finer than 1e-8 dollars */
	refused(6, "92233720368.5");		/* beyond int64 in 1e-8 */
	refused(6, "1.2.3");
	refused(6, ".5");
	refused(6, "-");
	refused(10, "9223372036854775808");	/* fill_exch_ts: int64 */
	refused(13, "a-state-too-long!");	/* state: 16 bytes */
	/* a row short of a field, another header, no header, no file */
	path = write_file("short.csv", FILLS_HEADER "0,1,2,AAPL,NASDAQ,B,1.5,1,1,0,1,1,1\n");
	ck_assert_ptr_null(sim_out_load(path, NULL, err, sizeof(err)));
	ck_assert_msg(strstr(err, ":2: fewer fields") != NULL, "%s", err);
	path = write_file("other.csv", QUEUE_HEADER);
	ck_assert_ptr_null(sim_out_load(path, NULL, err, sizeof(err)));
	ck_assert_msg(strstr(err, ":1: not a fills table") != NULL, "%s", err);
	path = write_file("empty.csv", "");
	ck_assert_ptr_null(sim_out_load(NULL, path, err, sizeof(err)));
	ck_assert_msg(strstr(err, "empty: no header (the queue table") != NULL, "%s", err);
	ck_assert_ptr_null(sim_out_load("/nonexistent/fills.csv", NULL, err, sizeof(err)));
	ck_assert_msg(strstr(err, "/nonexistent/fills.csv: ") == err, "%s", err);
	rm_tree();
}
END_TEST

START_TEST(test_one_table_alone_is_defined_alone)
{
	struct table ts[SIM_TABLES];
	struct sim_out *s;
	char err[256];

	make_tmpdir();
	s = sim_out_load(NULL, write_file("q.csv", QUEUE_HEADER), err, sizeof(err));
	ck_assert_msg(s != NULL, "%s", err);
	ck_assert_uint_eq(sim_out_define(s, ts), 1);
	ck_assert_str_eq(ts[0].name, "queue");
	ck_assert_uint_eq(ts[0].ncols, 11);
	sim_out_free(s);
	ck_assert_uint_eq(sim_out_define(NULL, ts), 0);
	rm_tree();
}
END_TEST

static Suite *export_simout_suite(void)
{
	Suite *s = suite_create("export_simout");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_run_csv_reads_back_exactly_and_writes_as_wb_export_tables);
	tcase_add_test(tc, test_fields_not_of_their_column_type_are_refused_with_line_and_column);
	tcase_add_test(tc, test_one_table_alone_is_defined_alone);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(export_simout_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
