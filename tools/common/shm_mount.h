/*
 * /dev/shm's mount as /proc/mounts shows it: the book is a POSIX shared
 * memory object there, and its pages are huge only by that tmpfs mount's
 * own huge= option (transparent_hugepage/shmem_enabled covers SysV shm and
 * memfd, not /dev/shm). wb-tune checks and fixes it; wirebookd says so at
 * start when the book cannot have huge pages.
 */
#ifndef WIREBOOK_TOOLS_SHM_MOUNT_H
#define WIREBOOK_TOOLS_SHM_MOUNT_H

#include <stdbool.h>
#include <stddef.h>

/* The fields of a /proc/mounts line (names with spaces are escaped as
 * \040, so whitespace splits the fields). */
struct mount_line {
	const char *field[4];	/* device, mount point, type, options */
	int len[4];
};

/* Split a /proc/mounts line; -1 for a line with fewer than four fields. */
int mount_line_fields(const char *line, struct mount_line *m);

/*
 * /dev/shm's mount in ROOT/proc/mounts (root "" for the real one): the
 * last line for it, as a later mount on the same point shadows the
 * earlier ones. Its type and options are copied out; returns the line's
 * index, -1 when there is no /dev/shm line, -2 when the file cannot be read.
 */
int shm_mount_find(const char *root, char *type, size_t type_len, char *opts, size_t opts_len);

/* The value of option "name=" in a comma-separated option list, or NULL. */
const char *mount_option(const char *opts, const char *name, char *out, size_t n);

/* Whether such a mount gives MADV_HUGEPAGE memory huge pages: tmpfs with
 * huge=advise, always or within_size. */
bool shm_mount_allows_huge(const char *type, const char *opts);

#endif /* WIREBOOK_TOOLS_SHM_MOUNT_H */
