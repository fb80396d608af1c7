/*
 * Cboe PITCH session framing for GRP and Spin (lib/recovery/pitch_session.c):
 * golden byte vectors from the spec's worked Spin and GRP frames
 * (docs/specs/cboe-pitch-notes.md, "Sessions": BATS's mcastpitch_spin_useq.pcap and
 * mcastpitch_grp_useq.pcap; the spin capture's TCP payloads as they are,
 * from pcaps/pitch/), the decoder's refusals, and the spin lines of
 * recovery.conf (docs/specs/cboe-spin-notes.md).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "feed_harness.h"
#include "recovery/pitch_session.h"
#include "recovery/recovery.h"
#include "recovery_conf_harness.h"

static void assert_bytes(const uint8_t *got, size_t n, const char *hex)
{
	uint8_t want[256];
	size_t wn = harness_unhex(hex, want, sizeof(want));

	ck_assert_uint_eq(n, wn);
	for (size_t i = 0; i < n; i++)
		ck_assert_msg(got[i] == want[i], "byte %zu: got %02x, want %02x", i, got[i], want[i]);
}

/* ---- golden vectors ------------------------------------------------------- */

START_TEST(test_spin_image_request_and_finished_match_the_capture)
{
	uint8_t b[64];

	/* Image Available 312: "0e00 01 00 00000000 | 06 80 38010000". */
	assert_bytes(b, spin_seq_message(b, SPIN_IMAGE_AVAILABLE, 312),
		     "0e00" "01" "00" "00000000" "06" "80" "38010000");
	assert_bytes(b, spin_seq_message(b, SPIN_REQUEST, 312),
		     "0e00" "01" "00" "00000000" "06" "81" "38010000");
	assert_bytes(b, spin_seq_message(b, SPIN_FINISHED, 312),
		     "0e00" "01" "00" "00000000" "06" "83" "38010000");
}
END_TEST

START_TEST(test_spin_response_matches_the_capture_and_carries_the_order_count)
{
	uint8_t b[64];

	/* "1300 01 00 00000000 | 0b 82 38010000 00000000 41": 0 orders, accepted. */
	assert_bytes(b, spin_response(b, 312, 0, 'A'),
		     "1300" "01" "00" "00000000" "0b" "82" "38010000" "00000000" "41");
	assert_bytes(b, spin_response(b, 0x01020304, 70000, 'O'),
		     "1300" "01" "00" "00000000" "0b" "82" "04030201" "70110100" "4f");
}
END_TEST

START_TEST(test_login_is_grp_s_sub_id_user_filler_and_password_space_padded)
{
	uint8_t b[64];

	/* The GRP capture's login with Sub-ID 0001 (ours) for 0006:
	 * "1e00 01 00 00000000 | 16 01 30303036 4d4b4441 2020 20202020202020202020". */
	assert_bytes(b, pitch_session_login(b, "MKDA", ""),
		     "1e00" "01" "00" "00000000" "16" "01" "30303031" "4d4b4441" "2020"
		     "20202020202020202020");
	assert_bytes(b, pitch_session_login(b, "WB", "secret"),
		     "1e00" "01" "00" "00000000" "16" "01" "30303031" "57422020" "2020"
		     "73656372657420202020");
	assert_bytes(b, pitch_session_heartbeat(b), "0800" "00" "00" "00000000");
}
END_TEST

START_TEST(test_decoder_splits_the_capture_s_last_frame_into_time_and_spin_finished)
{
	uint8_t f[64];
	size_t n = harness_unhex("1400" "02" "00" "00000000" "06" "20" "b2260100" "06" "83" "38010000",
				 f, sizeof(f));
	size_t off = 0, mlen;
	const uint8_t *m;
	uint32_t seq;

	ck_assert_int_eq(pitch_session_next(f, n - 1), 0);	/* not all there yet */
	ck_assert_int_eq(pitch_session_next(f, 1), 0);
	ck_assert_int_eq(pitch_session_next(f, n), 20);
	ck_assert_int_eq(pitch_session_message_at(f, n, &off, &m, &mlen), 1);
	ck_assert_uint_eq(mlen, 6);
	ck_assert_uint_eq(m[1], 0x20);
	ck_assert_int_eq(spin_seq_of(m, mlen, SPIN_FINISHED, &seq), -1);	/* a Time */
	ck_assert_int_eq(pitch_session_message_at(f, n, &off, &m, &mlen), 1);
	ck_assert_int_eq(spin_seq_of(m, mlen, SPIN_FINISHED, &seq), 0);
	ck_assert_uint_eq(seq, 312);
	ck_assert_int_eq(pitch_session_message_at(f, n, &off, &m, &mlen), 0);
}
END_TEST

