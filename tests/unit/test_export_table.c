/*
 * wb-export's table writer (tools/export/table.c): what a file says of
 * itself (the CSV comment line, the HDF5 attributes and date groups),
 * signed times, and the keyed table: rows symbol by symbol, in decode
 * order within a symbol, with the index of each symbol's runs.
 */
#include <check.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "export/table.h"
#ifdef WB_HDF5
#include <hdf5.h>
#endif

struct row {
	int64_t ts;
	char symbol[9];
	uint64_t n;
};

static char tmpdir[64];

static void make_tmpdir(void)
{
	strcpy(tmpdir, "/tmp/wb-test-export-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void define(struct table *t)
{
	table_init(t, "t", sizeof(struct row));
	TABLE_COL(t, struct row, ts, COL_I64);
	TABLE_COL(t, struct row, symbol, COL_STR);
	TABLE_COL(t, struct row, n, COL_U64);
	t->keyed = 1;
	t->key_col = 1;
}

static void put(struct table *t, int64_t ts, const char *sym, uint64_t n, uint16_t key)
{
	struct row r;

	memset(&r, 0, sizeof(r));
	r.ts = ts;
	snprintf(r.symbol, sizeof(r.symbol), "%s", sym);
	r.n = n;
	table_row_keyed(t, &r, key);
}

/* Rows (key): A(1) B(2) A(1) -(0) B(2) A(1), numbered 1-6 in decode order. */
static void put_six(struct table *t)
{
	put(t, -5, "A", 1, 1);
	put(t, 10, "B", 2, 2);
	put(t, 11, "A", 3, 1);
	put(t, 12, "", 4, 0);
	put(t, 13, "B", 5, 2);
	put(t, 14, "A", 6, 1);
}

static struct table_meta meta(void)
{
	static const char *names[] = { "", "NASDAQ", "BZX" };
	struct table_meta m = { .deflate = 1, .segment_rows = 1u << 20 };

	table_meta_number(&m, "schema_version", 2);
	table_meta_strings(&m, "venue_names", names, 3);
	return m;
}

START_TEST(test_csv_says_what_it_holds_and_keeps_decode_order)
{
	struct table t;
	struct table_meta m = meta();
	char err[256], path[128], line[512];
	FILE *f;

	make_tmpdir();
	define(&t);
	ck_assert_int_eq(tables_open(&t, 1, "csv", tmpdir, &m, err, sizeof(err)), 0);
	ck_assert_int_eq(tables_begin_date(&t, 1, "2026-02-19", err, sizeof(err)), 0);
	put_six(&t);
	ck_assert_int_eq(tables_close(&t, 1, err, sizeof(err)), 0);
	snprintf(path, sizeof(path), "%s/t.csv", tmpdir);
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(fgets(line, sizeof(line), f));
	ck_assert_str_eq(line, "# wirebook export: table=t trading_date=2026-02-19 schema_version=2 "
			       "venue_names=|NASDAQ|BZX\n");
	ck_assert_ptr_nonnull(fgets(line, sizeof(line), f));
	ck_assert_str_eq(line, "ts,symbol,n\n");
	ck_assert_ptr_nonnull(fgets(line, sizeof(line), f));
	ck_assert_str_eq(line, "-5,A,1\n");	/* signed: a time before another never wraps */
	ck_assert_ptr_nonnull(fgets(line, sizeof(line), f));
	ck_assert_str_eq(line, "10,B,2\n");	/* CSV keeps decode order */
	fclose(f);
	unlink(path);
	rmdir(tmpdir);
}
END_TEST

#ifdef WB_HDF5
static void read_n(hid_t d, uint64_t *out, size_t max, size_t *count)
{
	hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(uint64_t)), s = H5Dget_space(d);
	hssize_t n = H5Sget_simple_extent_npoints(s);

	ck_assert_int_le(n, (hssize_t)max);
	H5Tinsert(t, "n", 0, H5T_NATIVE_UINT64);
	ck_assert_int_ge(H5Dread(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, out), 0);
	*count = (size_t)n;
	H5Tclose(t);
	H5Sclose(s);
}

struct run {
	char symbol[9];
	uint64_t first, count;
};

static size_t read_index(hid_t d, struct run *out, size_t max)
{
	hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(struct run)), s = H5Dget_space(d), str = H5Tcopy(H5T_C_S1);
	hssize_t n = H5Sget_simple_extent_npoints(s);

	ck_assert_int_le(n, (hssize_t)max);
	memset(out, 0, max * sizeof(*out));
	H5Tset_size(str, 9);
	H5Tset_strpad(str, H5T_STR_NULLPAD);
	H5Tinsert(t, "symbol", offsetof(struct run, symbol), str);
	H5Tinsert(t, "first", offsetof(struct run, first), H5T_NATIVE_UINT64);
	H5Tinsert(t, "count", offsetof(struct run, count), H5T_NATIVE_UINT64);
	ck_assert_int_ge(H5Dread(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, out), 0);
	H5Tclose(str);
	H5Tclose(t);
	H5Sclose(s);
	return (size_t)n;
}

