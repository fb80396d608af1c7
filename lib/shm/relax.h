/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/* One turn of a bounded spin, for libwirebook's readers and the builder alike. */
#ifndef WIREBOOK_SHM_RELAX_H
#define WIREBOOK_SHM_RELAX_H

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

#endif /* WIREBOOK_SHM_RELAX_H */