START_TEST(test_decoder_refuses_short_lengths_and_messages_past_the_frame)
{
	uint8_t f[64];
	size_t off = 0, mlen, n;
	const uint8_t *m;
	uint32_t seq, count;
	char status;

	n = harness_unhex("0400" "01" "00", f, sizeof(f));
	ck_assert_int_eq(pitch_session_next(f, n), -1);	/* below the header */
	n = harness_unhex("0e00" "01" "00" "00000000" "07" "80" "38010000", f, sizeof(f));
	ck_assert_int_eq(pitch_session_message_at(f, n, &off, &m, &mlen), -1);
	off = 0;
	n = harness_unhex("0a00" "01" "00" "00000000" "01" "80", f, sizeof(f));
	ck_assert_int_eq(pitch_session_message_at(f, n, &off, &m, &mlen), -1);
	n = harness_unhex("0b" "82" "38010000" "05000000" "53", f, sizeof(f));
	ck_assert_int_eq(spin_response_of(f, n, &seq, &count, &status), 0);
	ck_assert_uint_eq(seq, 312);
	ck_assert_uint_eq(count, 5);
	ck_assert_int_eq(status, 'S');
	ck_assert_int_eq(spin_response_of(f, n - 1, &seq, &count, &status), -1);
	ck_assert_int_eq(spin_seq_of(f, n, SPIN_IMAGE_AVAILABLE, &seq), -1);
}
END_TEST

/*
 * The TCP payloads of BATS's pcaps/pitch/bats-mcastpitch_spin_useq.pcap,
 * as they are: the client's Login and heartbeat, the server's answers.
 */
START_TEST(test_the_bats_spin_capture_s_login_and_heartbeat_are_ours_but_the_sub_id)
{
	uint8_t b[64], want[64];
	size_t n = pitch_session_login(b, "BATS", "s1bats");

	ck_assert_uint_eq(harness_unhex("1e0001000000000016013030323342415453202073316261747320202020",
					want, sizeof(want)), n);
	memcpy(want + 10, "0001", 4);	/* its Session Sub-ID is 0023 */
	ck_assert_int_eq(memcmp(b, want, n), 0);
	assert_bytes(b, pitch_session_heartbeat(b), "0800000000000000");
}
END_TEST

START_TEST(test_the_bats_spin_capture_s_server_stream_decodes_in_order)
{
	/* Login Response A, Image 312, Response A (0 orders), Response S with
	 * sequence 0 (a second request), then Time and Spin Finished 312. */
	uint8_t s[256];
	size_t n = harness_unhex("0b00010000000000030241" "0e00010000000000068038010000"
				 "13000100000000000b82380100000000000041"
				 "13000100000000000b82000000000000000053"
				 "14000200000000000620b2260100068338010000", s, sizeof(s));
	static const uint8_t types[] = { 0x02, 0x80, 0x82, 0x82, 0x20, 0x83 };
	size_t at = 0, k = 0;
	long flen;

	while ((flen = pitch_session_next(s + at, n - at)) > 0) {
		size_t off = 0, mlen;
		const uint8_t *m;

		while (pitch_session_message_at(s + at, (size_t)flen, &off, &m, &mlen) == 1) {
			uint32_t seq, count;
			char status;

			ck_assert_uint_lt(k, sizeof(types));
			ck_assert_uint_eq(m[1], types[k]);
			if (k == 1 || k == 5) {
				ck_assert_int_eq(spin_seq_of(m, mlen, types[k], &seq), 0);
				ck_assert_uint_eq(seq, 312);
			}
			if (k == 2 || k == 3) {
				ck_assert_int_eq(spin_response_of(m, mlen, &seq, &count, &status), 0);
				ck_assert_uint_eq(seq, k == 2 ? 312 : 0);
				ck_assert_uint_eq(count, 0);
				ck_assert_int_eq(status, k == 2 ? 'A' : 'S');
			}
			k++;
		}
		at += (size_t)flen;
	}
	ck_assert_int_eq(flen, 0);
	ck_assert_uint_eq(at, n);
	ck_assert_uint_eq(k, sizeof(types));
}
END_TEST

