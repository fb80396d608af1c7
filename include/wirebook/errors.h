/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * The reader API's error codes (libwirebook) and their text. Included by
 * book.h and events.h.
 */
#ifndef WIREBOOK_ERRORS_H
#define WIREBOOK_ERRORS_H

#include <errno.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Errors, one convention: every call returns 0 (or a count, an index) on
 * success and a negative WB_E* code on failure. The codes are negated
 * errno values, as in liburing and the kernel, so they never clash with
 * the -errno the rest of wirebook returns, and wb_strerror() describes
 * any -errno too. Compare with the names, not the numbers.
 */
enum wb_error {
	WB_OK = 0,
	WB_ENOSHM = -ENOENT,	/* no book of that name (yet): is wirebookd running? */
	WB_EACCES = -EACCES,	/* permission denied opening the book */
	WB_EBADMAGIC = -EBADMSG, /* the object is not a wirebook book (or truncated) */
	WB_EABI = -EPROTO,	/* built against another WB_BOOK_ABI_VERSION */
	WB_ESTALE = -ESTALE,	/* the builder exited, or restarted and has not got this symbol
				 * (yet): retry later (calls reattach by themselves) */
	WB_ENOSYM = -ENODATA,	/* symbol not in the book */
	WB_EINVAL = -EINVAL,	/* bad argument (NULL, index or venue out of range) */
	WB_EBUSY = -EAGAIN,	/* the record stayed mid-update too long; retry */
	WB_ESYS = -EIO,		/* other OS error (shm_open, fstat, mmap); errno tells which */
	WB_ENODEV = -ENODEV,	/* events.h: no wirebook device (is the module loaded?) */
};

/* Text of a wb_error, or of any -errno. */
const char *wb_strerror(int err);

#ifdef __cplusplus
}
#endif

#endif /* WIREBOOK_ERRORS_H */