/* SEGMENT rows sorted at a time: each symbol's runs, one per segment. */
static void check_keyed(uint64_t segment, const uint64_t *want, const struct run *want_runs, size_t nruns)
{
	struct table t;
	struct table_meta m = meta();
	char err[256], path[128];
	uint64_t got[8];
	struct run runs[8];
	size_t n;
	hid_t file, d, dcpl;

	make_tmpdir();
	snprintf(path, sizeof(path), "%s/t.h5", tmpdir);
	m.segment_rows = segment;
	define(&t);
	ck_assert_int_eq(tables_open(&t, 1, "hdf5", path, &m, err, sizeof(err)), 0);
	ck_assert_int_eq(tables_begin_date(&t, 1, "2026-02-19", err, sizeof(err)), 0);
	put_six(&t);
	ck_assert_int_eq(tables_close(&t, 1, err, sizeof(err)), 0);

	file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
	ck_assert_int_ge(file, 0);
	ck_assert_int_gt(H5Aexists(file, "schema_version"), 0);
	ck_assert_int_gt(H5Aexists(file, "venue_names"), 0);
	ck_assert_int_gt(H5Aexists_by_name(file, "2026-02-19", "trading_date", H5P_DEFAULT), 0);
	d = H5Dopen2(file, "2026-02-19/t", H5P_DEFAULT);
	ck_assert_int_ge(d, 0);
	dcpl = H5Dget_create_plist(d);
	ck_assert_int_eq(H5Pget_nfilters(dcpl), 2);	/* shuffle, deflate */
	H5Pclose(dcpl);
	read_n(d, got, 8, &n);
	ck_assert_uint_eq(n, 6);
	for (size_t i = 0; i < n; i++)
		ck_assert_uint_eq(got[i], want[i]);
	H5Dclose(d);
	d = H5Dopen2(file, "2026-02-19/t_index", H5P_DEFAULT);
	ck_assert_int_ge(d, 0);
	ck_assert_uint_eq(read_index(d, runs, 8), nruns);
	for (size_t i = 0; i < nruns; i++) {
		ck_assert_str_eq(runs[i].symbol, want_runs[i].symbol);
		ck_assert_uint_eq(runs[i].first, want_runs[i].first);
		ck_assert_uint_eq(runs[i].count, want_runs[i].count);
	}
	H5Dclose(d);
	H5Fclose(file);
	unlink(path);
	rmdir(tmpdir);
}

START_TEST(test_hdf5_keyed_rows_symbol_by_symbol_with_their_index)
{
	static const uint64_t want[] = { 4, 1, 3, 6, 2, 5 };
	static const struct run runs[] = { { "", 0, 1 }, { "A", 1, 3 }, { "B", 4, 2 } };

	check_keyed(1u << 20, want, runs, 3);
}
END_TEST

START_TEST(test_hdf5_keyed_segments_give_a_run_per_symbol_and_segment)
{
	/* segments of 4 rows: A B A - | B A */
	static const uint64_t want[] = { 4, 1, 3, 2, 6, 5 };
	static const struct run runs[] = {
		{ "", 0, 1 }, { "A", 1, 2 }, { "B", 3, 1 }, { "A", 4, 1 }, { "B", 5, 1 },
	};

	check_keyed(4, want, runs, 5);
}
END_TEST

/*
 * Rows past one chunk (the writer makes the chunks itself: shuffled,
 * deflated, stored whole): every value reads back through HDF5's own
 * filters, a date's last partial chunk too, with rows whose size is not a
 * multiple of 16 bytes; and two files of the same rows are the same bytes.
 */
struct wide {
	int64_t ts;
	uint64_t n, m;
};

#define WIDE_DAY1 20000u	/* two chunks of 8192 rows and a partial one */
#define WIDE_DAY2 5000u

