/*
 * recovery.conf text through the real reader (recovery_conf_read takes a
 * path): for the tests of each recovery protocol's conf lines.
 */
#ifndef WIREBOOK_TEST_RECOVERY_CONF_HARNESS_H
#define WIREBOOK_TEST_RECOVERY_CONF_HARNESS_H

#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "recovery/recovery.h"

/* Entries read from text (at most RECOVERY_MAX_SERVICES), or < 0 with err. */
static inline int conf_of(const char *text, struct recovery_conf_entry *out, char *err, size_t errlen)
{
	char path[] = "/tmp/wb-test-recovery-conf-XXXXXX";
	int fd = mkstemp(path), n;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	n = recovery_conf_read(path, out, RECOVERY_MAX_SERVICES, err, errlen);
	unlink(path);
	return n;
}

/* text is refused, with an error that contains want. */
static inline void assert_conf_refused(const char *text, const char *want)
{
	struct recovery_conf_entry e[RECOVERY_MAX_SERVICES];
	char err[256] = "";

	ck_assert_int_lt(conf_of(text, e, err, sizeof(err)), 0);
	ck_assert_msg(strstr(err, want), "'%s': error '%s' lacks '%s'", text, err, want);
}

#endif /* WIREBOOK_TEST_RECOVERY_CONF_HARNESS_H */
