/*
 * CPU lists in the kernel's text form ("0-3,8,10-11", as in isolcpus=,
 * /sys/devices/system/cpu/isolated, smp_affinity_list, --cpus options),
 * as a fixed bitmap so tools need no libc cpu_set_t size games.
 */
#ifndef WIREBOOK_TOOLS_CPU_LIST_H
#define WIREBOOK_TOOLS_CPU_LIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CPU_LIST_MAX 1024

struct cpu_list {
	uint64_t bits[CPU_LIST_MAX / 64];
};

/*
 * Parse "0-3,8" into *out (cleared first). Surrounding whitespace and a
 * trailing newline are accepted; an empty string or "(null)" (what sysfs
 * prints for an empty mask) is the empty list. Returns 0, or -1 on a
 * malformed list or a cpu >= CPU_LIST_MAX.
 */
int cpu_list_parse(const char *text, struct cpu_list *out);
/* Canonical text ("0-3,8"; "" when empty) into buf; returns buf. */
char *cpu_list_format(const struct cpu_list *l, char *buf, size_t n);

static inline void cpu_list_set(struct cpu_list *l, unsigned int cpu)
{
	if (cpu < CPU_LIST_MAX)
		l->bits[cpu / 64] |= 1ull << (cpu % 64);
}

static inline bool cpu_list_has(const struct cpu_list *l, unsigned int cpu)
{
	return cpu < CPU_LIST_MAX && (l->bits[cpu / 64] >> (cpu % 64)) & 1;
}

unsigned int cpu_list_count(const struct cpu_list *l);
/* Every cpu of a is in b. */
bool cpu_list_subset(const struct cpu_list *a, const struct cpu_list *b);
bool cpu_list_intersects(const struct cpu_list *a, const struct cpu_list *b);
/* out = a minus b (out may alias a). */
void cpu_list_minus(struct cpu_list *out, const struct cpu_list *a, const struct cpu_list *b);

#endif /* WIREBOOK_TOOLS_CPU_LIST_H */