static void write_wide(const char *path)
{
	struct table t;
	struct table_meta m = meta();
	char err[256];
	struct wide w;

	table_init(&t, "w", sizeof(struct wide));
	TABLE_COL(&t, struct wide, ts, COL_I64);
	TABLE_COL(&t, struct wide, n, COL_U64);
	TABLE_COL(&t, struct wide, m, COL_U64);
	ck_assert_int_eq(tables_open(&t, 1, "hdf5", path, &m, err, sizeof(err)), 0);
	for (uint64_t i = 0; i < WIDE_DAY1 + WIDE_DAY2; i++) {
		if (i == 0 || i == WIDE_DAY1)
			ck_assert_int_eq(tables_begin_date(&t, 1, i ? "2026-02-20" : "2026-02-19", err,
							   sizeof(err)), 0);
		w = (struct wide){ .ts = (int64_t)(i * 1000) - 5, .n = i, .m = ~i * 2654435761u };
		table_row(&t, &w);
	}
	ck_assert_int_eq(tables_close(&t, 1, err, sizeof(err)), 0);
}

static void check_wide(hid_t file, const char *name, uint64_t first, uint64_t rows)
{
	hid_t d = H5Dopen2(file, name, H5P_DEFAULT), mt = H5Tcreate(H5T_COMPOUND, sizeof(struct wide));
	hid_t s = H5Dget_space(d);
	struct wide *got = calloc(rows, sizeof(*got));

	ck_assert_int_ge(d, 0);
	ck_assert_ptr_nonnull(got);
	ck_assert_int_eq(H5Sget_simple_extent_npoints(s), (hssize_t)rows);
	H5Tinsert(mt, "ts", offsetof(struct wide, ts), H5T_NATIVE_INT64);
	H5Tinsert(mt, "n", offsetof(struct wide, n), H5T_NATIVE_UINT64);
	H5Tinsert(mt, "m", offsetof(struct wide, m), H5T_NATIVE_UINT64);
	ck_assert_int_ge(H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, got), 0);
	for (uint64_t k = 0; k < rows; k++) {
		uint64_t i = first + k;

		ck_assert_int_eq(got[k].ts, (int64_t)(i * 1000) - 5);
		ck_assert_uint_eq(got[k].n, i);
		ck_assert_uint_eq(got[k].m, ~i * 2654435761u);
	}
	free(got);
	H5Sclose(s);
	H5Tclose(mt);
	H5Dclose(d);
}

static long file_bytes(const char *path, char **out)
{
	FILE *f = fopen(path, "rb");
	long n;

	ck_assert_ptr_nonnull(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	*out = malloc((size_t)n);
	ck_assert_ptr_nonnull(*out);
	ck_assert_uint_eq(fread(*out, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	return n;
}

START_TEST(test_hdf5_chunks_read_back_through_the_standard_filters_and_repeat)
{
	char a[128], b[128], *x, *y;
	long nx, ny;
	hid_t file;

	make_tmpdir();
	snprintf(a, sizeof(a), "%s/a.h5", tmpdir);
	snprintf(b, sizeof(b), "%s/b.h5", tmpdir);
	write_wide(a);
	write_wide(b);
	file = H5Fopen(a, H5F_ACC_RDONLY, H5P_DEFAULT);
	ck_assert_int_ge(file, 0);
	check_wide(file, "2026-02-19/w", 0, WIDE_DAY1);
	check_wide(file, "2026-02-20/w", WIDE_DAY1, WIDE_DAY2);
	H5Fclose(file);
	nx = file_bytes(a, &x);
	ny = file_bytes(b, &y);
	ck_assert_int_eq(nx, ny);
	ck_assert_int_eq(memcmp(x, y, (size_t)nx), 0);
	free(x);
	free(y);
	unlink(a);
	unlink(b);
	rmdir(tmpdir);
}
END_TEST
#endif

static Suite *export_table_suite(void)
{
	Suite *s = suite_create("export_table");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_csv_says_what_it_holds_and_keeps_decode_order);
#ifdef WB_HDF5
	tcase_add_test(tc, test_hdf5_keyed_rows_symbol_by_symbol_with_their_index);
	tcase_add_test(tc, test_hdf5_keyed_segments_give_a_run_per_symbol_and_segment);
	tcase_add_test(tc, test_hdf5_chunks_read_back_through_the_standard_filters_and_repeat);
#endif
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(export_table_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