/* ---- recovery.conf -------------------------------------------------------- */

START_TEST(test_conf_takes_a_spin_line_per_unit_beside_grp_with_the_snapshot_policy)
{
	struct recovery_conf_entry e[RECOVERY_MAX_SERVICES];
	char err[256] = "";

	ck_assert_int_eq(conf_of("bzx grp 127.0.0.1:9000 gap=127.0.0.1:9001\n"
				 "bzx spin 127.0.0.1:9002 unit=1 user=WB01 password=pw max-gap=50\n"
				 "bzx spin 127.0.0.1:9003 unit=2\n", e, err, sizeof(err)), 3);
	ck_assert_str_eq(e[1].service->name, "spin");
	ck_assert_int_eq(e[1].unit, 1);
	ck_assert_int_eq(e[2].unit, 2);
	ck_assert_int_eq(e[0].unit, -1);
	ck_assert_str_eq(e[1].user, "WB01");
	ck_assert_str_eq(e[1].password, "pw");
	ck_assert_uint_eq(e[1].max_gap, 50);
	ck_assert_uint_eq(e[2].max_gap, RECOVERY_DEFAULT_MAX_GAP);
	ck_assert_uint_eq(e[2].max_age_ms, RECOVERY_DEFAULT_MAX_AGE_MS);
	ck_assert_uint_eq(e[2].timeout_ms, RECOVERY_SNAPSHOT_TIMEOUT_MS);
	ck_assert_uint_eq(e[2].retries, RECOVERY_SNAPSHOT_RETRIES);
}
END_TEST

START_TEST(test_conf_refuses_spin_without_a_unit_twice_for_one_unit_and_misplaced_keys)
{
	assert_conf_refused("bzx spin 127.0.0.1:9002\n", ":1: a spin service needs unit=N");
	assert_conf_refused("bzx spin 127.0.0.1:9002 unit=1\nbzx spin 127.0.0.1:9003 unit=1\n",
			    ":2: a second snapshot service");
	assert_conf_refused("bzx spin 127.0.0.1:9002 unit=256\n", "unit= wants a PITCH unit");
	assert_conf_refused("bzx grp 127.0.0.1:9000 gap=127.0.0.1:9001 unit=1\n",
			    "only a spin service takes unit=");
	assert_conf_refused("bzx spin 127.0.0.1:9002 unit=1 user=WB0001\n", "at most 4");
	assert_conf_refused("bzx spin 127.0.0.1:9002 unit=1 gap=127.0.0.1:5\n",
			    "only a grp service takes gap=");
}
END_TEST

static Suite *pitch_session_suite(void)
{
	Suite *s = suite_create("pitch_session");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_spin_image_request_and_finished_match_the_capture);
	tcase_add_test(tc, test_spin_response_matches_the_capture_and_carries_the_order_count);
	tcase_add_test(tc, test_login_is_grp_s_sub_id_user_filler_and_password_space_padded);
	tcase_add_test(tc, test_decoder_splits_the_capture_s_last_frame_into_time_and_spin_finished);
	tcase_add_test(tc, test_decoder_refuses_short_lengths_and_messages_past_the_frame);
	tcase_add_test(tc, test_the_bats_spin_capture_s_login_and_heartbeat_are_ours_but_the_sub_id);
	tcase_add_test(tc, test_the_bats_spin_capture_s_server_stream_decodes_in_order);
	tcase_add_test(tc, test_conf_takes_a_spin_line_per_unit_beside_grp_with_the_snapshot_policy);
	tcase_add_test(tc, test_conf_refuses_spin_without_a_unit_twice_for_one_unit_and_misplaced_keys);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(pitch_session_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
